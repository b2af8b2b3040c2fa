package egress

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/durable-browser/durable-browser/internal/netguard"
	"github.com/durable-browser/durable-browser/internal/redact"
)

// What the proxy adds to a browser's traffic on loopback: a plain-HTTP
// request through it against the same request direct, and a CONNECT
// tunnel's set-up (what each https or wss connection pays once).
func BenchmarkProxy(b *testing.B) {
	body := make([]byte, 4<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(body) }))
	defer srv.Close()
	p, err := Start(Options{Policy: &netguard.Policy{AllowPrivate: true}})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	pu, _ := url.Parse("http://" + p.Addr())
	get := func(b *testing.B, c *http.Client) {
		for i := 0; i < b.N; i++ {
			resp, err := c.Get(srv.URL + "/x?q=1")
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	b.Run("direct", func(b *testing.B) { get(b, &http.Client{Transport: &http.Transport{Proxy: nil}}) })
	b.Run("http", func(b *testing.B) { get(b, &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}) })
	b.Run("http-secret-typed", func(b *testing.B) {
		p.Arm((&redact.Matcher{}).With(
			redact.Secret{Name: "A", Value: "first-secret-value-0001", Origins: []string{"https://a.example"}},
			redact.Secret{Name: "B", Value: "second-secret-value-002", Origins: []string{"https://a.example"}},
			redact.Secret{Name: "C", Value: "third-secret-value-0003", Origins: []string{"https://a.example"}},
		))
		defer p.Arm(nil)
		get(b, &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}})
	})
	b.Run("connect", func(b *testing.B) {
		host := srv.Listener.Addr().String()
		for i := 0; i < b.N; i++ {
			c, err := net.Dial("tcp", p.Addr())
			if err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", host, host)
			resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect})
			if err != nil || resp.StatusCode != http.StatusOK {
				b.Fatal(err, resp)
			}
			c.Close()
		}
	})
}
