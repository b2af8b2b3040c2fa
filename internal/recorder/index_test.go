package recorder

import (
	"testing"
)

// checkIndex holds what every index must: segments in order, back to back
// in video time, whole video frames, no frame inside a gap.
func checkIndex(t testing.TB, x *Index, chunks []*Chunk) {
	t.Helper()
	var video int64
	for i, s := range x.Segments {
		if s.Video != video || s.VideoDur <= 0 || s.VideoDur%frameMS != 0 || s.Dur < 0 {
			t.Fatalf("segment %d %+v: video %d, want %d and whole frames", i, s, s.Video, video)
		}
		if i > 0 && s.At < x.Segments[i-1].At {
			t.Fatalf("segment %d goes back in time: %+v", i, s)
		}
		video += s.VideoDur
		if s.Kind == "frame" {
			for _, c := range chunks {
				for _, g := range c.Gaps {
					if s.FrameT >= g.From && s.FrameT <= g.To {
						t.Fatalf("frame at %d shown inside gap %+v", s.FrameT, g)
					}
				}
			}
		}
	}
	if video != x.VideoMS || int64(x.Frames)*frameMS != x.VideoMS {
		t.Fatalf("video %d ms, index says %d ms and %d frames", video, x.VideoMS, x.Frames)
	}
}

func TestBuildIndex(t *testing.T) {
	j := testJPEG(t, 16, 8)
	a0 := &Chunk{Header: Header{Recording: "r1", SessionTag: "wf-1", Seq: 0, Start: 1000, From: 1000, To: 3000,
		Frames: []Frame{{T: 1000, Width: 16, Height: 8, JPEG: j}, {T: 1500, Width: 16, Height: 8, JPEG: j}},
		Gaps:   []Gap{{From: 2000, To: 3000, Reason: GapCredential}}}}
	// The gap goes on in the next chunk, then the session is released.
	a1 := &Chunk{Header: Header{Recording: "r1", SessionTag: "wf-1", Seq: 1, Start: 1000, From: 3000, To: 20000,
		Frames: []Frame{{T: 4000, Width: 16, Height: 8, JPEG: j}},
		Gaps:   []Gap{{From: 3000, To: 3500, Reason: GapCredential}}, End: GapReleased}}
	// A second session: its worker was lost (no End).
	b0 := &Chunk{Header: Header{Recording: "r2", SessionTag: "wf-2", Seq: 0, Start: 30000, From: 30000, To: 31000,
		Frames: []Frame{{T: 30100, Width: 16, Height: 8, JPEG: j}}}}
	chunks := []*Chunk{b0, a1, a0, a0} // any order, a duplicate
	x := Build("wf", chunks)
	checkIndex(t, x, chunks)
	if len(x.Recordings) != 2 || x.Recordings[0].Ended != GapReleased || x.Recordings[1].Ended != GapLostWorker || x.Recordings[1].Start != 29000 {
		t.Fatalf("recordings %+v", x.Recordings)
	}
	var kinds []string
	for _, s := range x.Segments {
		kinds = append(kinds, s.Kind+":"+s.Reason)
	}
	want := []string{"frame:", "frame:", "gap:credential", "frame:", "gap:released", "frame:"}
	if len(kinds) != len(want) {
		t.Fatalf("segments %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("segments %v, want %v", kinds, want)
		}
	}
	// The merged gap 2000..3500 is one slate; the 16 s idle frame at 4000
	// is held for MaxHold only.
	if g := x.Segments[2]; g.At != 1000 || g.Dur != 2000 || g.VideoDur != 2000 {
		t.Fatalf("gap segment %+v", g)
	}
	if f := x.Segments[3]; f.VideoDur != MaxHold {
		t.Fatalf("idle frame held %d ms of video, want %d", f.VideoDur, MaxHold)
	}
	// Recording time to video time: monotone, inside the video.
	prev := int64(-1)
	for t0 := int64(0); t0 < 32000; t0 += 250 {
		v := x.VideoAt(t0)
		if v < prev || v > x.VideoMS {
			t.Fatalf("VideoAt(%d) = %d after %d (video %d ms)", t0, v, prev, x.VideoMS)
		}
		prev = v
	}
	if v, ok := x.VideoAtMark("r2", 100); !ok || v != x.Segments[5].Video {
		t.Fatalf("mark r2+100 at video %d (%v), want %d", v, ok, x.Segments[5].Video)
	}
	if _, ok := x.VideoAtMark("nope", 0); ok {
		t.Fatal("an unknown recording has a video time")
	}
}

func TestBuildEmpty(t *testing.T) {
	x := Build("wf", nil)
	if len(x.Segments) != 0 || x.VideoMS != 0 {
		t.Fatalf("%+v", x)
	}
}
