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

// blockedV4 are IPv4 ranges that are not publicly routable or are special
// purpose (RFC 6890 and successors).
var blockedV4 = mustPrefixes(
	"0.0.0.0/8",          // "this network"
	"10.0.0.0/8",         // private
	"100.64.0.0/10",      // CGNAT shared address space
	"127.0.0.0/8",        // loopback
	"169.254.0.0/16",     // link-local (cloud metadata lives here)
	"172.16.0.0/12",      // private
	"192.0.0.0/24",       // IETF protocol assignments
	"192.0.2.0/24",       // documentation TEST-NET-1
	"192.88.99.0/24",     // 6to4 relay anycast (deprecated)
	"192.168.0.0/16",     // private
	"198.18.0.0/15",      // benchmarking
	"198.51.100.0/24",    // documentation TEST-NET-2
	"203.0.113.0/24",     // documentation TEST-NET-3
	"224.0.0.0/4",        // multicast
	"240.0.0.0/4",        // reserved, includes broadcast 255.255.255.255
	"255.255.255.255/32", // broadcast (inside 240/4; listed for clarity)
)

// blockedV6 are IPv6 ranges refused outright. v4-mapped, NAT64 and 6to4
// addresses are judged by the IPv4 address they carry (see checkAddr).
var blockedV6 = mustPrefixes(
	"::/96",          // unspecified, loopback and deprecated v4-compatible
	"100::/64",       // discard-only
	"64:ff9b:1::/48", // local-use NAT64
	"2001::/23",      // IETF protocol assignments (Teredo, ORCHID, ...)
	"2001:db8::/32",  // documentation
	"3fff::/20",      // documentation (RFC 9637)
	"5f00::/16",      // SRv6 SIDs
	"fc00::/7",       // unique local
	"fe80::/10",      // link-local
	"fec0::/10",      // site-local (deprecated)
	"ff00::/8",       // multicast
)

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

func mustPrefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// checkAddr returns nil when a is a public unicast address. allowLoopback
// additionally admits 127.0.0.0/8 and ::1 (test mode only).
func checkAddr(a netip.Addr, allowLoopback bool) error {
	a = a.WithZone("")
	if !a.IsValid() {
		return refuse(RefusedAddress, "invalid address")
	}
	if allowLoopback && a.IsLoopback() {
		return nil
	}
	if a.Is4In6() {
		return checkAddr(a.Unmap(), allowLoopback)
	}
	if a.Is4() {
		for _, p := range blockedV4 {
			if p.Contains(a) {
				return refuse(RefusedAddress, "address %s is in the non-public range %s; web_fetch reads public hosts only", a, p)
			}
		}
		return nil
	}
	b := a.As16()
	if nat64.Contains(a) {
		v4 := netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		if err := checkAddr(v4, false); err != nil {
			return refuse(RefusedAddress, "NAT64 address %s carries the non-public %s; web_fetch reads public hosts only", a, v4)
		}
		return nil
	}
	if sixToFour.Contains(a) {
		v4 := netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
		if err := checkAddr(v4, false); err != nil {
			return refuse(RefusedAddress, "6to4 address %s carries the non-public %s; web_fetch reads public hosts only", a, v4)
		}
		return nil
	}
	for _, p := range blockedV6 {
		if p.Contains(a) {
			return refuse(RefusedAddress, "address %s is in the non-public range %s; web_fetch reads public hosts only", a, p)
		}
	}
	if !a.IsGlobalUnicast() {
		return refuse(RefusedAddress, "address %s is not a public unicast address", a)
	}
	return nil
}

// parseLegacyIPv4 reads the IPv4 spellings browsers accept as hosts
// (WHATWG URL "IPv4 parser"): one to four dot-separated parts, each decimal,
// 0x-hex or 0-octal, the last part filling the remaining bytes, so
// "2130706433", "0x7f000001", "0177.0.0.1" and "127.1" are all 127.0.0.1.
// isNumeric reports whether the host's last label is numeric (then the host
// is an IPv4 address or invalid, never a name); ok reports a valid address.
func parseLegacyIPv4(host string) (addr netip.Addr, isNumeric, ok bool) {
	parts := strings.Split(host, ".")
	if len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) == 0 {
		return netip.Addr{}, false, false
	}
	if _, numeric := parsePart(parts[len(parts)-1]); !numeric {
		return netip.Addr{}, false, false
	}
	if len(parts) > 4 {
		return netip.Addr{}, true, false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, numeric := parsePart(p)
		if !numeric {
			return netip.Addr{}, true, false
		}
		nums[i] = n
	}
	var v uint64
	for i, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, true, false
		}
		v |= n << (8 * (3 - uint(i)))
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-uint(len(nums)))) {
		return netip.Addr{}, true, false
	}
	v |= last
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true, true
}

// parsePart parses one IPv4 part; numeric is false when it is not a number
// in any of the accepted bases. Values too large for 32 bits are clamped so
// range checks fail.
func parsePart(p string) (n uint64, numeric bool) {
	if p == "" {
		return 0, false
	}
	base := 10
	switch {
	case len(p) >= 2 && (p[:2] == "0x" || p[:2] == "0X"):
		base, p = 16, p[2:]
		if p == "" {
			return 0, true
		}
	case len(p) >= 2 && p[0] == '0':
		base, p = 8, p[1:]
	}
	for _, c := range p {
		var d uint64
		switch {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case base == 16 && c >= 'a' && c <= 'f':
			d = uint64(c-'a') + 10
		case base == 16 && c >= 'A' && c <= 'F':
			d = uint64(c-'A') + 10
		default:
			return 0, false
		}
		if d >= uint64(base) {
			return 0, false
		}
		if n < 1<<40 {
			n = n*uint64(base) + d
		}
	}
	return n, true
}

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
