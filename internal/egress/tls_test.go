package egress

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/internal/netguard"
	"github.com/durable-browser/durable-browser/internal/redact"
)

// A leaf verifies, under the CA alone, for the name or address it was
// minted for and nothing else; it is minted once per host; the pin is the
// SHA-256 of the CA's public key info; two CAs share nothing; a CA printed
// shows its pin, not its key.
func TestCALeaves(t *testing.T) {
	ca, err := NewCA()
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Certificate())
	for _, c := range []struct{ host, verifyAs string }{
		{"shop.example", "shop.example"},
		{"Shop.Example.", "shop.example"},
		{"127.0.0.1", "127.0.0.1"},
		{"::1", "::1"},
	} {
		l, err := ca.Leaf(c.host)
		if err != nil {
			t.Fatalf("Leaf(%s): %v", c.host, err)
		}
		if len(l.Certificate) != 2 {
			t.Fatalf("Leaf(%s): chain of %d, want the leaf and the CA", c.host, len(l.Certificate))
		}
		leaf, err := x509.ParseCertificate(l.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: c.verifyAs, Roots: roots}); err != nil {
			t.Fatalf("Leaf(%s) does not verify as %s: %v", c.host, c.verifyAs, err)
		}
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "other.example", Roots: roots}); err == nil {
			t.Fatalf("Leaf(%s) verifies for another name", c.host)
		}
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: c.verifyAs}); err == nil {
			t.Fatalf("Leaf(%s) verifies under the system's roots", c.host)
		}
		if again, _ := ca.Leaf(c.host); again != l {
			t.Fatalf("Leaf(%s) minted twice", c.host)
		}
	}
	if _, err := ca.Leaf(""); err == nil {
		t.Fatal("Leaf(\"\") minted a certificate")
	}
	sum := sha256.Sum256(ca.Certificate().RawSubjectPublicKeyInfo)
	if want := base64.StdEncoding.EncodeToString(sum[:]); ca.SPKI() != want || len(ca.SPKI()) != 44 {
		t.Fatalf("SPKI %q, want %q", ca.SPKI(), want)
	}
	other, err := NewCA()
	if err != nil {
		t.Fatal(err)
	}
	if other.SPKI() == ca.SPKI() {
		t.Fatal("two CAs share a key")
	}
	ol, _ := other.Leaf("shop.example")
	leaf, _ := x509.ParseCertificate(ol.Certificate[0])
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "shop.example", Roots: roots}); err == nil {
		t.Fatal("one CA's roots accept another CA's leaf")
	}
	for _, s := range []string{fmt.Sprint(ca), fmt.Sprintf("%+v", ca), fmt.Sprintf("%#v", ca)} {
		if s != "egress.CA("+ca.SPKI()+")" {
			t.Fatalf("a printed CA shows %q", s)
		}
	}
}

// interceptRig is an intercepting proxy in front of a loopback TLS site,
// and a client that trusts the proxy's CA (as the pinned browser does).
type interceptRig struct {
	p       *Proxy
	site    *httptest.Server
	client  *http.Client
	mu      sync.Mutex
	blocked []Blocked
	bodies  []string
	hits    atomic.Int32
}

func newInterceptRig(t *testing.T, trustSite bool) *interceptRig {
	t.Helper()
	r := &interceptRig{}
	r.site = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.hits.Add(1)
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.bodies = append(r.bodies, string(b))
		r.mu.Unlock()
		fmt.Fprintf(w, "%s %s %s %s", req.Method, req.URL.Path, req.Proto, b)
	}))
	t.Cleanup(r.site.Close)
	o := Options{Policy: &netguard.Policy{AllowPrivate: true}, Intercept: true}
	if trustSite {
		o.RootCAs = x509.NewCertPool()
		o.RootCAs.AddCert(r.site.Certificate())
	}
	p, err := Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	p.OnBlock(func(b Blocked) { r.mu.Lock(); r.blocked = append(r.blocked, b); r.mu.Unlock() })
	r.p = p
	pu, _ := url.Parse("http://" + p.Addr())
	roots := x509.NewCertPool()
	roots.AddCert(p.ca.Certificate())
	tr := &http.Transport{Proxy: http.ProxyURL(pu), TLSClientConfig: &tls.Config{RootCAs: roots}, ForceAttemptHTTP2: true}
	t.Cleanup(tr.CloseIdleConnections)
	r.client = &http.Client{Transport: tr}
	return r
}

func (r *interceptRig) seen() ([]Blocked, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Blocked(nil), r.blocked...), append([]string(nil), r.bodies...)
}

// Through an intercepting proxy, https arrives intact, as HTTP/1.1 on
// both sides, several requests on one connection; once a secret is typed,
// a request carrying it (body, URL, any spelling) toward another origin is
// refused before it reaches the site, and others still go.
func TestInterceptReadsHTTPS(t *testing.T) {
	const secret = "tls-Secret-Value-31337-q"
	r := newInterceptRig(t, true)
	post := func(path, body string) (int, string) {
		t.Helper()
		resp, err := r.client.Post(r.site.URL+path, "text/plain", strings.NewReader(body))
		if err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.ProtoMajor != 1 {
			t.Fatalf("the browser side spoke %s, want HTTP/1.1", resp.Proto)
		}
		return resp.StatusCode, string(b)
	}
	for i := range 3 {
		if code, b := post(fmt.Sprintf("/ok%d", i), "hello"); code != 200 || b != fmt.Sprintf("POST /ok%d HTTP/1.1 hello", i) {
			t.Fatalf("POST through the proxy: %d %q", code, b)
		}
	}
	r.p.Arm((&redact.Matcher{}).With(redact.Secret{Name: "PW", Value: secret, Origins: []string{"https://a.example"}}))
	if code, _ := post("/still-ok", "nothing here"); code != 200 {
		t.Fatalf("a request without the secret: %d", code)
	}
	before := r.hits.Load()
	for _, send := range []struct{ path, body string }{
		{"/body", "pw=" + secret},
		{"/b64", base64.StdEncoding.EncodeToString([]byte(secret))},
		{"/q?pw=" + url.QueryEscape(secret), ""},
	} {
		if code, _ := post(send.path, send.body); code != http.StatusForbidden {
			t.Fatalf("POST %s carrying the secret: %d, want 403", send.path[:3], code)
		}
	}
	blocked, bodies := r.seen()
	if r.hits.Load() != before {
		t.Fatalf("the site received %d requests carrying the secret", r.hits.Load()-before)
	}
	for _, b := range bodies {
		if strings.Contains(b, secret) {
			t.Fatal("the site received the secret")
		}
	}
	origin := redact.OriginOf(r.site.URL)
	if len(blocked) != 3 || blocked[0].Rule != RuleSecret || blocked[0].Secret != "PW" || blocked[0].Origin != origin || strings.Contains(blocked[0].Message, secret) {
		t.Fatalf("blocked %+v", blocked)
	}
}

// A wss:// WebSocket through an intercepting proxy: frames pass until one
// carries a typed secret toward another origin, which never reaches the
// site.
func TestInterceptReadsWSS(t *testing.T) {
	const secret = "wss-Secret-Value-4242-zz"
	r := newInterceptRig(t, true)
	got := make(chan string, 8)
	r.site.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		c, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		fmt.Fprintf(brw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: x\r\n\r\n")
		brw.Flush()
		for {
			pl, ok := readFrame(brw.Reader)
			if !ok {
				close(got)
				return
			}
			got <- string(pl)
		}
	})
	r.p.Arm((&redact.Matcher{}).With(redact.Secret{Name: "PW", Value: secret, Origins: []string{"https://a.example"}}))
	host := r.site.Listener.Addr().String()
	raw, err := net.Dial("tcp", r.p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	fmt.Fprintf(raw, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", host, host)
	rbr := bufio.NewReader(raw)
	if resp, err := http.ReadResponse(rbr, &http.Request{Method: http.MethodConnect}); err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(r.p.ca.Certificate())
	c := tls.Client(raw, &tls.Config{RootCAs: roots, ServerName: "127.0.0.1", NextProtos: []string{"h2", "http/1.1"}})
	if err := c.Handshake(); err != nil {
		t.Fatal(err)
	}
	if p := c.ConnectionState().NegotiatedProtocol; p != "http/1.1" {
		t.Fatalf("ALPN %q, want http/1.1", p)
	}
	fmt.Fprintf(c, "GET /ws HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: eA==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n", host)
	br := bufio.NewReader(c)
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != 101 {
		t.Fatalf("handshake: %v %v", resp, err)
	}
	_, _ = c.Write(frame(true, 1, []byte("hello"), false))
	if m := <-got; m != "hello" {
		t.Fatalf("first frame %q", m)
	}
	_, _ = c.Write(frame(true, 1, []byte("pw="+secret), false))
	_, _ = c.Write(frame(true, 1, []byte("after"), false))
	for m := range got {
		t.Fatalf("the site received a frame after the secret: %q", m)
	}
	blocked, _ := r.seen()
	if len(blocked) != 1 || blocked[0].Method != "WS" || blocked[0].Origin != "wss"+strings.TrimPrefix(redact.OriginOf(r.site.URL), "https") {
		t.Fatalf("blocked %+v", blocked)
	}
}

// readFrame reads one masked client frame and returns its payload.
func readFrame(r *bufio.Reader) ([]byte, bool) {
	var hdr [2]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, false
	}
	n := int(hdr[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, false
		}
		n = int(b[0])<<8 | int(b[1])
	case 127:
		return nil, false // the tests send none this long
	}
	var key [4]byte
	if _, err := io.ReadFull(r, key[:]); err != nil {
		return nil, false
	}
	pl := make([]byte, n)
	if _, err := io.ReadFull(r, pl); err != nil {
		return nil, false
	}
	for i := range pl {
		pl[i] ^= key[i%4]
	}
	return pl, true
}

// A site whose certificate does not verify is never talked to as if it
// did: the client's handshake fails, and the refusal names the rule.
func TestInterceptRefusesBadUpstreamCert(t *testing.T) {
	r := newInterceptRig(t, false) // the site's CA is not among the proxy's roots
	_, err := r.client.Get(r.site.URL + "/x")
	if err == nil {
		t.Fatal("a site with an untrusted certificate answered through the proxy")
	}
	blocked, _ := r.seen()
	if r.hits.Load() != 0 || len(blocked) != 1 || blocked[0].Rule != RuleCertificate || blocked[0].Method != "CONNECT" {
		t.Fatalf("site hits %d, blocked %+v", r.hits.Load(), blocked)
	}
}

// A streamed answer (server-sent events) comes through an intercepting
// proxy as it is sent: the first event arrives while the site still holds
// the second back until the client has read the first.
func TestInterceptStreams(t *testing.T) {
	r := newInterceptRig(t, true)
	read := make(chan struct{})
	r.site.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: one\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-read:
		case <-req.Context().Done():
			return
		}
		fmt.Fprint(w, "data: two\n\n")
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.site.URL+"/events", nil)
	resp, err := r.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	if err != nil || line != "data: one\n" {
		t.Fatalf("first event: %q %v (held back by the proxy?)", line, err)
	}
	close(read)
	rest, _ := io.ReadAll(br)
	if string(rest) != "\ndata: two\n\n" {
		t.Fatalf("the rest: %q", rest)
	}
}

// TestSharedCA: proxies given one CA (Options.CA: the sessions of a
// shared browser) present leaves under it, each on its own address; a
// proxy without one makes its own.
func TestSharedCA(t *testing.T) {
	ca, err := NewCA()
	if err != nil {
		t.Fatal(err)
	}
	var addrs []string
	for i := 0; i < 2; i++ {
		p, err := Start(Options{Policy: &netguard.Policy{AllowPrivate: true}, Intercept: true, CA: ca})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Close() })
		if p.SPKI() != ca.SPKI() {
			t.Fatalf("proxy %d pins %s; want the shared CA's %s", i, p.SPKI(), ca.SPKI())
		}
		addrs = append(addrs, p.Addr())
	}
	if addrs[0] == addrs[1] {
		t.Fatalf("two proxies on one address %s", addrs[0])
	}
	own, err := Start(Options{Policy: &netguard.Policy{AllowPrivate: true}, Intercept: true})
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	if own.SPKI() == "" || own.SPKI() == ca.SPKI() {
		t.Fatalf("a proxy without Options.CA pins %q; want a CA of its own", own.SPKI())
	}
}
