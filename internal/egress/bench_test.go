package egress

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
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
	get := func(b *testing.B, c *http.Client) { fetch(b, c, srv.URL+"/x?q=1") }
	b.Run("direct", func(b *testing.B) { get(b, &http.Client{Transport: &http.Transport{Proxy: nil}}) })
	b.Run("http", func(b *testing.B) { get(b, &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}) })
	b.Run("http-secret-typed", func(b *testing.B) {
		p.Arm(threeSecrets())
		defer p.Arm(nil)
		get(b, &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}})
	})
	// A 4 KiB JSON body (escapes in it, as JSON.stringify writes them)
	// POSTed toward an origin the typed secrets are not bound to: the body
	// is searched, raw and decoded.
	b.Run("http-secret-typed-post-json", func(b *testing.B) {
		p.Arm(threeSecrets())
		defer p.Arm(nil)
		post := strings.Repeat(`{"event":"click","text":"line one\nline \"two\"","path":"/a/b","u":"caf\u00e9"},`, 52)[:4<<10]
		c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}
		defer c.CloseIdleConnections()
		for i := 0; i < b.N; i++ {
			resp, err := c.Post(srv.URL+"/x?q=1", "application/json", strings.NewReader(post))
			if err != nil || resp.StatusCode != http.StatusOK {
				b.Fatal(err, resp)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
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

// What reading TLS costs: an https GET through a proxy that splices the
// tunnel and through one that intercepts it, on one kept-alive connection
// (what each request pays) and on a new connection each time (a tunnel's
// set-up: the proxy's two handshakes instead of the browser's one, and a
// leaf minted on the first).
func BenchmarkProxyTLS(b *testing.B) {
	body := make([]byte, 4<<10)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(body) }))
	defer srv.Close()
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	spliced, err := Start(Options{Policy: &netguard.Policy{AllowPrivate: true}})
	if err != nil {
		b.Fatal(err)
	}
	defer spliced.Close()
	icp, err := Start(Options{Policy: &netguard.Policy{AllowPrivate: true}, Intercept: true, RootCAs: roots})
	if err != nil {
		b.Fatal(err)
	}
	defer icp.Close()
	proxyRoots := x509.NewCertPool()
	proxyRoots.AddCert(icp.ca.Certificate())
	client := func(p *Proxy, trust *x509.CertPool, keepAlive bool) *http.Client {
		pu, _ := url.Parse("http://" + p.Addr())
		return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu), TLSClientConfig: &tls.Config{RootCAs: trust}, DisableKeepAlives: !keepAlive}}
	}
	u := srv.URL + "/x?q=1"
	b.Run("spliced", func(b *testing.B) { fetch(b, client(spliced, roots, true), u) })
	b.Run("intercepted", func(b *testing.B) { fetch(b, client(icp, proxyRoots, true), u) })
	b.Run("intercepted-secret-typed", func(b *testing.B) {
		icp.Arm(threeSecrets())
		defer icp.Arm(nil)
		fetch(b, client(icp, proxyRoots, true), u)
	})
	b.Run("new-tunnel-spliced", func(b *testing.B) { fetch(b, client(spliced, roots, false), u) })
	b.Run("new-tunnel-intercepted", func(b *testing.B) { fetch(b, client(icp, proxyRoots, false), u) })
}

func threeSecrets() *redact.Matcher {
	return (&redact.Matcher{}).With(
		redact.Secret{Name: "A", Value: "first-secret-value-0001", Origins: []string{"https://a.example"}},
		redact.Secret{Name: "B", Value: "second-secret-value-002", Origins: []string{"https://a.example"}},
		redact.Secret{Name: "C", Value: "third-secret-value-0003", Origins: []string{"https://a.example"}},
	)
}

func fetch(b *testing.B, c *http.Client, u string) {
	b.Helper()
	defer c.CloseIdleConnections()
	for i := 0; i < b.N; i++ {
		resp, err := c.Get(u)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
