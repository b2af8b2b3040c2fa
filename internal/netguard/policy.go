package netguard

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"sync"
)

// Rule names why the reach guard blocked a request.
type Rule string

// The reach rules.
const (
	RuleMetadata  Rule = "metadata"   // the cloud metadata range
	RuleService   Rule = "service"    // one of the worker's own services
	RuleLoopback  Rule = "loopback"   // the worker's own machine
	RulePrivate   Rule = "private"    // a private network range
	RuleSpecial   Rule = "special"    // another non-public range
	RuleInvalid   Rule = "invalid"    // a host that is no valid name or address
	RuleUnresolve Rule = "unresolved" // the name did not resolve, so where it points is unknown
	RuleAllowList Rule = "allow_list" // not on the session's allow_hosts
)

// Service is one of the worker's own services, which the browser never
// reaches: Temporal's frontend and UI, the S3 endpoint, the handoff webhook.
type Service struct {
	Name string // what it is, for messages: "Temporal frontend"
	Host string // as configured: a name or an address
	Port string
	// Addrs are what Host resolved to when the worker started, so another
	// name for the same address is caught too.
	Addrs []netip.Addr
}

// ServiceFromAddress makes a Service from host:port or a URL; ok is false
// when addr names neither.
func ServiceFromAddress(name, addr string) (Service, bool) {
	if addr == "" {
		return Service{}, false
	}
	if strings.Contains(addr, "://") {
		u, err := url.Parse(addr)
		if err != nil || u.Hostname() == "" {
			return Service{}, false
		}
		return Service{Name: name, Host: u.Hostname(), Port: portOf(u.Scheme, u.Port())}, true
	}
	h, p, err := net.SplitHostPort(addr)
	if err != nil || p == "" {
		return Service{}, false
	}
	if h == "" {
		h = "0.0.0.0"
	}
	return Service{Name: name, Host: h, Port: p}, true
}

// Policy is where a browser may go. The zero Policy is the strictest: only
// public addresses, never the worker's services.
type Policy struct {
	// AllowLoopback admits 127.0.0.0/8, ::1 and localhost (dev, for its demo
	// site). Services stay blocked.
	AllowLoopback bool
	// AllowPrivate admits private and loopback ranges (worker flag
	// --browser-allow-private). Metadata and services stay blocked.
	AllowPrivate bool
	// AllowHosts are hosts exempt from the address rules (worker flag
	// --browser-allow-hosts): a name ("intranet.corp"), a wildcard
	// ("*.corp" for its subdomains) or an address in any spelling. They
	// never exempt a service.
	AllowHosts []string
	// Services are the worker's own; blocked whatever else is allowed.
	Services []Service
	// Listeners are more of the worker's own services that come and go
	// (every browser's DevTools port): blocked as Services are. Copies of
	// a Policy share them.
	Listeners *Listeners
	// HostAddrs are the addresses of this host's own interfaces: a service
	// on loopback, on every interface (0.0.0.0, ::) or on one of these is
	// reached at any of them, so it is matched at all of them.
	HostAddrs []netip.Addr
	// SessionHosts, when not empty, is the session's allow list: requests
	// to any other host are blocked. Same forms as AllowHosts.
	SessionHosts []string
}

// Listeners is a set of services, safe for concurrent use.
type Listeners struct {
	mu sync.RWMutex
	m  map[string]Service
}

// Add blocks s under key (replacing what key held).
func (l *Listeners) Add(key string, s Service) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[string]Service{}
	}
	l.m[key] = s
}

// Remove stops blocking what key held.
func (l *Listeners) Remove(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.m, key)
}

func (l *Listeners) list() []Service {
	if l == nil {
		return nil
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make([]Service, 0, len(l.m))
	for _, s := range l.m {
		out = append(out, s)
	}
	return out
}

// Target is one request's destination as the guard sees it.
type Target struct {
	Scheme string
	Host   Host
	Port   string // explicit or the scheme's default
}

// ParseTarget reads a request URL. ok is false for URLs without a network
// destination (data:, blob:, about:, ...), which the guard lets through.
func ParseTarget(raw string) (t Target, ok bool) {
	i := strings.Index(raw, "://")
	if i <= 0 {
		return Target{}, false
	}
	scheme := strings.ToLower(raw[:i])
	switch scheme {
	case "http", "https", "ws", "wss", "ftp":
	default:
		return Target{}, false
	}
	u, err := url.Parse(raw)
	if err != nil {
		// A URL Go cannot parse still has a host a browser might use: judge
		// it by hand so it fails closed.
		rest := raw[i+3:]
		if j := strings.IndexAny(rest, "/?#"); j >= 0 {
			rest = rest[:j]
		}
		if j := strings.LastIndex(rest, "@"); j >= 0 {
			rest = rest[j+1:]
		}
		return Target{Scheme: scheme, Host: Host{Name: rest, Invalid: true}, Port: portOf(scheme, "")}, true
	}
	return Target{Scheme: scheme, Host: ParseHost(u.Hostname()), Port: portOf(scheme, u.Port())}, true
}

func portOf(scheme, port string) string {
	if port != "" {
		return port
	}
	switch scheme {
	case "https", "wss":
		return "443"
	case "ftp":
		return "21"
	}
	return "80"
}

// NeedsLookup reports whether deciding about t needs its name resolved:
// it is a name, not an address, and not one the policy already settles.
func (p *Policy) NeedsLookup(t Target) bool {
	if t.Host.Addr.IsValid() || t.Host.Invalid || IsLocalhostName(t.Host.Name) {
		return false
	}
	if len(p.SessionHosts) > 0 && !matchHosts(p.SessionHosts, t.Host) {
		return false // blocked by the allow list whatever it resolves to
	}
	return !matchHosts(p.AllowHosts, t.Host)
}

// Decision is the guard's answer. Rule is empty when the request may go.
type Decision struct {
	Rule    Rule
	Message string // names the rule and what would allow it
}

// Allowed reports whether the request may leave.
func (d Decision) Allowed() bool { return d.Rule == "" }

// Decide says whether a request to t may leave. addrs are what t's name
// resolved to (ignored for address literals); lookupErr is the lookup's
// failure. It is pure: the caller resolves.
func (p *Policy) Decide(t Target, addrs []netip.Addr, lookupErr error) Decision {
	where := t.Host.Name + ":" + t.Port
	if t.Host.Invalid || t.Host.Name == "" {
		return Decision{RuleInvalid, fmt.Sprintf("%s is not a valid host (rule invalid)", quoteHost(t.Host.Name))}
	}
	if t.Host.Addr.IsValid() {
		addrs = []netip.Addr{t.Host.Addr}
	} else if IsLocalhostName(t.Host.Name) {
		addrs = []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")}
	}
	// The worker's own services: by name, and by every address the name
	// reaches. No flag opens them.
	services := p.Services
	if more := p.Listeners.list(); len(more) > 0 {
		services = append(append([]Service(nil), services...), more...)
	}
	for _, s := range services {
		if s.Port != t.Port {
			continue
		}
		sh := ParseHost(s.Host)
		hit := sh.Name == t.Host.Name
		for _, a := range addrs {
			if hit {
				break
			}
			hit = p.sameService(sh, a)
			for _, sa := range s.Addrs {
				hit = hit || p.sameService(Host{Name: sa.String(), Addr: sa}, a)
			}
		}
		if hit {
			return Decision{RuleService, fmt.Sprintf("%s is this worker's %s (rule service); the browser never reaches the worker's own services, and no flag allows it", where, s.Name)}
		}
	}
	// An address (or localhost) is judged by the operator's rules first,
	// so a request to the metadata address says so even under an allow list.
	literal := t.Host.Addr.IsValid() || IsLocalhostName(t.Host.Name)
	operatorAllowed := matchHosts(p.AllowHosts, t.Host)
	if literal && !operatorAllowed {
		for _, a := range addrs {
			if d := p.decideClass(t, a, Classify(a)); !d.Allowed() {
				return d
			}
		}
	}
	if len(p.SessionHosts) > 0 && !matchHosts(p.SessionHosts, t.Host) {
		return Decision{RuleAllowList, fmt.Sprintf("%s is not on this session's allow_hosts (rule allow_list); open a session whose allow_hosts includes it", t.Host.Name)}
	}
	if operatorAllowed || literal {
		return Decision{}
	}
	if len(addrs) == 0 {
		return Decision{RuleUnresolve, fmt.Sprintf("%s did not resolve (rule unresolved); the guard lets the browser reach a name only once it knows where the name points", t.Host.Name)}
	}
	for _, a := range addrs {
		if d := p.decideClass(t, a, Classify(a)); !d.Allowed() {
			return d
		}
	}
	return Decision{}
}

func (p *Policy) decideClass(t Target, a netip.Addr, v Verdict) Decision {
	subject := t.Host.Name
	if !t.Host.Addr.IsValid() && !IsLocalhostName(t.Host.Name) {
		subject = fmt.Sprintf("%s (resolves to %s)", t.Host.Name, a.WithZone(""))
	}
	rangeText := ""
	if v.Range.IsValid() {
		rangeText = " " + v.Range.String()
	}
	switch v.Class {
	case Public:
		return Decision{}
	case Metadata:
		return Decision{RuleMetadata, fmt.Sprintf("%s is in the cloud metadata range%s (rule metadata); allow it only with --browser-allow-hosts %s on the worker", subject, rangeText, t.Host.Name)}
	case Loopback:
		if p.AllowLoopback || p.AllowPrivate {
			return Decision{}
		}
		return Decision{RuleLoopback, fmt.Sprintf("%s is the worker's own machine%s (rule loopback); allow it with --browser-allow-private or --browser-allow-hosts %s on the worker", subject, rangeText, t.Host.Name)}
	case Private:
		if p.AllowPrivate {
			return Decision{}
		}
		return Decision{RulePrivate, fmt.Sprintf("%s is in the private range%s (rule private); allow it with --browser-allow-private or --browser-allow-hosts %s on the worker", subject, rangeText, t.Host.Name)}
	}
	return Decision{RuleSpecial, fmt.Sprintf("%s is in the special-purpose range%s (rule special); allow it only with --browser-allow-hosts %s on the worker", subject, rangeText, t.Host.Name)}
}

// sameService reports whether address a reaches service host sh: the same
// address, or, for a service on this host (loopback, every interface, or
// one of HostAddrs), any address of this host.
func (p *Policy) sameService(sh Host, a netip.Addr) bool {
	a = a.WithZone("").Unmap()
	if sh.Addr.IsValid() {
		s := sh.Addr.WithZone("").Unmap()
		if s == a {
			return true
		}
		return p.onThisHost(s) && p.onThisHost(a)
	}
	if IsLocalhostName(sh.Name) {
		return p.onThisHost(a)
	}
	return false
}

// onThisHost says whether a reaches this host: loopback, unspecified,
// 0.0.0.0/8, or one of its interfaces' addresses.
func (p *Policy) onThisHost(a netip.Addr) bool {
	a = a.WithZone("").Unmap()
	if a.IsLoopback() || a.IsUnspecified() || (a.Is4() && a.As4()[0] == 0) {
		return true
	}
	for _, h := range p.HostAddrs {
		if h.WithZone("").Unmap() == a {
			return true
		}
	}
	return false
}

// matchHosts reports whether h is on a host list.
func matchHosts(list []string, h Host) bool {
	for _, e := range list {
		e = strings.ToLower(strings.TrimSpace(e))
		if e == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(e, "*."); ok {
			rest = strings.TrimSuffix(rest, ".")
			if !h.Addr.IsValid() && rest != "" && strings.HasSuffix(h.Name, "."+rest) {
				return true
			}
			continue
		}
		eh := ParseHost(e)
		if eh.Invalid {
			continue
		}
		if eh.Addr.IsValid() || h.Addr.IsValid() {
			if eh.Addr.IsValid() && h.Addr.IsValid() && eh.Addr.Unmap() == h.Addr.Unmap() {
				return true
			}
			continue
		}
		if eh.Name == h.Name {
			return true
		}
	}
	return false
}

func quoteHost(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return fmt.Sprintf("%q", s)
}

// ValidateHostList checks a list of host entries (flags, session options)
// and returns the first bad one's problem.
func ValidateHostList(list []string) error {
	for _, e := range list {
		e = strings.TrimSpace(e)
		if e == "" {
			return fmt.Errorf("an empty host")
		}
		name := strings.TrimPrefix(e, "*.")
		h := ParseHost(name)
		if h.Addr.IsValid() && !strings.HasPrefix(e, "*.") {
			continue
		}
		if h.Invalid || h.Name == "" || h.Addr.IsValid() || strings.ContainsAny(h.Name, "/:@ ?#*[]%\\") {
			return fmt.Errorf("%q is not a host: give a name, *.domain or an address, without scheme, port or path", e)
		}
	}
	return nil
}
