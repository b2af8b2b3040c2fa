package webfetch

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/idna"

	"github.com/durable-browser/durable-browser/internal/netguard"
)

// RefusalKind says which rule refused a fetch.
type RefusalKind string

// The refusal kinds.
const (
	RefusedURL       RefusalKind = "url"       // not an absolute http(s) URL, or it carries credentials
	RefusedAddress   RefusalKind = "address"   // the host is or resolves to a non-public address
	RefusedPort      RefusalKind = "port"      // a port other than 80 and 443
	RefusedRedirects RefusalKind = "redirects" // more redirect hops than allowed, or a bad Location
	RefusedType      RefusalKind = "type"      // not a text-like content type (nor a PDF)
	RefusedSize      RefusalKind = "size"      // the body is over the size cap
)

// RefusedError says the fetch was declined by the guard; nothing was read
// from the refused address.
type RefusedError struct {
	Kind   RefusalKind
	Reason string // says what was refused and what would be accepted
}

func (e *RefusedError) Error() string { return "web_fetch refused: " + e.Reason }

func refuse(kind RefusalKind, format string, args ...any) *RefusedError {
	return &RefusedError{Kind: kind, Reason: fmt.Sprintf(format, args...)}
}

// target is one vetted hop: where to send the request and which addresses
// the dial may use.
type target struct {
	url   *url.URL     // the request URL (host canonicalised for IP spellings)
	addrs []netip.Addr // vetted addresses, in resolver order
	port  string
}

// checkAddr returns nil when a is a public unicast address. allowLoopback
// additionally admits 127.0.0.0/8 and ::1 (test mode only). Which addresses
// are public is netguard's decision, shared with the browser's reach guard.
func checkAddr(a netip.Addr, allowLoopback bool) error {
	a = a.WithZone("")
	if !a.IsValid() {
		return refuse(RefusedAddress, "invalid address")
	}
	v := netguard.Classify(a)
	switch {
	case v.Class == netguard.Public:
		return nil
	case allowLoopback && v.Class == netguard.Loopback && (a.IsLoopback() || a.Is4In6()):
		return nil
	case nat64.Contains(a):
		return refuse(RefusedAddress, "NAT64 address %s carries the non-public %s; web_fetch reads public hosts only", a, v.Addr)
	case sixToFour.Contains(a):
		return refuse(RefusedAddress, "6to4 address %s carries the non-public %s; web_fetch reads public hosts only", a, v.Addr)
	case v.Range.IsValid():
		return refuse(RefusedAddress, "address %s is in the non-public range %s; web_fetch reads public hosts only", v.Addr, v.Range)
	}
	return refuse(RefusedAddress, "address %s is not a public unicast address", a)
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// parseLegacyIPv4 reads the IPv4 spellings browsers accept (netguard).
func parseLegacyIPv4(host string) (netip.Addr, bool, bool) { return netguard.ParseLegacyIPv4(host) }

// parseURL applies the URL rules: absolute http(s), a host, no userinfo, a
// permitted port. It returns the URL with its host canonicalised and, when
// the host is an IP literal in any spelling, that address.
func (f *Fetcher) parseURL(raw string) (*url.URL, netip.Addr, error) {
	if strings.ContainsAny(raw, " \t\r\n\\") {
		return nil, netip.Addr{}, refuse(RefusedURL, "the URL holds whitespace or a backslash; give an absolute http(s) URL")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, netip.Addr{}, refuse(RefusedURL, "the URL does not parse; give an absolute http(s) URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, netip.Addr{}, refuse(RefusedURL, "only absolute http and https URLs are fetched (got scheme %q)", u.Scheme)
	}
	if u.Opaque != "" || u.Host == "" {
		return nil, netip.Addr{}, refuse(RefusedURL, "the URL has no host; give an absolute http(s) URL such as https://example.com/")
	}
	if u.User != nil {
		return nil, netip.Addr{}, refuse(RefusedURL, "the URL carries credentials (user:password@); remove them")
	}
	port := u.Port()
	if port != "" && port != "80" && port != "443" && !f.o.AllowLoopback {
		return nil, netip.Addr{}, refuse(RefusedPort, "port %s is not fetched; only ports 80 and 443 are", port)
	}
	if strings.HasSuffix(u.Host, ":") {
		return nil, netip.Addr{}, refuse(RefusedURL, "the URL has an empty port")
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "" {
		return nil, netip.Addr{}, refuse(RefusedURL, "the URL has no host")
	}
	u.Fragment, u.RawFragment = "", ""

	// Bracketed IPv6 (Hostname strips the brackets) or a plain dotted quad.
	if strings.Contains(host, ":") || strings.Contains(host, "%") {
		a, err := netip.ParseAddr(host)
		if err != nil {
			return nil, netip.Addr{}, refuse(RefusedURL, "the host is not a valid address")
		}
		if err := checkAddr(a, f.o.AllowLoopback); err != nil {
			return nil, netip.Addr{}, err
		}
		return u, a, nil
	}
	if a, numeric, ok := parseLegacyIPv4(host); numeric {
		if !ok {
			return nil, netip.Addr{}, refuse(RefusedURL, "the host looks like an IPv4 address but is not a valid one")
		}
		if err := checkAddr(a, f.o.AllowLoopback); err != nil {
			return nil, netip.Addr{}, err
		}
		// Send the canonical spelling so Host and SNI are the address itself.
		u.Host = joinHostPort(a.String(), port)
		return u, a, nil
	}
	ascii, err := idna.Lookup.ToASCII(host)
	if err != nil || ascii == "" {
		return nil, netip.Addr{}, refuse(RefusedURL, "the host name is not valid")
	}
	for _, c := range ascii {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return nil, netip.Addr{}, refuse(RefusedURL, "the host name is not valid")
		}
	}
	if !f.o.AllowLoopback && (ascii == "localhost" || strings.HasSuffix(ascii, ".localhost")) {
		return nil, netip.Addr{}, refuse(RefusedAddress, "localhost is not fetched; web_fetch reads public hosts only")
	}
	u.Host = joinHostPort(ascii, port)
	return u, netip.Addr{}, nil
}

func joinHostPort(host, port string) string {
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port == "" {
		return host
	}
	return host + ":" + port
}

// vet applies every rule to one hop and resolves its host once. The returned
// addresses are the only ones the hop may dial.
func (f *Fetcher) vet(ctx context.Context, raw string) (*target, error) {
	u, lit, err := f.parseURL(raw)
	if err != nil {
		return nil, err
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	if _, err := strconv.Atoi(port); err != nil {
		return nil, refuse(RefusedPort, "the port is not a number")
	}
	if lit.IsValid() {
		return &target{url: u, addrs: []netip.Addr{lit.WithZone("").Unmap()}, port: port}, nil
	}
	ips, err := f.o.Resolver.LookupIPAddr(ctx, u.Hostname())
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &LookupError{Host: u.Hostname(), Err: err}
	}
	if len(ips) == 0 {
		return nil, &LookupError{Host: u.Hostname(), Err: fmt.Errorf("no addresses")}
	}
	addrs := make([]netip.Addr, 0, len(ips))
	for _, ip := range ips {
		a, ok := netip.AddrFromSlice(ip.IP)
		if !ok {
			return nil, refuse(RefusedAddress, "%s resolved to an invalid address", u.Hostname())
		}
		// One non-public answer refuses the name, even beside public ones:
		// otherwise a rebinding name could pick the private one later.
		if err := checkAddr(a, f.o.AllowLoopback); err != nil {
			return nil, refuse(RefusedAddress, "%s resolves to %s, which is not public; web_fetch reads public hosts only", u.Hostname(), a.Unmap())
		}
		addrs = append(addrs, a.Unmap())
	}
	return &target{url: u, addrs: addrs, port: port}, nil
}

// LookupError says the host name could not be resolved.
type LookupError struct {
	Host string
	Err  error
}

func (e *LookupError) Error() string {
	return fmt.Sprintf("web_fetch: cannot resolve %s: %v; check the host name", e.Host, e.Err)
}

// Unwrap returns the resolver's error.
func (e *LookupError) Unwrap() error { return e.Err }

// dialer returns a DialContext that ignores the address net/http asks for
// and dials only t's vetted addresses, so DNS is never consulted again.
func (t *target) dialer() func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		var firstErr error
		for _, a := range t.addrs {
			c, err := d.DialContext(ctx, network, net.JoinHostPort(a.String(), t.port))
			if err == nil {
				return c, nil
			}
			if firstErr == nil {
				firstErr = err
			}
			if ctx.Err() != nil {
				break
			}
		}
		return nil, firstErr
	}
}
