package recorder

import (
	"sort"
)

// Video timing: the WebM runs at a constant VideoFPS, each kept frame shown
// until the next (at most MaxHold), each gap as a slate (SlateMin to
// MaxHold), so a long idle stretch or a long gap does not make a long video.
// The index says where each moment of the recording went.
const (
	VideoFPS     = 10
	frameMS      = 1000 / VideoFPS
	MaxHold      = 3000 // ms
	SlateMin     = 500  // ms
	IndexVersion = 1
)

// Index maps recording time to video time. Recording time is milliseconds
// since the workflow's first recording started (Start, unix ms); a receipt's
// mark (recording id, offset) is Recordings[i].Start-Start+offset.
type Index struct {
	Version    int         `json:"version"`
	WorkflowID string      `json:"workflow_id"`
	Start      int64       `json:"start_unix_ms"`
	VideoMS    int64       `json:"video_ms"`
	Frames     int         `json:"video_frames"`
	FPS        int         `json:"fps"`
	Recordings []Recording `json:"recordings"`
	Segments   []Segment   `json:"segments"`
}

// Recording is one recording of the workflow (a session on one worker).
type Recording struct {
	ID         string `json:"id"`
	SessionTag string `json:"session_tag"`
	Start      int64  `json:"start_ms"` // recording time
	End        int64  `json:"end_ms"`
	// Ended says why it ended: released, worker_stopped, or lost_worker
	// when its last chunk never came.
	Ended string `json:"ended"`
}

// Segment is a stretch of recording time shown as one picture: a kept
// frame, or the slate of a gap.
type Segment struct {
	Kind      string `json:"kind"` // "frame" or "gap"
	Recording string `json:"recording,omitempty"`
	At        int64  `json:"at_ms"`  // recording time
	Dur       int64  `json:"dur_ms"` // recording time
	Video     int64  `json:"video_ms"`
	VideoDur  int64  `json:"video_dur_ms"`
	Reason    string `json:"reason,omitempty"`
	// FrameT is the kept frame's own timestamp (unix ms).
	FrameT int64 `json:"frame_unix_ms,omitempty"`
	frame  *Frame
}

// VideoAt is where recording time t (ms) falls in the video.
func (x *Index) VideoAt(t int64) int64 {
	i := sort.Search(len(x.Segments), func(i int) bool { return x.Segments[i].At+x.Segments[i].Dur > t })
	if i == len(x.Segments) {
		return x.VideoMS
	}
	s := x.Segments[i]
	if t <= s.At || s.Dur == 0 {
		return s.Video
	}
	return s.Video + (t-s.At)*s.VideoDur/s.Dur
}

// VideoAtMark is where a receipt's mark falls in the video; false when the
// index holds no such recording.
func (x *Index) VideoAtMark(recording string, offsetMS int64) (int64, bool) {
	for _, r := range x.Recordings {
		if r.ID == recording {
			return x.VideoAt(r.Start + offsetMS), true
		}
	}
	return 0, false
}

// Build orders the chunks of a workflow's recordings and lays them out as
// video. Duplicate chunks (same recording and seq) count once. A frame that
// falls inside a gap is dropped, whatever wrote it.
func Build(workflowID string, chunks []*Chunk) *Index {
	byRec := map[string][]*Chunk{}
	for _, c := range chunks {
		byRec[c.Recording] = append(byRec[c.Recording], c)
	}
	ids := make([]string, 0, len(byRec))
	for id := range byRec {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		a, b := byRec[ids[i]][0].Start, byRec[ids[j]][0].Start
		if a != b {
			return a < b
		}
		return ids[i] < ids[j]
	})
	x := &Index{Version: IndexVersion, WorkflowID: workflowID, FPS: VideoFPS}
	if len(ids) == 0 {
		return x
	}
	x.Start = byRec[ids[0]][0].Start
	type item struct {
		t   int64
		end int64 // gaps
		gap string
		f   *Frame
	}
	var items []item
	var prevEnd int64 = -1
	prevEnded := ""
	for _, id := range ids {
		cs := byRec[id]
		sort.Slice(cs, func(i, j int) bool { return cs[i].Seq < cs[j].Seq })
		rec := Recording{ID: id, SessionTag: cs[0].SessionTag, Start: cs[0].Start - x.Start, Ended: GapLostWorker}
		var gaps []Gap
		var frames []*Frame
		seen := map[int]bool{}
		end := cs[0].Start
		for _, c := range cs {
			if seen[c.Seq] {
				continue
			}
			seen[c.Seq] = true
			gaps = append(gaps, c.Gaps...)
			for i := range c.Frames {
				frames = append(frames, &c.Frames[i])
			}
			end = max(end, c.To)
			if c.End != "" {
				rec.Ended = c.End
			}
		}
		rec.End = end - x.Start
		x.Recordings = append(x.Recordings, rec)
		gaps = mergeGaps(gaps)
		// Between recordings: the previous one's end is the gap's reason.
		if prevEnd >= 0 && cs[0].Start > prevEnd {
			items = append(items, item{t: prevEnd, end: cs[0].Start, gap: prevEnded})
		}
		for _, g := range gaps {
			items = append(items, item{t: g.From, end: g.To, gap: g.Reason})
		}
		for _, f := range frames {
			if inGap(gaps, f.T) {
				continue
			}
			items = append(items, item{t: f.T, f: f})
		}
		prevEnd, prevEnded = end, rec.Ended
		items = append(items, item{t: end, end: end, gap: "end"}) // marks the recording's end
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].t < items[j].t })
	recOf := func(t int64) string {
		id := ""
		for _, r := range x.Recordings {
			if r.Start+x.Start <= t {
				id = r.ID
			}
		}
		return id
	}
	var video int64
	for i, it := range items {
		if it.gap == "end" {
			continue
		}
		next := it.t
		for j := i + 1; j < len(items); j++ {
			if items[j].t > it.t || items[j].gap != "end" {
				next = items[j].t
				break
			}
		}
		if i == len(items)-1 {
			next = it.t
		}
		s := Segment{Recording: recOf(it.t), At: it.t - x.Start}
		if it.f != nil {
			s.Kind, s.FrameT, s.frame = "frame", it.f.T, it.f
			s.Dur = max(next-it.t, 0)
			s.VideoDur = quantize(min(s.Dur, MaxHold), frameMS)
		} else {
			// A slate until the gap's end or the next thing shown, if later.
			s.Kind, s.Reason = "gap", it.gap
			s.Dur = max(max(it.end, next)-it.t, 0)
			s.VideoDur = quantize(min(max(s.Dur, SlateMin), MaxHold), frameMS)
		}
		s.Video = video
		video += s.VideoDur
		x.Segments = append(x.Segments, s)
	}
	// Segments may overlap when a gap outlasts the next item; recording time
	// is then attributed to the first.
	for i := 1; i < len(x.Segments); i++ {
		p := &x.Segments[i-1]
		if p.At+p.Dur > x.Segments[i].At {
			p.Dur = x.Segments[i].At - p.At
		}
	}
	x.VideoMS = video
	x.Frames = int(video / frameMS)
	return x
}

// quantize rounds ms to whole video frames, at least one.
func quantize(ms, step int64) int64 {
	n := (ms + step/2) / step
	if n < 1 {
		n = 1
	}
	return n * step
}

func inGap(gaps []Gap, t int64) bool {
	for _, g := range gaps {
		if t >= g.From && t <= g.To {
			return true
		}
	}
	return false
}

// mergeGaps sorts gaps and joins those that touch or overlap (a gap cut at
// a chunk boundary goes on in the next chunk).
func mergeGaps(gaps []Gap) []Gap {
	sort.Slice(gaps, func(i, j int) bool { return gaps[i].From < gaps[j].From })
	var out []Gap
	for _, g := range gaps {
		if n := len(out); n > 0 && g.From <= out[n-1].To {
			out[n-1].To = max(out[n-1].To, g.To)
			continue
		}
		out = append(out, g)
	}
	return out
}
