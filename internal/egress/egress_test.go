package egress

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/rs/zerolog"

	"github.com/durable-browser/durable-browser/internal/netguard"
	"github.com/durable-browser/durable-browser/internal/redact"
)

// seqResolver answers each lookup with the next answer: a name that
// resolves to one address and then to another (DNS rebinding).
type seqResolver struct {
	mu      sync.Mutex
	answers [][]string
	calls   int
}

func (r *seqResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := r.calls
	r.calls++
	if i >= len(r.answers) {
		i = len(r.answers) - 1
	}
	if i < 0 {
		return nil, errors.New("no such host")
	}
	var out []netip.Addr
	for _, a := range r.answers[i] {
		out = append(out, netip.MustParseAddr(a))
	}
	return out, nil
}

func TestPin(t *testing.T) {
	strict := &netguard.Policy{}
	cases := []struct {
		name     string
		pol      *netguard.Policy
		scheme   string
		hostport string
		answers  [][]string
		want     string // the pinned address, or "" when refused
		rule     netguard.Rule
		lookups  int
	}{
		{"public name pinned", strict, "", "shop.example:443", [][]string{{"93.184.216.34"}}, "93.184.216.34:443", "", 1},
		{"a private answer refuses the name", strict, "", "shop.example:443", [][]string{{"93.184.216.34", "10.0.0.5"}}, "", netguard.RulePrivate, 1},
		{"metadata literal", strict, "", "169.254.169.254:80", nil, "", netguard.RuleMetadata, 0},
		{"loopback refused by default", strict, "http", "127.0.0.1:8080", nil, "", netguard.RuleLoopback, 0},
		{"loopback allowed for tests", &netguard.Policy{AllowPrivate: true}, "http", "127.0.0.1:8080", nil, "127.0.0.1:8080", "", 0},
		{"localhost is loopback without a lookup", &netguard.Policy{AllowLoopback: true}, "", "localhost:9", nil, "127.0.0.1:9", "", 0},
		{"off the allow list: no lookup at all", &netguard.Policy{SessionHosts: []string{"a.example"}}, "", "b.example:443", [][]string{{"93.184.216.34"}}, "", netguard.RuleAllowList, 0},
		{"on the allow list", &netguard.Policy{SessionHosts: []string{"a.example"}}, "", "a.example:443", [][]string{{"93.184.216.34"}}, "93.184.216.34:443", "", 1},
		{"service by address", &netguard.Policy{AllowPrivate: true, Services: []netguard.Service{{Name: "Temporal frontend", Host: "127.0.0.1", Port: "7233"}}}, "", "[::ffff:127.0.0.1]:7233", nil, "", netguard.RuleService, 0},
		{"url host without port", strict, "http", "shop.example", [][]string{{"93.184.216.34"}}, "93.184.216.34:80", "", 1},
		{"connect without port", strict, "", "shop.example", nil, "", netguard.RuleInvalid, 0},
		{"unresolved", strict, "", "nowhere.example:443", nil, "", netguard.RuleUnresolve, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &seqResolver{answers: c.answers}
			got, d := Pin(context.Background(), c.pol, r, c.scheme, c.hostport)
			if c.want == "" {
				if d.Allowed() || d.Rule != c.rule {
					t.Fatalf("Pin(%s) = %v, %+v; want refused by %q", c.hostport, got, d, c.rule)
				}
			} else if !d.Allowed() || got.String() != c.want {
				t.Fatalf("Pin(%s) = %v, %+v; want %s", c.hostport, got, d, c.want)
			}
			if r.calls != c.lookups {
				t.Fatalf("%d lookups, want %d", r.calls, c.lookups)
			}
		})
	}
}

// DNS rebinding: a name first answers a public address, then a private
// one. The proxy connects to the address it checked, never to what the
// name says later, and refuses the name once it points inside.
func TestProxyPinsTheCheckedAddress(t *testing.T) {
	r := &seqResolver{answers: [][]string{{"93.184.216.34"}, {"10.0.0.5"}}}
	var mu sync.Mutex
	var dialed []string
	p, err := Start(Options{
		Policy:   &netguard.Policy{},
		Resolver: r,
		// Nothing leaves loopback: the dial is recorded and answered by a pipe.
		Dial: func(_ context.Context, _, addr string) (net.Conn, error) {
			mu.Lock()
			dialed = append(dialed, addr)
			mu.Unlock()
			a, b := net.Pipe()
			go func() { _, _ = io.Copy(io.Discard, b); b.Close() }()
			return a, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var blocked []Blocked
	p.OnBlock(func(b Blocked) { mu.Lock(); blocked = append(blocked, b); mu.Unlock() })

	if code := connect(t, p.Addr(), "rebind.example:443"); code != http.StatusOK {
		t.Fatalf("first CONNECT (public answer): %d", code)
	}
	if code := connect(t, p.Addr(), "rebind.example:443"); code != http.StatusForbidden {
		t.Fatalf("second CONNECT (private answer): %d, want 403", code)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(dialed) != 1 || dialed[0] != "93.184.216.34:443" {
		t.Fatalf("dialed %v, want only the checked address 93.184.216.34:443", dialed)
	}
	if len(blocked) != 1 || blocked[0].Rule != string(netguard.RulePrivate) || blocked[0].Method != "CONNECT" {
		t.Fatalf("blocked %+v, want one CONNECT refused by rule private", blocked)
	}
}

// The proxy never tunnels to itself or to another proxy of this process.
func TestProxyRefusesProxies(t *testing.T) {
	p, err := Start(Options{Policy: &netguard.Policy{AllowPrivate: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	q, err := Start(Options{Policy: &netguard.Policy{AllowPrivate: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	for _, to := range []string{p.Addr(), q.Addr(), "localhost:" + strings.Split(q.Addr(), ":")[1]} {
		if code := connect(t, p.Addr(), to); code != http.StatusForbidden {
			t.Fatalf("CONNECT %s through a proxy: %d, want 403", to, code)
		}
	}
}

func connect(t *testing.T, proxy, to string) int {
	t.Helper()
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", to, to)
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode
}

// frame is a client WebSocket frame, masked as a browser sends it.
func frame(fin bool, opcode byte, payload []byte, rsv1 bool) []byte {
	b0 := opcode
	if fin {
		b0 |= 0x80
	}
	if rsv1 {
		b0 |= 0x40
	}
	var out bytes.Buffer
	out.WriteByte(b0)
	switch n := len(payload); {
	case n < 126:
		out.WriteByte(0x80 | byte(n))
	case n < 1<<16:
		out.Write([]byte{0x80 | 126, byte(n >> 8), byte(n)})
	default:
		out.WriteByte(0x80 | 127)
		for i := 7; i >= 0; i-- {
			out.WriteByte(byte(n >> (8 * i)))
		}
	}
	key := []byte{0x11, 0x22, 0x33, 0x44}
	out.Write(key)
	for i, c := range payload {
		out.WriteByte(c ^ key[i%4])
	}
	return out.Bytes()
}

func TestFramesSearchForSecrets(t *testing.T) {
	const secret = "hunter2-Frame-Secret-99"
	armed := (&redact.Matcher{}).With(redact.Secret{Name: "PW", Value: secret, Origins: []string{"https://a.example"}})
	long := strings.Repeat("x", 70000)
	cases := []struct {
		name    string
		armed   bool
		origin  string
		frames  [][]byte
		blocked bool
		passed  int // frames passed on before the block (or all)
	}{
		{"nothing typed: frames stream through", false, "http://b.example", [][]byte{frame(true, 1, []byte("pw="+secret), false)}, false, 1},
		{"plain frames pass", true, "http://b.example", [][]byte{frame(true, 1, []byte("hello"), false), frame(true, 2, []byte(long), false)}, false, 2},
		{"a frame carrying it is stopped", true, "http://b.example", [][]byte{frame(true, 1, []byte("hello"), false), frame(true, 1, []byte("pw="+secret), false)}, true, 1},
		{"base64 of it is stopped", true, "http://b.example", [][]byte{frame(true, 1, []byte(base64.StdEncoding.EncodeToString([]byte(secret))), false)}, true, 0},
		{"split across fragments", true, "http://b.example", [][]byte{frame(false, 1, []byte("pw="+secret[:9]), false), frame(true, 9, []byte("ping"), false), frame(true, 0, []byte(secret[9:]), false)}, true, 2},
		{"its own origin may have it", true, "https://a.example", [][]byte{frame(true, 1, []byte("pw="+secret), false)}, false, 1},
		{"compressed frames cannot be read", true, "http://b.example", [][]byte{frame(true, 1, []byte("xx"), true)}, true, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := &Proxy{o: Options{MaxScan: 1 << 20}}
			if c.armed {
				p.Arm(armed)
			}
			var in bytes.Buffer
			for _, f := range c.frames {
				in.Write(f)
			}
			var out bytes.Buffer
			b, blocked := p.frames(&in, &out, c.origin, "ws://b.example")
			if blocked != c.blocked {
				t.Fatalf("blocked = %v (%+v), want %v", blocked, b, c.blocked)
			}
			if blocked && (b.Rule != RuleSecret || b.Secret != "PW" || strings.Contains(b.Message, secret)) {
				t.Fatalf("refusal %+v", b)
			}
			var want []byte
			for _, f := range c.frames[:c.passed] {
				want = append(want, f...)
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Fatalf("passed on %d bytes, want the first %d frames unchanged (%d bytes)", out.Len(), c.passed, len(want))
			}
		})
	}
}

// What the proxy lets through arrives intact: https through a CONNECT
// tunnel (TLS is spliced, not read), plain http as a proxy request and as
// a request inside a CONNECT tunnel, and a body searched for a secret
// typed elsewhere that does not carry it.
func TestProxyCarriesAllowedTraffic(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s %s", r.Method, r.URL.Path, b)
	})
	tlsSrv := httptest.NewTLSServer(h)
	defer tlsSrv.Close()
	plain := httptest.NewServer(h)
	defer plain.Close()
	p, err := Start(Options{Policy: &netguard.Policy{AllowPrivate: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.Arm((&redact.Matcher{}).With(redact.Secret{Name: "PW", Value: "never-sent-secret-1234", Origins: []string{"https://a.example"}}))
	pu, _ := url.Parse("http://" + p.Addr())

	tr := tlsSrv.Client().Transport.(*http.Transport).Clone()
	tr.Proxy = http.ProxyURL(pu)
	c := &http.Client{Transport: tr}
	for _, u := range []string{tlsSrv.URL + "/tls", plain.URL + "/plain"} {
		resp, err := c.Post(u, "text/plain", strings.NewReader("body"))
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := "POST " + u[strings.LastIndex(u, "/"):] + " body"
		if resp.StatusCode != http.StatusOK || string(b) != want {
			t.Fatalf("%s: %d %q, want %q", u, resp.StatusCode, b, want)
		}
	}

	// Plain http inside a CONNECT tunnel: each request on it is read, the
	// second one too.
	conn, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	host := plain.Listener.Addr().String()
	fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", host, host)
	br := bufio.NewReader(conn)
	if resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect}); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	fmt.Fprintf(conn, "GET /tunnel HTTP/1.1\r\nHost: %s\r\n\r\n", host)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if string(b) != "GET /tunnel " {
		t.Fatalf("tunnelled GET: %q", b)
	}
	fmt.Fprintf(conn, "POST /again HTTP/1.1\r\nHost: %s\r\nContent-Length: 2\r\n\r\nhi", host)
	if resp, err = http.ReadResponse(br, nil); err != nil {
		t.Fatal(err)
	}
	if b, _ = io.ReadAll(resp.Body); string(b) != "POST /again hi" {
		t.Fatalf("second request in the tunnel: %q", b)
	}
	// With a secret typed, a later request on the same tunnel carrying it
	// is refused, and the tunnel ends.
	p.Arm((&redact.Matcher{}).With(redact.Secret{Name: "PW", Value: "tunnel-Secret-Value-771", Origins: []string{"https://a.example"}}))
	fmt.Fprintf(conn, "GET /x?pw=tunnel-Secret-Value-771 HTTP/1.1\r\nHost: %s\r\n\r\n", host)
	if resp, err = http.ReadResponse(br, nil); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a request carrying the secret in a kept tunnel: %v %v", resp, err)
	}
}

// A plain-http request carrying a typed secret toward another origin is
// refused and named, in its URL or its body.
func TestProxyRefusesSecretInPlainHTTP(t *testing.T) {
	const secret = "plain-http-Secret-5531"
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	p, err := Start(Options{Policy: &netguard.Policy{AllowPrivate: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var blocked []Blocked
	var mu sync.Mutex
	p.OnBlock(func(b Blocked) { mu.Lock(); blocked = append(blocked, b); mu.Unlock() })
	p.Arm((&redact.Matcher{}).With(redact.Secret{Name: "PW", Value: secret, Origins: []string{"https://a.example"}}))
	pu, _ := url.Parse("http://" + p.Addr())
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}
	for _, send := range []func() (*http.Response, error){
		func() (*http.Response, error) { return c.Get(srv.URL + "/x?p=" + url.QueryEscape(secret)) },
		func() (*http.Response, error) {
			return c.Post(srv.URL+"/y", "text/plain", strings.NewReader(base64.StdEncoding.EncodeToString([]byte(secret))))
		},
	} {
		resp, err := send()
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("status %d, want 403", resp.StatusCode)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if hits.Load() != 0 || len(blocked) != 2 || blocked[0].Rule != RuleSecret || blocked[1].Secret != "PW" || strings.Contains(blocked[0].Message, secret) {
		t.Fatalf("server hits %d, blocked %+v", hits.Load(), blocked)
	}
}

// An unbound proxy (a warm browser's, before a session takes it) refuses
// every tunnel and request, naming rule unbound; Bind gives it its
// session's owner and policy, and from then on it carries what that
// policy allows.
func TestUnboundProxyRefusesUntilBound(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	p, blocked := startRecording(t, Options{Unbound: true, Owner: "_warm-1"})
	pu, _ := url.Parse("http://" + p.Addr())
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}
	get := func() int {
		resp, err := c.Get(srv.URL + "/x")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	host := srv.Listener.Addr().String()
	if code := connect(t, p.Addr(), host); code != http.StatusForbidden {
		t.Fatalf("CONNECT through an unbound proxy: %d, want 403", code)
	}
	if code := get(); code != http.StatusForbidden {
		t.Fatalf("GET through an unbound proxy: %d, want 403", code)
	}
	if hits.Load() != 0 {
		t.Fatalf("the site was reached %d times through an unbound proxy", hits.Load())
	}
	if b := blocked(); len(b) != 2 || b[0].Rule != RuleUnbound || b[1].Rule != RuleUnbound {
		t.Fatalf("blocked %+v, want the CONNECT and the GET by rule unbound", b)
	}
	if owner, _ := Owner(p.Addr()); owner != "_warm-1" {
		t.Fatalf("owner before Bind: %q", owner)
	}

	p.Bind("session-1", &netguard.Policy{AllowPrivate: true}, zerolog.Nop())
	if owner, _ := Owner(p.Addr()); owner != "session-1" {
		t.Fatalf("owner after Bind: %q, want session-1", owner)
	}
	if code := connect(t, p.Addr(), host); code != http.StatusOK {
		t.Fatalf("CONNECT after Bind: %d, want 200", code)
	}
	if code := get(); code != http.StatusOK || hits.Load() != 1 {
		t.Fatalf("GET after Bind: %d, %d hits", code, hits.Load())
	}
	if _, err := Start(Options{}); err == nil {
		t.Fatal("a proxy with no policy that is not Unbound started")
	}
}

// startRecording starts a proxy, closed when the test ends, and returns
// what it has refused so far.
func startRecording(t *testing.T, o Options) (*Proxy, func() []Blocked) {
	t.Helper()
	p, err := Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	var mu sync.Mutex
	var blocked []Blocked
	p.OnBlock(func(b Blocked) { mu.Lock(); blocked = append(blocked, b); mu.Unlock() })
	return p, func() []Blocked {
		mu.Lock()
		defer mu.Unlock()
		return append([]Blocked(nil), blocked...)
	}
}

// The proxy's own "could not reach" answer carries UnreachableHeader with
// the cause, a site's answer never does (the proxy strips it, plain or in
// a tunnel), and a refusal by policy is not marked.
func TestProxyMarksItsOwnUnreachableAnswer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close() // nothing listens there now: connection refused
	forger := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(UnreachableHeader, "connection refused")
		fmt.Fprint(w, "a site's own page")
	}))
	defer forger.Close()
	p, _ := startRecording(t, Options{Policy: &netguard.Policy{AllowPrivate: true}})
	pu, _ := url.Parse("http://" + p.Addr())
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}

	resp, err := c.Get("http://" + dead + "/x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || resp.Header.Get(UnreachableHeader) != "connection refused" {
		t.Fatalf("nothing listening: %d, mark %q; want 502 marked connection refused", resp.StatusCode, resp.Header.Get(UnreachableHeader))
	}
	if got := connectHeader(t, p.Addr(), dead); got != "connection refused" {
		t.Fatalf("CONNECT to nothing: mark %q, want connection refused", got)
	}

	resp, err = c.Get(forger.URL + "/page")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(b) != "a site's own page" || len(resp.Header.Values(UnreachableHeader)) != 0 {
		t.Fatalf("a site sending the mark: %d %q, mark %q; want its page, unmarked", resp.StatusCode, b, resp.Header.Values(UnreachableHeader))
	}

	// In a tunnel (ws://, or https read by the proxy): stripped too.
	conn, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	host := forger.Listener.Addr().String()
	fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", host, host)
	br := bufio.NewReader(conn)
	if resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect}); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	fmt.Fprintf(conn, "GET /tunnel HTTP/1.1\r\nHost: %s\r\n\r\n", host)
	if resp, err = http.ReadResponse(br, nil); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || len(resp.Header.Values(UnreachableHeader)) != 0 {
		t.Fatalf("a site sending the mark in a tunnel: %d, mark %q; want it stripped", resp.StatusCode, resp.Header.Values(UnreachableHeader))
	}

	// Blocked by policy is blocked, not unreachable.
	strict, _ := startRecording(t, Options{Policy: &netguard.Policy{}})
	su, _ := url.Parse("http://" + strict.Addr())
	sc := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(su)}}
	if resp, err = sc.Get("http://" + dead + "/x"); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || len(resp.Header.Values(UnreachableHeader)) != 0 {
		t.Fatalf("loopback under a strict policy: %d, mark %q; want 403 unmarked", resp.StatusCode, resp.Header.Values(UnreachableHeader))
	}
}

// connectHeader sends a CONNECT to `to` through the proxy and returns the
// answer's UnreachableHeader.
func connectHeader(t *testing.T, proxy, to string) string {
	t.Helper()
	conn, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", to, to)
	resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Get(UnreachableHeader)
}

func TestUnreachableCause(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, "connection refused"},
		{&net.DNSError{Err: "no such host", Name: "nowhere.test", IsNotFound: true}, "no such host"},
		{fmt.Errorf("dial: %w", context.DeadlineExceeded), "timed out"},
		{&net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, "connection reset"},
		{io.EOF, "empty response"},
		{errors.New("something else"), "connection failed"},
	} {
		if got := cause(c.err); got != c.want {
			t.Errorf("cause(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
