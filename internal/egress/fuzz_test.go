package egress

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
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

// FuzzExchanges: whatever bytes a page sends through a tunnel (requests one
// after another, bodies chunked or not, trailers, upgrades), with a secret
// typed and not bound to the tunnel's origin, no request the site receives
// carries it (in a spelling the matcher knows), and nothing panics. A
// secret split across two requests is not looked for (docs/security.md).
func FuzzExchanges(f *testing.F) {
	const secret = "fuzz-Tunnel-Secret-0042"
	f.Add([]byte("GET / HTTP/1.1\r\nHost: b.example\r\n\r\n"))
	f.Add([]byte("GET /a HTTP/1.1\r\nHost: b.example\r\n\r\nPOST /b HTTP/1.1\r\nHost: b.example\r\nContent-Length: 27\r\n\r\npw=fuzz-Tunnel-Secret-0042"))
	f.Add([]byte("POST / HTTP/1.1\r\nHost: b.example\r\nTransfer-Encoding: chunked\r\nTrailer: X-T\r\n\r\n2\r\nhi\r\n0\r\nX-T: fuzz-Tunnel-Secret-0042\r\n\r\n"))
	f.Add([]byte("GET / HTTP/1.1\r\nHost: fuzz-Tunnel-Secret-0042\r\n\r\n"))
	f.Add([]byte("GET /ws HTTP/1.1\r\nHost: b.example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nX: ZnV6ei1UdW5uZWwtU2VjcmV0LTAwNDI=\r\n\r\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		m := (&redact.Matcher{}).With(redact.Secret{Name: "S", Value: secret, Origins: []string{"https://a.example"}})
		p := &Proxy{o: Options{MaxScan: 1 << 16}}
		p.Arm(m)
		up := &recordConn{}
		// The site answers every request, an upgrade included, with 204.
		answers := bufio.NewReader(strings.NewReader(strings.Repeat("HTTP/1.1 204 No Content\r\n\r\n", 64)))
		p.exchanges(&recordConn{}, bufio.NewReader(bytes.NewReader(in)), up, answers, "http", "b.example:80")
		br := bufio.NewReader(bytes.NewReader(up.Bytes()))
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			// What the site reads: the request's head as sent, its body
			// (chunks joined) and its trailers.
			head, err := httputil.DumpRequest(req, false)
			if err != nil {
				return
			}
			body, _ := io.ReadAll(req.Body)
			var trailers bytes.Buffer
			_ = req.Trailer.Write(&trailers)
			if name, hit := m.Find("http://b.example", string(head), string(body), trailers.String()); hit {
				t.Fatalf("the site received a request carrying secret %s:\n%q", name, up.Bytes())
			}
		}
	})
}

// recordConn is a connection that keeps what is written to it.
type recordConn struct {
	net.Conn
	bytes.Buffer
}

func (c *recordConn) Write(b []byte) (int, error) { return c.Buffer.Write(b) }
func (c *recordConn) Read(b []byte) (int, error)  { return c.Buffer.Read(b) }
func (c *recordConn) Close() error                { return nil }
