package redact

import (
	"encoding/base64"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// Matcher finds secrets in text leaving toward an origin: a request's URL,
// headers and body. It searches every spelling the Redactor searches for,
// and also upper-case hex and the base64 of the value wherever it sits in
// a longer base64 text (at any of the three byte alignments, without the
// edge characters that depend on its neighbours). A Matcher is immutable
// and safe for concurrent use; With returns a new one.
type Matcher struct {
	secrets []matchSecret
}

type matchSecret struct {
	Secret
	spell []string
}

// With returns a Matcher that also finds s (a secret already held, by
// name, is replaced). Values shorter than MinLen are not searched for.
func (m *Matcher) With(s ...Secret) *Matcher {
	out := &Matcher{}
	if m != nil {
		out.secrets = append(out.secrets, m.secrets...)
	}
	for _, sec := range s {
		if utf8.RuneCountInString(sec.Value) < MinLen {
			continue
		}
		ms := matchSecret{Secret: sec, spell: matchSpellings(sec.Value)}
		replaced := false
		for i := range out.secrets {
			if out.secrets[i].Name == sec.Name {
				out.secrets[i], replaced = ms, true
			}
		}
		if !replaced {
			out.secrets = append(out.secrets, ms)
		}
	}
	return out
}

// Len reports how many secrets m searches for.
func (m *Matcher) Len() int {
	if m == nil {
		return 0
	}
	return len(m.secrets)
}

// Names lists the names of the secrets m searches for.
func (m *Matcher) Names() []string {
	if m == nil {
		return nil
	}
	out := make([]string, 0, len(m.secrets))
	for _, s := range m.secrets {
		out = append(out, s.Name)
	}
	return out
}

// Unbound returns the name of the first secret m holds that is not bound to
// origin, and whether there is one: when there is none, nothing leaving
// toward origin needs to be searched.
func (m *Matcher) Unbound(origin string) (string, bool) {
	if m == nil {
		return "", false
	}
	for _, s := range m.secrets {
		if !s.Bound(origin) {
			return s.Name, true
		}
	}
	return "", false
}

// Find returns the name of the first secret that is not bound to origin
// (as OriginOf spells it) and appears in any of parts. Secrets bound to
// origin are not searched for.
func (m *Matcher) Find(origin string, parts ...string) (string, bool) {
	if m == nil {
		return "", false
	}
	// Browsers percent-encode only some characters of a URL (Chrome keeps
	// '+', '/', '=' and '*' but encodes '$' or '"'), a mix no fixed spelling
	// covers: search the percent-decoded text too.
	for _, p := range parts {
		if d := percentDecoded(p); d != p {
			parts = append(parts, d)
		}
	}
	for i := range m.secrets {
		s := &m.secrets[i]
		if s.Bound(origin) {
			continue
		}
		for _, p := range parts {
			if len(p) < MinLen {
				continue
			}
			for _, sp := range s.spell {
				if strings.Contains(p, sp) {
					return s.Name, true
				}
			}
		}
	}
	return "", false
}

// percentDecoded decodes every valid %XX sequence in s and leaves the rest
// as it is (unlike url.PathUnescape, it never fails on a stray '%').
func percentDecoded(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var sb strings.Builder
	sb.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if hi, lo := unhex(s[i+1]), unhex(s[i+2]); hi >= 0 && lo >= 0 {
				sb.WriteByte(byte(hi<<4 | lo))
				i += 2
				continue
			}
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// matchSpellings is spellings(v) plus upper-case hex and unaligned base64
// cores, without duplicates or spellings shorter than MinLen.
func matchSpellings(v string) []string {
	b := []byte(v)
	all := append(spellings(v), strings.ToUpper(hex.EncodeToString(b)))
	for k := 1; k <= 2; k++ {
		// The value after k other bytes: its first full 3-byte group
		// starts at byte 3 of the padded text, i.e. character 4.
		padded := append(make([]byte, k), b...)
		groups := (len(padded) - 3) / 3
		if groups < 1 {
			continue
		}
		enc := base64.StdEncoding.EncodeToString(padded)
		core := enc[4 : 4+4*groups]
		all = append(all, core, strings.NewReplacer("+", "-", "/", "_").Replace(core))
	}
	// Aligned, but followed by other bytes: only full groups are certain.
	if g := len(b) / 3; g >= 1 {
		core := base64.StdEncoding.EncodeToString(b)[:4*g]
		all = append(all, core, strings.NewReplacer("+", "-", "/", "_").Replace(core))
	}
	seen := map[string]bool{}
	out := all[:0]
	for _, s := range all {
		if len(s) >= MinLen && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
