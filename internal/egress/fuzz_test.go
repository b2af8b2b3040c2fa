package egress

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/internal/redact"
)

// FuzzFrames: whatever bytes a page sends on a ws:// WebSocket, the frame
// reader never panics, and no frame it passes on carries the typed secret
// (in a spelling the matcher knows) while the secret is not bound to the
// WebSocket's origin.
func FuzzFrames(f *testing.F) {
	f.Add([]byte(nil), "hunter2-fuzz-secret")
	f.Add(frame(true, 1, []byte("hello"), false), "hunter2-fuzz-secret")
	f.Add(append(frame(false, 1, []byte("pw=hunter2-f"), false), frame(true, 0, []byte("uzz-secret"), false)...), "hunter2-fuzz-secret")
	f.Add(frame(true, 2, []byte(strings.Repeat("a", 300)), false), "aaaaaaaaaaaa")
	f.Add([]byte{0x81, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, "hunter2-fuzz-secret")
	f.Fuzz(func(t *testing.T, in []byte, secret string) {
		if len(secret) < redact.MinLen || len(secret) > 64 {
			return
		}
		m := (&redact.Matcher{}).With(redact.Secret{Name: "S", Value: secret, Origins: []string{"https://a.example"}})
		if m.Len() == 0 {
			return
		}
		p := &Proxy{o: Options{MaxScan: 1 << 16}}
		p.Arm(m)
		var out bytes.Buffer
		_, _ = p.frames(bytes.NewReader(in), &out, "http://b.example", "ws://b.example")
		// (A secret split across frames is a unit test: TestFramesSearchForSecrets.)
		for _, pl := range passedPayloads(out.Bytes()) {
			if _, hit := m.Find("http://b.example", string(pl)); hit {
				t.Fatalf("a frame carrying the secret was passed on: %q", pl)
			}
		}
	})
}

// passedPayloads reads the complete frames in b and returns their unmasked
// payloads.
func passedPayloads(b []byte) [][]byte {
	var out [][]byte
	for len(b) >= 2 {
		n := 2
		size := uint64(b[1] & 0x7f)
		switch size {
		case 126:
			if len(b) < 4 {
				return out
			}
			size, n = uint64(binary.BigEndian.Uint16(b[2:4])), 4
		case 127:
			if len(b) < 10 {
				return out
			}
			size, n = binary.BigEndian.Uint64(b[2:10]), 10
		}
		var key []byte
		if b[1]&0x80 != 0 {
			if len(b) < n+4 {
				return out
			}
			key, n = b[n:n+4], n+4
		}
		if uint64(len(b)-n) < size {
			return out
		}
		pl := append([]byte(nil), b[n:n+int(size)]...)
		for i := range pl {
			if key != nil {
				pl[i] ^= key[i%4]
			}
		}
		out = append(out, pl)
		b = b[n+int(size):]
	}
	return out
}
