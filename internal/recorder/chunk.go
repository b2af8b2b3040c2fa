// Package recorder records a session's page as a CDP screencast: JPEG frames
// with their timestamps, at most 800 px wide and 10 a second, filed in
// chunks beside the session's evidence. No frame is kept while a credential
// is on the page; a gap with its reason is filed instead. Export builds a
// WebM with ffmpeg and an index from recording time to video time.
package recorder

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
)

// Limits of what a chunk holds, so a damaged or hostile object cannot make
// a reader allocate without bound.
const (
	// MaxFrameBytes bounds one JPEG frame (an 800 px frame is ~30-150 KiB).
	MaxFrameBytes = 4 << 20
	// MaxChunkFrames bounds the frames of one chunk (10 s at 10 frames/s
	// is 100; a chunk is flushed long before this).
	MaxChunkFrames = 2000
	// MaxHeaderBytes bounds a chunk's JSON header.
	MaxHeaderBytes = 1 << 20
	// MaxChunkBytes bounds a whole chunk object.
	MaxChunkBytes = 64 << 20
)

// magic opens every chunk: the format's name and version.
const magic = "DBREC1\n"

// Gap reasons.
const (
	// GapCredential: a password or one-time-code field held a value, or a
	// visible cross-origin frame could not be checked.
	GapCredential = "credential"
	// GapCrossOriginFrame: a visible cross-origin frame could not be
	// checked for credentials.
	GapCrossOriginFrame = "cross_origin_frame"
	// GapSecretTyped: a {{secret:NAME}} was being typed, or its value was
	// still on the page.
	GapSecretTyped = "secret_typed"
	// GapUncheckable: the page could not be checked (navigating, or the
	// check failed), so no frame was kept.
	GapUncheckable = "uncheckable"
	// GapReleased: the session was released (between its recording and the
	// next one of the workflow).
	GapReleased = "released"
	// GapLostWorker: the recording stopped without being closed: its
	// worker was lost.
	GapLostWorker = "lost_worker"
	// GapWorkerStopped: the worker stopped and closed the recording.
	GapWorkerStopped = "worker_stopped"
)

// Frame is one kept screencast frame.
type Frame struct {
	// T is when the browser drew the frame, unix milliseconds.
	T      int64 `json:"t"`
	Width  int   `json:"w"`
	Height int   `json:"h"`
	// Len is the JPEG's length in the chunk's body.
	Len  int    `json:"len"`
	JPEG []byte `json:"-"`
}

// Gap is a stretch with no frames, and why.
type Gap struct {
	From   int64  `json:"from"` // unix ms
	To     int64  `json:"to"`   // unix ms
	Reason string `json:"reason"`
}

// Header is a chunk's JSON header.
type Header struct {
	// Recording names the recording (one per session per worker that
	// recorded it): it sorts by start time.
	Recording  string `json:"recording"`
	SessionTag string `json:"session_tag"`
	Seq        int    `json:"seq"`
	// Start is when the recording started (unix ms); every chunk repeats it.
	Start int64 `json:"start"`
	// From and To bound what this chunk covers (unix ms).
	From   int64   `json:"from"`
	To     int64   `json:"to"`
	Frames []Frame `json:"frames"`
	Gaps   []Gap   `json:"gaps,omitempty"`
	// End is set on the recording's last chunk: why it ended (released,
	// worker_stopped). A recording whose last chunk has none lost its worker.
	End string `json:"end,omitempty"`
}

// Chunk is a header with its frames' bytes.
type Chunk struct {
	Header
}

// ErrBadChunk is matched by every Parse error.
var ErrBadChunk = errors.New("recording chunk is malformed")

func bad(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrBadChunk, fmt.Sprintf(format, a...))
}

// Encode writes c as magic, a 4-byte big-endian header length, the JSON
// header, then the frames' JPEGs back to back.
func Encode(c *Chunk) ([]byte, error) {
	for i := range c.Frames {
		c.Frames[i].Len = len(c.Frames[i].JPEG)
	}
	h, err := json.Marshal(c.Header)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(magic)
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(h)))
	b.Write(n[:])
	b.Write(h)
	for _, f := range c.Frames {
		b.Write(f.JPEG)
	}
	return b.Bytes(), nil
}

// Parse reads a chunk Encode wrote, checking every length and time: frames
// are JPEGs, in time order, inside the chunk's span; gaps are well formed.
func Parse(b []byte) (*Chunk, error) {
	if len(b) > MaxChunkBytes {
		return nil, bad("%d bytes, over the %d limit", len(b), MaxChunkBytes)
	}
	if !bytes.HasPrefix(b, []byte(magic)) {
		return nil, bad("it does not start with %q", magic[:len(magic)-1])
	}
	b = b[len(magic):]
	if len(b) < 4 {
		return nil, bad("truncated header length")
	}
	hl := binary.BigEndian.Uint32(b)
	b = b[4:]
	if hl > MaxHeaderBytes || int(hl) > len(b) {
		return nil, bad("header length %d out of range", hl)
	}
	var c Chunk
	dec := json.NewDecoder(bytes.NewReader(b[:hl]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c.Header); err != nil {
		return nil, bad("header: %v", err)
	}
	if dec.More() {
		return nil, bad("header: trailing data")
	}
	body := b[hl:]
	h := &c.Header
	switch {
	case h.Recording == "" || len(h.Recording) > 100:
		return nil, bad("recording id missing or too long")
	case h.Seq < 0:
		return nil, bad("negative seq")
	case h.From > h.To || h.Start > h.From:
		return nil, bad("span %d..%d (start %d) is not ordered", h.From, h.To, h.Start)
	case len(h.Frames) > MaxChunkFrames:
		return nil, bad("%d frames, over the %d limit", len(h.Frames), MaxChunkFrames)
	}
	last := h.From
	for i := range h.Frames {
		f := &h.Frames[i]
		if f.Len <= 0 || f.Len > MaxFrameBytes || f.Len > len(body) {
			return nil, bad("frame %d: length %d out of range", i, f.Len)
		}
		if f.T < last || f.T > h.To {
			return nil, bad("frame %d: time %d outside %d..%d or out of order", i, f.T, last, h.To)
		}
		if f.Width <= 0 || f.Height <= 0 || f.Width > 8192 || f.Height > 8192 {
			return nil, bad("frame %d: size %dx%d out of range", i, f.Width, f.Height)
		}
		last = f.T
		f.JPEG, body = body[:f.Len:f.Len], body[f.Len:]
		if len(f.JPEG) < 2 || f.JPEG[0] != 0xFF || f.JPEG[1] != 0xD8 {
			return nil, bad("frame %d is not a JPEG", i)
		}
	}
	if len(body) != 0 {
		return nil, bad("%d bytes after the last frame", len(body))
	}
	for i, g := range h.Gaps {
		if g.From > g.To || g.From < h.From || g.To > h.To || g.Reason == "" || len(g.Reason) > 40 {
			return nil, bad("gap %d: %d..%d (%q) is not inside %d..%d", i, g.From, g.To, g.Reason, h.From, h.To)
		}
	}
	if len(h.End) > 40 {
		return nil, bad("end reason too long")
	}
	return &c, nil
}
