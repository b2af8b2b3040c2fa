package redact

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// ParseOrigins parses a comma-separated list of origins, each
// scheme://host[:port] with scheme http or https, and returns them
// normalised by OriginOf (lower case, default port dropped), without
// duplicates. A trailing "/" is accepted; a path, query, fragment or
// userinfo is not, nor a non-ASCII host (write it in punycode). Errors
// name the item's position, never its text: the list is configuration
// next to a secret.
func ParseOrigins(list string) ([]string, error) {
	var out []string
	for i, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, fmt.Errorf("origin %d is empty; list origins as https://site.example,https://other.example", i+1)
		}
		o, err := parseOrigin(item)
		if err != nil {
			return nil, fmt.Errorf("origin %d: %v", i+1, err)
		}
		dup := false
		for _, x := range out {
			dup = dup || x == o
		}
		if !dup {
			out = append(out, o)
		}
	}
	return out, nil
}

func parseOrigin(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", errors.New("not a URL; write scheme://host[:port]")
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "HTTP" && u.Scheme != "HTTPS":
		return "", errors.New("scheme must be http or https")
	case u.Host == "" || u.Hostname() == "":
		return "", errors.New("no host; write scheme://host[:port]")
	case u.User != nil:
		return "", errors.New("userinfo is not part of an origin")
	case u.Path != "" && u.Path != "/", u.RawQuery != "", u.ForceQuery, u.Fragment != "":
		return "", errors.New("an origin has no path, query or fragment; write scheme://host[:port]")
	}
	h := u.Hostname()
	for _, c := range h {
		if c > 0x7e || c <= ' ' {
			return "", errors.New("host must be ASCII (write an international name in punycode)")
		}
	}
	if strings.Contains(h, ":") && net.ParseIP(h) == nil {
		return "", errors.New("host is not a valid IPv6 address")
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return "", errors.New("port must be 1-65535")
		}
	} else if strings.HasSuffix(u.Host, ":") {
		return "", errors.New("empty port")
	}
	o := OriginOf(s)
	if o == "" {
		return "", errors.New("no host (or one ending in an empty label); write scheme://host[:port]")
	}
	return o, nil
}

// OriginOf returns rawURL's origin as scheme://host[:port]: scheme and host
// in lower case, a trailing dot dropped from the host, and the port left out
// when it is the scheme's default. It is "" for a URL without a host
// (data:, blob:, about:...), without a scheme, and for an IPv6 address with a zone
// ("[fe80::1%25eth0]"): a zone names one machine's interface, never a web
// origin (browsers refuse it), and its spelling is no fixed point, so no
// secret can be bound to it and every secret is searched for toward it.
func OriginOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return ""
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	// No scheme ("//h"), no host left ("https://./") or an empty label
	// at the end ("h.."): no origin, and none a secret can be bound to.
	if scheme == "" || host == "" || strings.HasSuffix(host, ".") || strings.Contains(host, "%") {
		return ""
	}
	if strings.Contains(host, ":") {
		// Only an IPv6 address may hold a colon ("a://::" leaves ":"):
		// anything else would print as an origin that does not parse.
		if net.ParseIP(host) == nil {
			return ""
		}
		host = "[" + host + "]"
	}
	port := u.Port()
	switch {
	case port == "",
		port == "80" && (scheme == "http" || scheme == "ws"),
		port == "443" && (scheme == "https" || scheme == "wss"):
		return scheme + "://" + host
	}
	return scheme + "://" + host + ":" + port
}
