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
// edge characters that depend on its neighbours), in the text as it is and
// decoded (see Find). A Matcher is immutable and safe for concurrent use;
// With returns a new one.
type Matcher struct {
	secrets []matchSecret
	// bytes are the bytes the secrets' spellings are made of: a decoding
	// need only decode what stands for one of them. jsonBytes adds those
	// character references are made of, for the JSON decoding that the
	// HTML one follows.
	bytes, jsonBytes *byteSet
}

type matchSecret struct {
	Secret
	spell []string
	// bytes[i] are the bytes spell[i] is made of.
	bytes []byteSet
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
		ms.bytes = make([]byteSet, len(ms.spell))
		for i, sp := range ms.spell {
			ms.bytes[i].add(sp)
		}
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
	out.bytes = &byteSet{}
	for _, s := range out.secrets {
		for _, b := range s.bytes {
			for k := range b {
				out.bytes[k] |= b[k]
			}
		}
	}
	jb := *out.bytes
	jb.add("&#;0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
	out.jsonBytes = &jb
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
//
// Each part is searched as it is and decoded (decodings): percent-decoded,
// its JSON string escapes decoded, and its HTML character references
// decoded, one after the other, so a value whose characters a page wrote as
// \u0041, &#65; or %41, all or only some of them, is found. Each decoding
// reads the text once and is made only when the text holds what it decodes
// (a '%', a backslash, a reference), so text with none is searched once;
// and a decoded text is searched only for the spellings holding a byte the
// decoding wrote (any other would have been found before it).
func (m *Matcher) Find(origin string, parts ...string) (string, bool) {
	if m == nil {
		return "", false
	}
	first := -1
	for i := range m.secrets {
		if !m.secrets[i].Bound(origin) {
			first = i
			break
		}
	}
	if first < 0 {
		return "", false
	}
	// The first secret in m's order found in any form of any part: the
	// answer does not depend on which form showed it first.
	found := len(m.secrets)
	for _, p := range parts {
		for d, wrote := range decodings(p, m.bytes, m.jsonBytes) {
			if len(d) < MinLen {
				continue
			}
			for i := first; i < found; i++ {
				if m.secrets[i].in(d, origin, wrote) {
					found = i
					break
				}
			}
			if found == first {
				return m.secrets[found].Name, true
			}
		}
	}
	if found < len(m.secrets) {
		return m.secrets[found].Name, true
	}
	return "", false
}

// in says whether s is not bound to origin and d holds one of its
// spellings, of those holding a byte of wrote (nil: of all).
func (s *matchSecret) in(d, origin string, wrote *byteSet) bool {
	if s.Bound(origin) {
		return false
	}
	for i, sp := range s.spell {
		if s.bytes[i].meets(wrote) && strings.Contains(d, sp) {
			return true
		}
	}
	return false
}

// decodings yields p and each different text a decoding of it gives:
// percent-decoded (browsers percent-encode only some characters of a URL,
// Chrome keeping '+', '/', '=' and '*' but encoding '$' or '"', a mix no
// fixed spelling covers), then of each of those its JSON string escapes
// decoded (JSON.stringify escapes only '"', '\' and control characters,
// Go and others also '<', '>', '&' or everything past ASCII, and a page
// can escape every character), then of each of those its HTML character
// references decoded. At most three decoded texts are held at once. Only
// what stands for a byte in want is decoded (htmlDecoded), and of JSON
// escapes what stands for one in jsonWant (want and what a reference is
// written with, for the HTML decoding after it), so a text whose escapes
// stand for nothing a spelling holds is searched once. With each decoded
// text comes the set of bytes its last decoding wrote (nil with p).
func decodings(p string, want, jsonWant *byteSet) iter.Seq2[string, *byteSet] {
	return func(yield func(string, *byteSet) bool) {
		html := func(s string) bool {
			var wrote byteSet
			if d, _ := htmlDecoded(s, want, false, &wrote); d != s {
				return yield(d, &wrote)
			}
			return true
		}
		each := func(s string, wrote *byteSet) bool {
			if !yield(s, wrote) {
				return false
			}
			var jw byteSet
			if j := jsonDecoded(s, jsonWant, &jw); j != s {
				if !yield(j, &jw) || !html(j) {
					return false
				}
			}
			return html(s)
		}
		if !each(p, nil) {
			return
		}
		var pw byteSet
		if d := percentDecodedInto(p, &pw); d != p {
			each(d, &pw)
		}
	}
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
func percentDecoded(s string) string { return percentDecodedInto(s, nil) }

// percentDecodedInto is percentDecoded, adding to wrote (if not nil) the
// bytes it decoded.
func percentDecodedInto(s string, wrote *byteSet) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var sb strings.Builder
	sb.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if hi, lo := unhex(s[i+1]), unhex(s[i+2]); hi >= 0 && lo >= 0 {
				c := byte(hi<<4 | lo)
				if wrote != nil {
					wrote[c>>6] |= 1 << (c & 63)
				}
				sb.WriteByte(c)
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
