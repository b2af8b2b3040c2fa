// Package netguard is the one place that says which network addresses are
// special (loopback, private, link-local, cloud metadata, reserved, ...) and
// how browsers spell IP addresses. web_fetch uses it to keep to public hosts;
// the browser's reach guard uses it to decide, for every request a page
// makes, whether that request may leave. Everything here is pure: no lookups,
// no I/O.
package netguard

import (
	"net/netip"
	"strings"
)

// Class is what kind of address something is. The zero value is Public.
type Class string

// Address classes, from most to least specific.
const (
	Public   Class = ""
	Metadata Class = "metadata" // cloud metadata: 169.254.0.0/16, fd00:ec2::254
	Loopback Class = "loopback" // 127.0.0.0/8, ::1
	Private  Class = "private"  // RFC 1918, CGNAT, unique local and link-local IPv6
	Special  Class = "special"  // any other non-public range: this-network, multicast, reserved, documentation, ...
)

// Verdict is an address's class and the range that put it there. Addr is
// the address judged: for v4-mapped, NAT64 and 6to4 addresses, the IPv4
// address they carry.
type Verdict struct {
	Class Class
	Range netip.Prefix
	Addr  netip.Addr
}

type rangeClass struct {
	p netip.Prefix
	c Class
}

// v4Ranges are IPv4 ranges that are not publicly routable or are special
// purpose (RFC 6890 and successors). The first match decides.
var v4Ranges = ranges(
	"169.254.0.0/16", Metadata, // link-local; cloud metadata lives here
	"127.0.0.0/8", Loopback,
	"0.0.0.0/8", Special, // "this network" (0.0.0.0 reaches the local host on Linux)
	"10.0.0.0/8", Private,
	"100.64.0.0/10", Private, // CGNAT shared address space
	"172.16.0.0/12", Private,
	"192.168.0.0/16", Private,
	"192.0.0.0/24", Special, // IETF protocol assignments
	"192.0.2.0/24", Special, // documentation TEST-NET-1
	"192.88.99.0/24", Special, // 6to4 relay anycast (deprecated)
	"198.18.0.0/15", Special, // benchmarking
	"198.51.100.0/24", Special, // documentation TEST-NET-2
	"203.0.113.0/24", Special, // documentation TEST-NET-3
	"224.0.0.0/4", Special, // multicast
	"240.0.0.0/4", Special, // reserved, includes broadcast 255.255.255.255
)

// v6Ranges are IPv6 ranges judged outright. v4-mapped, NAT64 and 6to4
// addresses are judged by the IPv4 address they carry.
var v6Ranges = ranges(
	"fd00:ec2::254/128", Metadata, // AWS IMDS over IPv6
	"::1/128", Loopback,
	"::/96", Special, // unspecified and deprecated v4-compatible
	"100::/64", Special, // discard-only
	"64:ff9b:1::/48", Special, // local-use NAT64
	"2001::/23", Special, // IETF protocol assignments (Teredo, ORCHID, ...)
	"2001:db8::/32", Special, // documentation
	"3fff::/20", Special, // documentation (RFC 9637)
	"5f00::/16", Special, // SRv6 SIDs
	"fc00::/7", Private, // unique local
	"fe80::/10", Private, // link-local
	"fec0::/10", Private, // site-local (deprecated)
	"ff00::/8", Special, // multicast
)

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

func ranges(args ...any) []rangeClass {
	out := make([]rangeClass, 0, len(args)/2)
	for i := 0; i < len(args); i += 2 {
		out = append(out, rangeClass{netip.MustParsePrefix(args[i].(string)), args[i+1].(Class)})
	}
	return out
}

// Classify says what kind of address a is. An invalid address is Special.
func Classify(a netip.Addr) Verdict {
	a = a.WithZone("")
	if !a.IsValid() {
		return Verdict{Class: Special, Addr: a}
	}
	if a.Is4In6() {
		return Classify(a.Unmap())
	}
	if a.Is4() {
		for _, r := range v4Ranges {
			if r.p.Contains(a) {
				return Verdict{Class: r.c, Range: r.p, Addr: a}
			}
		}
		return Verdict{Addr: a}
	}
	b := a.As16()
	if nat64.Contains(a) {
		v := Classify(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
		if v.Class != Public {
			v.Range = nat64
		}
		return v
	}
	if sixToFour.Contains(a) {
		v := Classify(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
		if v.Class != Public {
			v.Range = sixToFour
		}
		return v
	}
	for _, r := range v6Ranges {
		if r.p.Contains(a) {
			return Verdict{Class: r.c, Range: r.p, Addr: a}
		}
	}
	if !a.IsGlobalUnicast() {
		return Verdict{Class: Special, Addr: a}
	}
	return Verdict{Addr: a}
}

// ParseLegacyIPv4 reads the IPv4 spellings browsers accept as hosts
// (WHATWG URL "IPv4 parser"): one to four dot-separated parts, each decimal,
// 0x-hex or 0-octal, the last part filling the remaining bytes, so
// "2130706433", "0x7f000001", "0177.0.0.1" and "127.1" are all 127.0.0.1.
// isNumeric reports whether the host's last label is numeric (then the host
// is an IPv4 address or invalid, never a name); ok reports a valid address.
func ParseLegacyIPv4(host string) (addr netip.Addr, isNumeric, ok bool) {
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

// Host is a URL host as a browser reads it: lower-cased, without brackets
// or trailing dots, and, when it is an IP address in any spelling, that
// address.
type Host struct {
	Name string     // canonical: lower case, no trailing dot; an IP's canonical text
	Addr netip.Addr // valid when the host is an IP literal
	// Invalid is set when the host looks numeric (or bracketed) but is no
	// valid address; browsers refuse such URLs.
	Invalid bool
}

// ParseHost reads a URL's host (as url.URL.Hostname gives it, or still in
// brackets).
func ParseHost(h string) Host {
	h = strings.ToLower(strings.TrimSpace(h))
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	if strings.ContainsAny(h, ":%") {
		a, err := netip.ParseAddr(h)
		if err != nil {
			return Host{Name: h, Invalid: true}
		}
		a = a.WithZone("")
		return Host{Name: a.String(), Addr: a}
	}
	for strings.HasSuffix(h, ".") {
		h = strings.TrimSuffix(h, ".")
	}
	if a, numeric, ok := ParseLegacyIPv4(h); numeric {
		if !ok {
			return Host{Name: h, Invalid: true}
		}
		return Host{Name: a.String(), Addr: a}
	}
	// A code point no host may hold (WHATWG URL's forbidden host code
	// points): a browser refuses such a URL, and a name with one must not
	// pass as a name; "169.254.0.0]" would otherwise be judged by its DNS
	// answer, not as the address it spells.
	if h == "" || strings.ContainsAny(h, " \t\n\r#/<>?@[\\]^|") {
		return Host{Name: h, Invalid: true}
	}
	return Host{Name: h}
}

// IsLocalhostName reports names a browser maps to loopback without asking
// DNS: localhost and anything under .localhost.
func IsLocalhostName(name string) bool {
	return name == "localhost" || strings.HasSuffix(name, ".localhost")
}
