// Package scrub removes the parts of a URL that can carry credentials before
// the URL is shown to a model, logged or filed as evidence. It is the one
// implementation of URL scrubbing: internal/redact's (*Redactor).URL calls
// URL and then redacts registered values and credential shapes in the result.
package scrub

import (
	"net/url"
	"strings"
)

// Redacted is what every non-empty query value becomes. internal/redact uses
// the same text as its Placeholder.
const Redacted = "[redacted]"

// maxKeyLen bounds a query key that is kept. Longer keys look like values
// (tokens passed as bare keys) and are dropped.
const maxKeyLen = 64

// URL returns raw without userinfo and fragment, and with every query value
// replaced by Redacted (`?token=[redacted]`); a key with an empty value stays
// empty (`?x=`). The names are kept so a reader still sees which parameters
// the page used; bare parts without "=" and keys that do not look like names
// are dropped, since a token can ride as a bare key. Parts are joined with
// "&" (a ";" separator becomes "&"). The opaque part of javascript:,
// vbscript: and data: URLs is dropped. A string that does not parse as a URL
// is scrubbed textually.
// URL is idempotent: URL(URL(s)) == URL(s).
func URL(raw string) string {
	// Scrubbing only removes parts, but net/url's round trip can still
	// normalise a second time ("// " -> "//" -> ""); iterate to a fixed
	// point so the result is stable, and give up on inputs that never settle.
	out := raw
	for range 4 {
		next := strings.TrimSpace(scrubURL(out))
		if next == out {
			return out
		}
		out = next
	}
	return ""
}

func scrubURL(raw string) string {
	raw = stripControl(strings.TrimSpace(raw))
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return textual(raw)
	}
	switch strings.ToLower(u.Scheme) {
	case "javascript", "vbscript", "data":
		return strings.ToLower(u.Scheme) + ":"
	}
	u.User = nil
	u.Fragment, u.RawFragment = "", ""
	u.RawQuery = redactQuery(u.RawQuery)
	u.ForceQuery = false
	if u.Opaque != "" && !strings.EqualFold(u.Scheme, "mailto") {
		// "user:pass@host" parses as scheme "user" with an opaque part;
		// whatever precedes an "@" there may be a password.
		if at := strings.LastIndex(u.Opaque, "@"); at >= 0 {
			u.Opaque = u.Opaque[at+1:]
		}
	}
	out := u.String()
	// Re-parsing must give the same string; if the library's round trip is
	// not stable for this input, fall back to the textual scrub.
	if again, err := url.Parse(out); err != nil || again.User != nil || again.Fragment != "" || redactQuery(again.RawQuery) != again.RawQuery {
		return textual(out)
	}
	return out
}

// redactQuery keeps the name-like keys of a raw query, each with its value
// replaced by Redacted (or empty when it was empty).
func redactQuery(rawQuery string) string {
	if rawQuery == "" {
		return ""
	}
	var kept []string
	for _, part := range strings.FieldsFunc(rawQuery, func(r rune) bool { return r == '&' || r == ';' }) {
		key, val, hasEq := strings.Cut(part, "=")
		if !hasEq || !nameLike(key) {
			continue
		}
		if val == "" {
			kept = append(kept, key+"=")
		} else {
			kept = append(kept, key+"="+Redacted)
		}
	}
	return strings.Join(kept, "&")
}

// nameLike reports whether a raw query key looks like a parameter name.
func nameLike(k string) bool {
	if k == "" || len(k) > maxKeyLen {
		return false
	}
	for _, r := range k {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case r == '_', r == '-', r == '.', r == '~', r == '%', r == '[', r == ']':
		default:
			return false
		}
	}
	return true
}

// textual scrubs a string that net/url will not parse: cut at the first "#",
// keep only name-like query keys with their values redacted, and drop everything up to the last "@" of
// the authority.
func textual(s string) string {
	s, _, _ = strings.Cut(s, "#")
	s, q, hasQ := strings.Cut(s, "?")
	if i := strings.Index(s, "//"); i >= 0 {
		rest := s[i+2:]
		end := strings.IndexAny(rest, "/\\")
		if end < 0 {
			end = len(rest)
		}
		if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
			s = s[:i+2] + rest[at+1:]
		}
	}
	if hasQ {
		if k := redactQuery(q); k != "" {
			s += "?" + k
		}
	}
	return s
}

// stripControl drops ASCII control characters, which no URL needs and which
// can hide parts of a URL from a reader.
func stripControl(s string) string {
	if strings.IndexFunc(s, isControl) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isControl(r) {
			return -1
		}
		return r
	}, s)
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }
