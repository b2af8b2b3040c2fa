package redact

import (
	"encoding/base64"
	"encoding/hex"
	"iter"
	"slices"
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
	// host is spell in lower case, for host names (FindHost).
	host []string
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
		seen := map[string]bool{}
		for _, sp := range ms.spell {
			if l := strings.ToLower(sp); !seen[l] {
				seen[l] = true
				ms.host = append(ms.host, l)
			}
		}
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

// FindHost returns the name of the first secret, bound to none of origins,
// that the host name carries in any spelling Find knows. A name is looked
// up before a connection is made, and the lookup itself carries it to
// whichever name servers answer for its domain, so host names are searched
// before any lookup, and read as DNS reads them: without regard to case
// (browsers lower-case host names, turning upper-case hex into lower and
// changing base64) and across labels (a label holds at most 63 bytes, so a
// long spelling arrives split by dots).
func (m *Matcher) FindHost(host string, origins ...string) (string, bool) {
	if m == nil || len(m.secrets) == 0 {
		return "", false
	}
	h := strings.ToLower(percentDecoded(host))
	forms := []string{h}
	// A host with characters beyond ASCII leaves as punycode (xn--...),
	// whose first part is the label's ASCII characters in order: a secret
	// broken up by such characters is whole there.
	if a := strings.Map(asciiOnly, h); a != h {
		forms = append(forms, a)
	}
	for _, f := range forms {
		if d := strings.ReplaceAll(f, ".", ""); d != f {
			forms = append(forms, d)
		}
	}
	for s := range m.unbound(origins) {
		for _, f := range forms {
			for _, sp := range s.host {
				if strings.Contains(f, sp) {
					return s.Name, true
				}
			}
		}
	}
	return "", false
}

// unbound yields the secrets bound to none of origins.
func (m *Matcher) unbound(origins []string) iter.Seq[*matchSecret] {
	return func(yield func(*matchSecret) bool) {
		for i := range m.secrets {
			s := &m.secrets[i]
			if slices.ContainsFunc(origins, s.Bound) {
				continue
			}
			if !yield(s) {
				return
			}
		}
	}
}

// asciiOnly keeps a rune below U+0080 and drops the rest (strings.Map).
func asciiOnly(r rune) rune {
	if r < 0x80 {
		return r
	}
	return -1
}

// ShownHost is host as a refusal may show it: when the host carries a
// secret (FindHost), its labels are shown only from the end up to the
// first that holds 8 characters of a spelling of a secret not bound to
// origins (8 being the shortest value searched for at all); the rest
// become one "[redacted]" label, so the domain is still named and no
// fragment of the secret is.
func (m *Matcher) ShownHost(host string, origins ...string) string {
	if _, hit := m.FindHost(host, origins...); !hit {
		return host
	}
	labels := strings.Split(strings.ToLower(host), ".")
	keep := len(labels)
	for i := len(labels) - 1; i > 0; i-- {
		if m.holdsFragment(strings.Join(labels[i:], ""), origins) {
			break
		}
		keep = i
	}
	if keep == len(labels) {
		return Placeholder
	}
	return Placeholder + "." + strings.Join(labels[keep:], ".")
}

// holdsFragment says whether s holds MinLen characters in a row of a host
// spelling of a secret not bound to origins.
func (m *Matcher) holdsFragment(s string, origins []string) bool {
	for sec := range m.unbound(origins) {
		for _, sp := range sec.host {
			for j := 0; j+MinLen <= len(sp); j++ {
				if strings.Contains(s, sp[j:j+MinLen]) {
					return true
				}
			}
		}
	}
	return false
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
