package recorder

import (
	"bytes"
	"errors"
	"image"
	"image/jpeg"
	"testing"
)

func testJPEG(t testing.TB, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, image.NewGray(image.Rect(0, 0, w, h)), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func testChunk(t testing.TB) *Chunk {
	j := testJPEG(t, 16, 8)
	return &Chunk{Header: Header{Recording: "r1", SessionTag: "wf-1", Seq: 0, Start: 1000, From: 1000, To: 5000,
		Frames: []Frame{{T: 1100, Width: 16, Height: 8, JPEG: j}, {T: 1200, Width: 16, Height: 8, JPEG: j}, {T: 4000, Width: 16, Height: 8, JPEG: j}},
		Gaps:   []Gap{{From: 1300, To: 3000, Reason: GapCredential}}}}
}

func TestChunkRoundTrip(t *testing.T) {
	c := testChunk(t)
	b, err := Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Frames) != 3 || !bytes.Equal(got.Frames[2].JPEG, c.Frames[2].JPEG) || got.Gaps[0] != c.Gaps[0] || got.Recording != "r1" {
		t.Fatalf("round trip: %+v", got.Header)
	}
}

func TestParseRefuses(t *testing.T) {
	good, err := Encode(testChunk(t))
	if err != nil {
		t.Fatal(err)
	}
	mutate := func(f func(c *Chunk)) []byte {
		c := testChunk(t)
		f(c)
		b, err := Encode(c)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for name, b := range map[string][]byte{
		"empty":               nil,
		"no magic":            append([]byte("XXXXXX\n"), good[7:]...),
		"truncated":           good[:len(good)-10],
		"trailing bytes":      append(append([]byte(nil), good...), 1, 2, 3),
		"frames out of order": mutate(func(c *Chunk) { c.Frames[0].T, c.Frames[1].T = 1200, 1100 }),
		"frame outside span":  mutate(func(c *Chunk) { c.Frames[2].T = 9000 }),
		"not a JPEG":          mutate(func(c *Chunk) { c.Frames[0].JPEG = []byte("hello") }),
		"gap outside span":    mutate(func(c *Chunk) { c.Gaps[0].To = 9000 }),
		"gap without reason":  mutate(func(c *Chunk) { c.Gaps[0].Reason = "" }),
		"no recording":        mutate(func(c *Chunk) { c.Recording = "" }),
		"huge frame size":     mutate(func(c *Chunk) { c.Frames[0].Width = 1 << 20 }),
	} {
		if _, err := Parse(b); !errors.Is(err, ErrBadChunk) {
			t.Errorf("%s: Parse gave %v, want ErrBadChunk", name, err)
		}
	}
}

func FuzzParseChunk(f *testing.F) {
	good, err := Encode(testChunk(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(magic + "\x00\x00\x00\x02{}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Parse(b)
		if err != nil {
			if !errors.Is(err, ErrBadChunk) {
				t.Fatalf("error %v is not ErrBadChunk", err)
			}
			return
		}
		// What parses encodes back to the same bytes' meaning, and the
		// index built from it never shows a frame inside a gap.
		again, err := Encode(c)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(again); err != nil {
			t.Fatalf("re-encoded chunk does not parse: %v", err)
		}
		x := Build("wf", []*Chunk{c})
		checkIndex(t, x, []*Chunk{c})
	})
}
