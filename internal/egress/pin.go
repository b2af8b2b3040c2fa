package egress

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/durable-browser/durable-browser/internal/netguard"
)

// Resolver looks names up (net.DefaultResolver).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

const lookupMax = 5 * time.Second

// Pin decides whether a connection to hostport ("host:port", as a CONNECT
// or a request URL names it) may be made and, when it may, returns the one
// address to connect to. The name is resolved here, once: every answer
// must pass the policy, and the connection goes to an answer that was
// checked, never to what a second lookup might say (no DNS rebinding
// between check and connect). scheme is the request's, for the port a URL
// leaves out ("" for a CONNECT, which always names its port).
func Pin(ctx context.Context, p *netguard.Policy, r Resolver, scheme, hostport string) (netip.AddrPort, netguard.Decision) {
	t, ok := target(scheme, hostport)
	if !ok {
		return netip.AddrPort{}, netguard.Decision{Rule: netguard.RuleInvalid, Message: fmt.Sprintf("%q is not a host and port (rule invalid)", clip(hostport))}
	}
	port, err := strconv.ParseUint(t.Port, 10, 16)
	if err != nil || port == 0 {
		return netip.AddrPort{}, netguard.Decision{Rule: netguard.RuleInvalid, Message: fmt.Sprintf("%q has no valid port (rule invalid)", clip(hostport))}
	}
	var addrs []netip.Addr
	var lerr error
	switch {
	case t.Host.Addr.IsValid():
		addrs = []netip.Addr{t.Host.Addr}
	case netguard.IsLocalhostName(t.Host.Name):
		// Never asked of DNS: localhost is this machine, as the guard
		// judges it.
		addrs = []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	case !t.Host.Invalid:
		// What the policy refuses whatever the name resolves to (the
		// allow list, a service by name) is refused without a lookup, so
		// the name does not even reach DNS.
		if pre := p.Decide(t, nil, nil); !pre.Allowed() && pre.Rule != netguard.RuleUnresolve {
			return netip.AddrPort{}, pre
		}
		if r == nil {
			r = net.DefaultResolver
		}
		lctx, cancel := context.WithTimeout(ctx, lookupMax)
		addrs, lerr = r.LookupNetIP(lctx, "ip", t.Host.Name)
		cancel()
		if lerr != nil {
			addrs = nil
		}
	}
	// Decide judges the answers of a name the policy needs resolved; a
	// name it settles without them (an operator's allowed host) still
	// connects only to an address that resolved.
	d := p.Decide(t, addrs, lerr)
	if !d.Allowed() {
		return netip.AddrPort{}, d
	}
	if len(addrs) == 0 {
		return netip.AddrPort{}, netguard.Decision{Rule: netguard.RuleUnresolve, Message: fmt.Sprintf("%s did not resolve (rule unresolved)", t.Host.Name)}
	}
	// A proxy of this process is never a destination: through it a page
	// would leave under another session's policy.
	for _, a := range addrs {
		if isProxy(netip.AddrPortFrom(a, uint16(port))) {
			return netip.AddrPort{}, netguard.Decision{Rule: netguard.RuleService, Message: fmt.Sprintf("%s:%s is this worker's egress proxy (rule service); the browser never reaches the worker's own services, and no flag allows it", t.Host.Name, t.Port)}
		}
	}
	return netip.AddrPortFrom(addrs[0].WithZone(""), uint16(port)), d
}

// target reads "host:port" (a CONNECT's authority, a URL's host) as the
// guard's Target.
func target(scheme, hostport string) (netguard.Target, bool) {
	h, port, err := net.SplitHostPort(hostport)
	if err != nil {
		// A URL's host without a port: the scheme's default.
		if scheme == "" {
			return netguard.Target{}, false
		}
		h, port = hostport, ""
		if len(h) > 1 && h[0] == '[' && h[len(h)-1] == ']' {
			h = h[1 : len(h)-1]
		}
	}
	if port == "" {
		switch scheme {
		case "https", "wss":
			port = "443"
		case "":
			return netguard.Target{}, false
		default:
			port = "80"
		}
	}
	if scheme == "" {
		scheme = "https"
	}
	return netguard.Target{Scheme: scheme, Host: netguard.ParseHost(h), Port: port}, true
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
