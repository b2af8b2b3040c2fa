// Package egress is the proxy a local browser's traffic leaves through.
//
// Chrome's DevTools Fetch domain, where the driver's reach guard and secret
// guard hold requests, never sees WebSockets, and Chrome resolves names
// itself after the guard did (DNS rebinding). So the local provider starts
// each browser with this worker-owned proxy as its only way out
// (--proxy-server, loopback included). The proxy resolves every name
// itself, judges the answers with the same netguard.Policy, connects only
// to an address it checked, refuses tunnels and requests the policy
// refuses (a WebSocket to a host off the allow list included), and reads
// what the browser sends: plain-HTTP requests and ws:// handshakes and
// frames, and, with Options.Intercept, https requests and wss:// frames
// too, decrypted under a CA made in memory for this proxy alone (ca.go,
// tls.go). All of it is searched for typed secrets bound to other origins.
// Without Intercept, TLS tunnels are judged by host and port only.
package egress

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/durable-browser/durable-browser/internal/netguard"
	"github.com/durable-browser/durable-browser/internal/redact"
)

// RuleSecret is the rule of a request or frame that carried a typed secret
// toward an origin it is not bound to (the driver's rule of the same name).
const RuleSecret = "secret"

// Blocked is one request, tunnel or frame the proxy refused. It carries no
// path, query or payload.
type Blocked struct {
	Method  string // GET, POST, CONNECT, or WS for a WebSocket frame
	Origin  string // scheme://host[:port]; host:port for a CONNECT
	Rule    string
	Secret  string // the secret's name, for RuleSecret
	Message string
}

// Options configures a Proxy.
type Options struct {
	// Policy is where the browser may go; see SetPolicy. Required.
	Policy *netguard.Policy
	// Resolver looks names up; default net.DefaultResolver.
	Resolver Resolver
	// Dial connects to a checked address; default a net.Dialer. Tests set
	// it to see where the proxy would connect without connecting.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// MaxScan bounds a request body or a WebSocket frame searched for
	// secrets; a longer one, while a secret is typed and not bound to its
	// origin, is refused rather than sent unread (default 4 MiB).
	MaxScan int
	// Intercept reads TLS tunnels (https, wss): the proxy makes a CA in
	// memory (NewCA), presents a leaf it signs to the browser, and opens
	// its own verified TLS connection to the site. Only a browser started
	// with the proxy's SPKI pin accepts those leaves (see SPKI).
	Intercept bool
	// CA, when set with Intercept, is the authority the proxy signs under
	// instead of one of its own: the CA every session of a shared browser
	// uses (a browser's pin list is fixed when it starts, so the local
	// provider's context isolation makes one CA per worker and starts the
	// shared browser with its pin). Each proxy still serves one session:
	// its address, policy and secrets stay its own.
	CA *CA
	// RootCAs verifies the sites' certificates when intercepting (default:
	// the system's roots). Tests give the pool of their loopback servers.
	RootCAs *x509.CertPool
	// Owner names the session the proxy serves (its tag): a browser found
	// from an earlier worker process is given a proxy on its recorded
	// address only when no other session's proxy serves it (see Owner).
	Owner  string
	Logger zerolog.Logger
	// Unbound starts a proxy that serves no session yet (a warm browser's,
	// started before any session asks for it): it refuses everything, and
	// Policy may be nil, until Bind gives it its session.
	Unbound bool
}

// RuleUnbound refuses whatever a warm browser sends before Bind gives its
// proxy a session.
const RuleUnbound = "unbound"

// UnreachableHeader marks the proxy's own answer when it could not reach a
// site (502, the page saying so): its value is the cause ("connection
// refused", "no such host", "timed out", ...). The proxy strips it from
// every upstream response, so a site cannot forge it, and the driver fails
// a navigation whose main document carries it, as Chrome fails one it
// could not connect for. Refusals by policy (403, blocked) never carry it.
const UnreachableHeader = "X-Durable-Browser-Unreachable"

// Proxy is one browser's egress proxy on a loopback port.
type Proxy struct {
	o      Options
	log    atomic.Pointer[zerolog.Logger]
	ln     net.Listener
	addr   netip.AddrPort
	srv    *http.Server
	rp     *httputil.ReverseProxy
	policy atomic.Pointer[netguard.Policy]
	armed  atomic.Pointer[redact.Matcher]
	block  atomic.Pointer[func(Blocked)]

	// ca signs what the browser is shown for intercepted tunnels (nil:
	// TLS is spliced unread); toBrowser and sessions are the two sides'
	// TLS settings, kept per proxy so sessions resume.
	ca        *CA
	toBrowser *tls.Config
	sessions  tls.ClientSessionCache

	mu     sync.Mutex
	conns  map[net.Conn]struct{} // tunnels, closed by Close
	closed bool
}

// buffers lends the copy buffers of plain-HTTP responses (the reverse
// proxy would allocate 32 KiB per request).
type buffers struct{}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

func (buffers) Get() []byte  { return *(bufPool.Get().(*[]byte)) }
func (buffers) Put(b []byte) { bufPool.Put(&b) }

// live holds the address of every Proxy of this process, with the
// session it serves: none is ever a destination of another (isProxy).
var live sync.Map // netip.AddrPort -> owner (string)

// Owner reports whether a Proxy of this process serves addr, and for which
// session (Options.Owner). A port is reused: a browser recorded with addr
// by an earlier worker process may find another session's proxy there.
func Owner(addr string) (owner string, ok bool) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return "", false
	}
	v, ok := live.Load(ap)
	if !ok {
		return "", false
	}
	return v.(string), true
}

func isProxy(a netip.AddrPort) bool {
	ip := a.Addr().Unmap()
	if ip.IsLoopback() || ip.IsUnspecified() || (ip.Is4() && ip.As4()[0] == 0) {
		found := false
		live.Range(func(k, _ any) bool {
			found = k.(netip.AddrPort).Port() == a.Port()
			return !found
		})
		return found
	}
	_, ok := live.Load(netip.AddrPortFrom(ip, a.Port()))
	return ok
}

// Start listens on a free port of 127.0.0.1 and serves.
func Start(o Options) (*Proxy, error) {
	return Listen("127.0.0.1:0", o)
}

// Listen serves on addr, which must be a loopback address: a browser found
// from an earlier worker process is given back its proxy at the address it
// was started with.
func Listen(addr string, o Options) (*Proxy, error) {
	if o.Policy == nil && !o.Unbound {
		return nil, errors.New("egress: Options.Policy is required")
	}
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || !ap.Addr().IsLoopback() {
		return nil, fmt.Errorf("egress: %q is not a loopback address and port", addr)
	}
	if o.MaxScan <= 0 {
		o.MaxScan = 4 << 20
	}
	if o.Dial == nil {
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
		o.Dial = d.DialContext
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("egress: listen: %w", err)
	}
	p := &Proxy{o: o, ln: ln, addr: netip.MustParseAddrPort(ln.Addr().String()), conns: map[net.Conn]struct{}{}}
	if o.Intercept {
		if p.ca = o.CA; p.ca == nil {
			if p.ca, err = NewCA(); err != nil {
				_ = ln.Close()
				return nil, err
			}
		}
		p.toBrowser = p.browserTLS()
		p.sessions = tls.NewLRUClientSessionCache(256)
	}
	if !o.Unbound {
		p.policy.Store(o.Policy)
	}
	p.log.Store(&o.Logger)
	p.rp = newReverseProxy(o.Dial)
	// A browser's broken connections are no news for the worker's stderr.
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	live.Store(p.addr, o.Owner)
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// newReverseProxy sends plain-http requests on through dial.
func newReverseProxy(dial func(ctx context.Context, network, addr string) (net.Conn, error)) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		// The outgoing URL's host is the pinned address (set by serveHTTP);
		// the Host header keeps the name.
		Rewrite: func(*httputil.ProxyRequest) {},
		Transport: &http.Transport{
			Proxy:               nil, // never the environment's proxy
			DialContext:         dial,
			DisableCompression:  true,
			MaxIdleConnsPerHost: 6,
			IdleConnTimeout:     30 * time.Second,
		},
		FlushInterval: -1, // streamed as it comes (server-sent events)
		BufferPool:    buffers{},
		ModifyResponse: func(resp *http.Response) error {
			resp.Header.Del(UnreachableHeader) // only the proxy says so
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			unreachable(w, err)
		},
	}
}

// unreachable answers that the site could not be reached, marked with
// UnreachableHeader and the cause of err.
func unreachable(w http.ResponseWriter, err error) {
	w.Header().Set(UnreachableHeader, cause(err))
	http.Error(w, "durable-browser egress proxy: the site could not be reached ("+cause(err)+")", http.StatusBadGateway)
}

// UnreachableCauses are the only values the proxy puts in
// UnreachableHeader: a reader takes none other as the proxy's words.
var UnreachableCauses = []string{"connection refused", "no such host", "timed out", "connection reset", "address unreachable", "empty response", "connection failed"}

// cause names why a connection to a site failed, as UnreachableHeader
// carries it (one of UnreachableCauses).
func cause(err error) string {
	var dns *net.DNSError
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &dns) && dns.IsNotFound:
		return "no such host"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timed out"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "address unreachable"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "empty response"
	}
	return "connection failed"
}

// Addr is where the proxy listens: 127.0.0.1:port ("" for a nil Proxy).
func (p *Proxy) Addr() string {
	if p == nil {
		return ""
	}
	return p.addr.String()
}

// SPKI is the pin the browser must be started with to accept the leaves
// of an intercepting proxy (--ignore-certificate-errors-spki-list); ""
// when the proxy does not intercept (or p is nil).
func (p *Proxy) SPKI() string {
	if p == nil || p.ca == nil {
		return ""
	}
	return p.ca.SPKI()
}

// SetPolicy replaces the policy for connections made from now on (the
// browser's DevTools port joins the services once the browser is up).
func (p *Proxy) SetPolicy(pol *netguard.Policy) { p.policy.Store(pol) }

// Bind gives an Unbound proxy its session: the owner Owner reports, the
// policy, and the logger. Until then it refused everything, so no tunnel
// from before is open (those are judged once, when opened).
func (p *Proxy) Bind(owner string, pol *netguard.Policy, log zerolog.Logger) {
	p.log.Store(&log)
	live.Store(p.addr, owner)
	p.policy.Store(pol)
}

// logger is the proxy's logger (Options.Logger, or Bind's).
func (p *Proxy) logger() *zerolog.Logger {
	if l := p.log.Load(); l != nil {
		return l
	}
	nop := zerolog.Nop()
	return &nop
}

// policyOrRefuse is the policy a connection is judged by; nil, with the
// refusal, while the proxy serves no session.
func (p *Proxy) policyOrRefuse() (*netguard.Policy, netguard.Decision) {
	if pol := p.policy.Load(); pol != nil {
		return pol, netguard.Decision{}
	}
	return nil, netguard.Decision{Rule: RuleUnbound, Message: "this browser serves no session yet (a warm browser waiting to be taken); nothing it sends leaves (rule unbound)"}
}

// Arm sets the typed secrets to keep from other origins, from the next
// request or frame on (WebSockets already open included).
func (p *Proxy) Arm(m *redact.Matcher) { p.armed.Store(m) }

// OnBlock sets what is told of each refusal (the driver lists them in the
// run's result).
func (p *Proxy) OnBlock(f func(Blocked)) { p.block.Store(&f) }

// Close stops listening and ends every connection through the proxy.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	live.Delete(p.addr)
	err := p.srv.Close()
	p.rp.Transport.(*http.Transport).CloseIdleConnections()
	return err
}

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	_ = c.Close()
}

func (p *Proxy) refused(b Blocked) {
	// Host and port only: a ws:// address in a log reads like a browser's
	// DevTools endpoint, which logs never hold.
	to := b.Origin
	if i := strings.Index(to, "://"); i >= 0 {
		to = to[i+3:]
	}
	p.logger().Debug().Str("rule", b.Rule).Str("secret", b.Secret).Str("to", to).Str("method", b.Method).Msg("egress: refused")
	if f := p.block.Load(); f != nil && *f != nil {
		(*f)(b)
	}
}

// ServeHTTP takes CONNECT tunnels and absolute-form plain-HTTP requests,
// the two things a browser sends its proxy.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodConnect:
		p.serveConnect(w, r)
	case r.URL.IsAbs() && strings.EqualFold(r.URL.Scheme, "http"):
		p.serveHTTP(w, r)
	default:
		http.Error(w, "durable-browser egress proxy: send CONNECT or an absolute http:// request", http.StatusBadRequest)
	}
}

func (p *Proxy) serveHTTP(w http.ResponseWriter, r *http.Request) {
	origin := redact.OriginOf(r.URL.String())
	if r.Header.Get("Upgrade") != "" {
		// Browsers tunnel WebSockets with CONNECT, where the frames are
		// read; an upgrade here would pass unread.
		p.refused(Blocked{Method: r.Method, Origin: origin, Rule: string(netguard.RuleInvalid), Message: "an upgrade through a plain proxy request is not supported (rule invalid)"})
		http.Error(w, "durable-browser egress proxy: upgrades go through CONNECT", http.StatusForbidden)
		return
	}
	to, ok := p.admit(w, r, r.URL.Host, origin, origin)
	if !ok {
		return
	}
	if m := p.armed.Load(); m != nil {
		if _, ok := m.Unbound(origin); ok {
			body, unread, release := p.readBody(r)
			defer release() // at the latest when the exchange is over
			if name, why, hit := p.findSecret(m, origin, r, body, unread); hit {
				p.refuse(w, Blocked{Method: r.Method, Origin: origin, Rule: RuleSecret, Secret: name,
					Message: fmt.Sprintf("%s is not one of the origins secret %s belongs to, and %s", origin, name, why)})
				return
			}
		}
	}
	out := r.Clone(r.Context())
	out.URL.Host = to.String() // the checked address, not the name again
	out.Host = r.URL.Host
	out.RequestURI = ""
	p.rp.ServeHTTP(w, out)
}

// admit judges where r goes, authority, before anything is sent: a typed
// secret in the host name first (looking the name up would carry it out),
// then the reach policy, which answers the address to send to. A refusal
// is recorded (the policy's naming the destination as shown) and answered;
// ok is false then. A secret bound to one of origins counts as bound.
func (p *Proxy) admit(w http.ResponseWriter, r *http.Request, authority, shown string, origins ...string) (netip.AddrPort, bool) {
	scheme, prefix, host, port := "http", "http://", r.URL.Hostname(), r.URL.Port()
	if r.Method == http.MethodConnect {
		// A tunnel's scheme is whatever it carries: host and port only.
		scheme, prefix = "", ""
		host, port, _ = net.SplitHostPort(authority)
	}
	if b, hit := p.hostSecret(r.Method, prefix, host, port, origins...); hit {
		p.refuse(w, b)
		return netip.AddrPort{}, false
	}
	pol, d := p.policyOrRefuse()
	var to netip.AddrPort
	if pol != nil {
		to, d = Pin(r.Context(), pol, p.o.Resolver, scheme, authority)
	}
	if !d.Allowed() {
		p.refuse(w, Blocked{Method: r.Method, Origin: shown, Rule: string(d.Rule), Message: d.Message})
		return netip.AddrPort{}, false
	}
	return to, true
}

// refuse records b and answers the browser 403, naming the rule.
func (p *Proxy) refuse(w http.ResponseWriter, b Blocked) {
	p.refused(b)
	http.Error(w, "durable-browser egress proxy: blocked ("+b.Rule+")", http.StatusForbidden)
}

// hostSecret searches a host name for the typed secrets not bound to
// origins, before the name is looked up: the lookup itself would carry the
// name to whichever name servers answer for its domain. The refusal shows
// the destination as prefix + host + ":" + port with the labels carrying a
// secret redacted.
func (p *Proxy) hostSecret(method, prefix, host, port string, origins ...string) (Blocked, bool) {
	m := p.armed.Load()
	if m == nil || host == "" {
		return Blocked{}, false
	}
	name, hit := m.FindHost(host, origins...)
	if !hit {
		return Blocked{}, false
	}
	shown := prefix + m.ShownHost(host, origins...)
	if port != "" {
		shown += ":" + port
	}
	return Blocked{Method: method, Origin: shown, Rule: RuleSecret, Secret: name,
		Message: fmt.Sprintf("%s: the host name carries secret %s, which does not belong to it; the name was not looked up", shown, name)}, true
}

// readBody reads a request body up to MaxScan and puts it back, the bytes
// counted against the worker's scan budget until the body has been sent
// on (or release is called, which a refusal does); unread says why it could
// not be read whole (longer than MaxScan, failed, or no budget in time),
// so it cannot be searched.
func (p *Proxy) readBody(r *http.Request) (body []byte, unread string, release func()) {
	release = func() {}
	if r.Body == nil || r.Body == http.NoBody {
		return nil, "", release
	}
	// What the body can take: its length when it says so, else the most
	// that is read.
	want := int64(p.o.MaxScan) + 1
	if r.ContentLength >= 0 && r.ContentLength < want {
		want = r.ContentLength
	}
	if want > 0 {
		var ok bool
		if release, ok = reserve(want); !ok {
			return nil, "the worker's buffer for checking requests stayed full, so it could not be checked for the secret", func() {}
		}
	}
	buf := bytes.NewBuffer(make([]byte, 0, want))
	_, err := io.Copy(buf, io.LimitReader(r.Body, int64(p.o.MaxScan)+1))
	if err != nil || buf.Len() > p.o.MaxScan || int64(buf.Len()) > want {
		release()
		if err == nil && buf.Len() <= p.o.MaxScan {
			// Longer than it said: not read on.
			return nil, "its body is longer than its length said", func() {}
		}
		return nil, "its body is too long to check for the secret", func() {}
	}
	b := buf.Bytes()
	rb := &reservedBody{Reader: bytes.NewReader(b), release: release}
	r.Body = rb
	return b, "", rb.done
}

// reservedBody gives the scan budget back once the body was read to its
// end or closed.
type reservedBody struct {
	*bytes.Reader
	release func()
	once    sync.Once
}

func (b *reservedBody) done() { b.once.Do(b.release) }

func (b *reservedBody) Read(p []byte) (int, error) {
	n, err := b.Reader.Read(p)
	if b.Reader.Len() == 0 {
		b.done() // all of it handed on
	}
	return n, err
}

func (b *reservedBody) Close() error { b.done(); return nil }

func (p *Proxy) findSecret(m *redact.Matcher, origin string, r *http.Request, body []byte, unread string) (name, why string, hit bool) {
	if unread != "" {
		n, _ := m.Unbound(origin)
		return n, unread, true
	}
	// Go keeps Host out of Header and trailers (read with the body) in
	// Trailer; both are sent on.
	parts := []string{r.URL.String(), r.RequestURI, "Host: " + r.Host, string(body)}
	for _, h := range []http.Header{r.Header, r.Trailer} {
		for k, vs := range h {
			for _, v := range vs {
				parts = append(parts, k+": "+v)
			}
		}
	}
	if n, ok := m.Find(origin, parts...); ok {
		return n, "it carries the secret", true
	}
	return "", "", false
}

func (p *Proxy) serveConnect(w http.ResponseWriter, r *http.Request) {
	authority := r.RequestURI
	if authority == "" {
		authority = r.Host
	}
	// A tunnel carries https, wss, or Chrome's ws://: the secret counts as
	// bound when it is bound to either scheme's origin of the host.
	to, ok := p.admit(w, r, authority, clip(authority), redact.OriginOf("https://"+authority), redact.OriginOf("http://"+authority))
	if !ok {
		return
	}
	dctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	up, err := p.o.Dial(dctx, "tcp", to.String())
	cancel()
	if err != nil {
		unreachable(w, err)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		_ = up.Close()
		http.Error(w, "durable-browser egress proxy: cannot tunnel", http.StatusInternalServerError)
		return
	}
	c, brw, err := hj.Hijack()
	if err != nil {
		_ = up.Close()
		return
	}
	if !p.track(c) {
		_ = c.Close()
		_ = up.Close()
		return
	}
	defer p.untrack(c)
	if !p.track(up) {
		_ = up.Close()
		return
	}
	defer p.untrack(up)
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
		return
	}
	br := brw.Reader
	first, err := br.Peek(1)
	if err != nil {
		return
	}
	if first[0] == 0x16 {
		if p.ca != nil {
			p.tlsTunnel(c, br, up, authority)
			return
		}
		// TLS (https, wss) without interception: judged by host and port
		// above; its content is not readable here.
		splice(c, br, up, up)
		return
	}
	p.exchanges(c, br, up, bufio.NewReader(up), "http", authority)
}

// splice copies both ways until both are done, passing on half-closes.
func splice(c net.Conn, cr io.Reader, up net.Conn, ur io.Reader) {
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(c, ur)
		closeWrite(c)
		close(done)
	}()
	_, _ = io.Copy(up, cr)
	closeWrite(up)
	<-done
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	_ = c.Close()
}

// exchanges serves the HTTP/1.1 a tunnel carries, in the clear (ws://,
// or http through a CONNECT) or decrypted (scheme https): each request is
// searched for secrets before it goes, and a WebSocket's frames from the
// page are searched one by one, with the secrets typed at the time of each
// frame. It returns when either side closes or a refusal ends the tunnel.
func (p *Proxy) exchanges(c net.Conn, br *bufio.Reader, up net.Conn, ubr *bufio.Reader, scheme, authority string) {
	origin := redact.OriginOf(scheme + "://" + authority)
	deny := func(b Blocked) {
		p.refused(b)
		_, _ = io.WriteString(c, "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
	}
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		ws := strings.EqualFold(req.Header.Get("Upgrade"), "websocket")
		shown := origin
		if ws {
			shown = "ws" + strings.TrimPrefix(origin, "http")
		}
		req.URL.Scheme, req.URL.Host = scheme, authority
		if !printable(req.Host) {
			// Go would send such a Host in punycode: a spelling
			// made here, after the search (browsers send ASCII).
			deny(Blocked{Method: req.Method, Origin: shown, Rule: string(netguard.RuleInvalid), Message: "a request whose Host header is not printable ASCII is refused (rule invalid)"})
			return
		}
		release := func() {}
		if m := p.armed.Load(); m != nil {
			if _, ok := m.Unbound(origin); ok {
				var body []byte
				var unread string
				body, unread, release = p.readBody(req)
				if name, why, hit := p.findSecret(m, origin, req, body, unread); hit {
					release()
					deny(Blocked{Method: req.Method, Origin: shown, Rule: RuleSecret, Secret: name,
						Message: fmt.Sprintf("%s is not one of the origins secret %s belongs to, and %s", shown, name, why)})
					return
				}
			}
		}
		if _, ok := req.Header["User-Agent"]; !ok {
			// Sent on as it came: Go would add its own.
			req.Header["User-Agent"] = []string{""}
		}
		if ws {
			release() // a handshake's body, if any, is not sent on
			p.webSocket(c, br, up, ubr, req, origin, shown)
			return
		}
		// Any other protocol switch would carry on unread: it is not asked for.
		req.Header.Del("Upgrade")
		err = buffered(up, &req.Body, req.Write)
		release() // sent, or never will be
		if err != nil {
			return
		}
		for {
			resp, err := http.ReadResponse(ubr, req)
			if err != nil || resp.StatusCode == http.StatusSwitchingProtocols {
				return
			}
			resp.Header.Del(UnreachableHeader) // only the proxy says so
			werr := buffered(c, &resp.Body, resp.Write)
			_ = resp.Body.Close()
			if werr != nil {
				return
			}
			if resp.StatusCode >= 200 {
				if resp.Close || req.Close {
					return
				}
				break
			}
			// An informational answer (103 Early Hints): the final one follows.
		}
	}
}

// webSocket passes a WebSocket handshake on and then its frames, those
// from the page searched (frames).
func (p *Proxy) webSocket(c net.Conn, br *bufio.Reader, up net.Conn, ubr *bufio.Reader, req *http.Request, origin, shown string) {
	// Compressed frames could not be searched: the page's offer of
	// permessage-deflate is withdrawn, so a conforming server sends and
	// expects plain frames.
	req.Header.Del("Sec-WebSocket-Extensions")
	if err := req.Write(up); err != nil {
		return
	}
	resp, err := http.ReadResponse(ubr, req)
	if err != nil {
		return
	}
	resp.Header.Del(UnreachableHeader)
	if err := resp.Write(c); err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		return
	}
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(c, ubr)
		closeWrite(c)
		close(done)
	}()
	if b, blocked := p.frames(br, up, origin, shown); blocked {
		p.refused(b)
		_ = c.Close()
		_ = up.Close()
	} else {
		closeWrite(up)
	}
	<-done
}

// buffered writes an HTTP message (write is its Request.Write or
// Response.Write) through a buffer that is sent before each read of its
// body: the header goes in one write (one TLS record, not one per line)
// and a streamed body (server-sent events) is not held back.
func buffered(w io.Writer, body *io.ReadCloser, write func(io.Writer) error) error {
	bw := bufio.NewWriterSize(w, 8<<10)
	if *body != nil && *body != http.NoBody {
		*body = flushFirst{ReadCloser: *body, w: bw}
	}
	// Only Write: bufio's ReadFrom would read the body into the buffer
	// that flushFirst flushes under it.
	if err := write(struct{ io.Writer }{bw}); err != nil {
		return err
	}
	return bw.Flush()
}

type flushFirst struct {
	io.ReadCloser
	w *bufio.Writer
}

func (f flushFirst) Read(p []byte) (int, error) {
	if err := f.w.Flush(); err != nil {
		return 0, err
	}
	return f.ReadCloser.Read(p)
}

// printable says whether s is printable ASCII throughout.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}
