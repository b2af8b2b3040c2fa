package redact

import (
	"encoding/base64"
	"errors"
	"fmt"
	"html"
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzSource is a SecretSource over a map, for the fuzz targets.
type fuzzSource map[string]Secret

func (m fuzzSource) Lookup(name string) (Secret, bool) {
	s, ok := m[name]
	return s, ok
}

// FuzzExpandSecrets holds {{secret:NAME}} expansion to its promises for any
// text and any value:
//   - text HasSecrets calls free of placeholders comes back unchanged with
//     no error (activities skip Expand for such text, so the two must
//     agree);
//   - on success the text between placeholders is kept verbatim and each
//     placeholder becomes exactly its secret's value, never re-expanded;
//     each secret used is listed once, and its value is registered, so the
//     redactor hides it;
//   - on failure nothing is returned (no half-expanded value) and the error
//     is one of the typed ones, never naming a value.
func FuzzExpandSecrets(f *testing.F) {
	f.Add("user {{secret:PW}} done", "hunter2-very-secret")
	f.Add("{{ secret:pw }}{{secret:PW}}", "{{secret:OTHER}}-value")
	f.Add("{{secret:NOPE}}", "abcdefgh")
	f.Add("{{secret:PW_ORIGINS}}", "abcdefgh")
	f.Add("{{secret:UNBOUND}} and {{secret:BADLIST}}", "abcdefgh")
	f.Add("{{secret:a b}} {{secret:}} {{secret:{x}}}", "abcdefgh")
	f.Add("{{{{secret:PW}}}}", "12345678")
	f.Add("{{secret:PW\n}}", "\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8")
	f.Fuzz(func(t *testing.T, s, value string) {
		src := fuzzSource{
			"PW":      {Name: "PW", Value: value, Origins: []string{"https://a.example"}},
			"OTHER":   {Name: "OTHER", Value: "other-secret-value", Origins: []string{"https://b.example"}},
			"UNBOUND": {Name: "UNBOUND", Value: "unbound-secret-value"},
			"BADLIST": {Name: "BADLIST", Value: "badlist-secret-value", OriginsErr: errors.New("origin 1: bad")},
		}
		r := New()
		out, used, err := (&Secrets{Source: src, Redactor: r}).Expand(s)
		if !HasSecrets(s) {
			if out != s || used != nil || err != nil {
				t.Fatalf("HasSecrets(%q) is false, but Expand answered %q %v %v", s, out, used, err)
			}
			return
		}
		if err != nil {
			if out != "" || used != nil {
				t.Fatalf("failed with %v but returned %q %v", err, out, used)
			}
			if !errors.Is(err, ErrUnknownSecret) && !errors.Is(err, ErrBadSecretName) && !errors.Is(err, ErrUnboundSecret) {
				t.Fatalf("untyped error %v", err)
			}
			// The error is the same whatever the values: it holds none.
			other := fuzzSource{}
			for k, v := range src {
				v.Value = "Q" + v.Value + "Q"
				other[k] = v
			}
			if _, _, err2 := (&Secrets{Source: other, Redactor: New()}).Expand(s); err2 == nil || err2.Error() != err.Error() {
				t.Fatalf("the error depends on the values: %q, then %v", err, err2)
			}
			return
		}
		// The expansion as the format defines it, placeholder by placeholder.
		var want strings.Builder
		var names []string
		last := 0
		for _, m := range placeholderRE.FindAllStringSubmatchIndex(s, -1) {
			want.WriteString(s[last:m[0]])
			name := strings.ToUpper(strings.TrimSpace(s[m[2]:m[3]]))
			sec, ok := src[name]
			if !ok {
				t.Fatalf("expanded unknown secret %q in %q", name, s)
			}
			want.WriteString(sec.Value)
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
			last = m[1]
		}
		want.WriteString(s[last:])
		if out != want.String() {
			t.Fatalf("Expand(%q) = %q, want %q", s, out, want.String())
		}
		var got []string
		for _, u := range used {
			got = append(got, u.Name)
			if len(u.Origins) == 0 {
				t.Fatalf("used secret %s without origins", u.Name)
			}
			if utf8.RuneCountInString(u.Value) >= MinLen && strings.Contains(r.String("x"+u.Value+"x"), u.Value) {
				t.Fatalf("secret %s was used but not registered with the redactor", u.Name)
			}
		}
		if !slices.Equal(got, names) {
			t.Fatalf("used %v, want %v", got, names)
		}
	})
}

// FuzzOriginOf: an origin OriginOf spells is its normal form: spelled
// again it is unchanged, it holds nothing but scheme, host and port, all
// in lower case, and a URL's path, query, fragment and userinfo never
// change it.
func FuzzOriginOf(f *testing.F) {
	f.Add("https://A.Example.:443/path?q=1#f")
	f.Add("http://u:p@[::1]:80/")
	f.Add("http://[fe80::1%25eth0]:8080/")
	f.Add("ws://host:0/x")
	f.Add("data:text/plain,x")
	f.Add("https://xn--bcher-kva.example/")
	f.Add("HTTP://h:08080")
	f.Fuzz(func(t *testing.T, raw string) {
		o := OriginOf(raw)
		if o == "" {
			return
		}
		if again := OriginOf(o); again != o {
			t.Fatalf("OriginOf(%q) = %q, but OriginOf(%q) = %q", raw, o, o, again)
		}
		if o != strings.ToLower(o) {
			t.Fatalf("OriginOf(%q) = %q is not lower case", raw, o)
		}
		u, err := url.Parse(o)
		if err != nil || u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
			t.Fatalf("OriginOf(%q) = %q holds more than scheme, host and port", raw, o)
		}
		ru, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("OriginOf(%q) = %q of a URL that does not parse", raw, o)
		}
		ru.User, ru.Path, ru.RawPath, ru.RawQuery, ru.Fragment, ru.RawFragment = url.User("someone"), "/else", "", "x=1", "frag", ""
		if other := OriginOf(ru.String()); other != o {
			t.Fatalf("OriginOf(%q) = %q, but with another path, query and userinfo %q", raw, o, other)
		}
	})
}

// FuzzParseOrigins: a list either fails with an error that names
// positions, never the list's text, or gives http(s) origins in their
// normal form, without duplicates, that parse back to themselves.
func FuzzParseOrigins(f *testing.F) {
	f.Add("https://a.example,https://b.example:8443/")
	f.Add("https://a.example, https://A.EXAMPLE:443")
	f.Add("http://[::1]:80,https://127.0.0.1")
	f.Add("https://a.example/path")
	f.Add("https://user:secretsecret@a.example")
	f.Add(",")
	f.Add("https://a.example:99999")
	f.Add("https://[fe80::1%25eth0]")
	f.Fuzz(func(t *testing.T, list string) {
		out, err := ParseOrigins(list)
		if err != nil {
			for _, item := range strings.Split(list, ",") {
				item = strings.TrimSpace(item)
				if len(item) >= 12 && strings.Contains(err.Error(), item) {
					t.Fatalf("the error %q repeats the list's item %q", err, item)
				}
			}
			return
		}
		if len(out) == 0 {
			t.Fatalf("ParseOrigins(%q) gave no origins and no error", list)
		}
		seen := map[string]bool{}
		for _, o := range out {
			if seen[o] {
				t.Fatalf("ParseOrigins(%q) lists %q twice", list, o)
			}
			seen[o] = true
			if OriginOf(o) != o {
				t.Fatalf("ParseOrigins(%q) gave %q, not in OriginOf's form %q", list, o, OriginOf(o))
			}
			if !strings.HasPrefix(o, "http://") && !strings.HasPrefix(o, "https://") {
				t.Fatalf("ParseOrigins(%q) gave %q, not http(s)", list, o)
			}
		}
		back, err := ParseOrigins(strings.Join(out, ","))
		if err != nil || !slices.Equal(back, out) {
			t.Fatalf("ParseOrigins(%q) = %q, which parses back to %q, %v", list, out, back, err)
		}
	})
}

// FuzzParseFileSource: any file either fails with an error naming a line,
// never a value, or gives secrets whose names are upper-case words, whose
// values are their lines' text after the first '=', and whose origins are
// in normal form. A file written from a secret and its origins reads back
// as them.
func FuzzParseFileSource(f *testing.F) {
	f.Add([]byte("# comment\nexport PW=hunter2=still\r\nPW_ORIGINS=https://a.example\n\n"), "value with = and spaces ", "https://a.example")
	f.Add([]byte("pw_origins=https://a.example\npw=x"), "12345678", "https://a.example,http://b.example:81")
	f.Add([]byte("BAD NAME=x\n"), "\xff\xfe", "not a url")
	f.Add([]byte("A_ORIGINS=https://x.example\n"), "a value long enough", "https://x.example/p")
	f.Add([]byte("=\n"), "", "")
	f.Fuzz(func(t *testing.T, file []byte, value, origins string) {
		if fs, err := ParseFileSource(file); err == nil {
			for _, name := range fs.Names() {
				if !nameRE.MatchString(name) || name != strings.ToUpper(name) || strings.HasSuffix(name, OriginsSuffix) {
					t.Fatalf("secret name %q", name)
				}
				s, ok := fs.Lookup(strings.ToLower(name))
				if !ok || s.Name != name || strings.ContainsAny(s.Value, "\n") {
					t.Fatalf("Lookup(%q) = %+v, %v", name, s, ok)
				}
				for _, o := range s.Origins {
					if OriginOf(o) != o {
						t.Fatalf("secret %s origin %q is not in normal form", name, o)
					}
				}
			}
		}

		// A file of one secret with its origins, after the fuzzer's lines.
		if strings.ContainsAny(value, "\n") || strings.HasSuffix(value, "\r") || strings.ContainsAny(origins, "\n\r") {
			return
		}
		doc := fmt.Sprintf("ZZ_FUZZ_SECRET=%s\nZZ_FUZZ_SECRET_ORIGINS=%s\n", value, origins)
		fs, err := ParseFileSource([]byte(doc))
		want, werr := ParseOrigins(origins)
		if err != nil {
			if werr == nil {
				t.Fatalf("%q: %v, though its origins parse", doc, err)
			}
			if len(value) >= MinLen && strings.Contains(err.Error(), value) {
				t.Fatalf("the error %q repeats the secret's value", err)
			}
			return
		}
		s, ok := fs.Lookup("ZZ_FUZZ_SECRET")
		if werr != nil || !ok || s.Value != value || !slices.Equal(s.Origins, want) {
			t.Fatalf("%q read as %+v %v, want value %q origins %q (%v)", doc, s, ok, value, want, werr)
		}
	})
}

// FuzzCheckEnv: the worker's environment check names variables, never a
// value, and accepts exactly the origins lists ParseOrigins accepts whose
// secret is set.
func FuzzCheckEnv(f *testing.F) {
	f.Add("https://a.example", "a-secret-value", true)
	f.Add("https://a.example/path-is-not-an-origin", "a-secret-value", true)
	f.Add("https://a.example", "", false)
	f.Fuzz(func(t *testing.T, origins, value string, set bool) {
		environ := []string{"PATH=/bin", EnvPrefix + "PW" + OriginsSuffix + "=" + origins}
		if set {
			environ = append(environ, EnvPrefix+"PW="+value)
		}
		err := CheckEnv(environ)
		_, perr := ParseOrigins(origins)
		if (err == nil) != (perr == nil && set) {
			t.Fatalf("CheckEnv(%q) = %v; origins parse: %v, secret set: %v", environ, err, perr, set)
		}
		if err != nil && len(origins) >= 12 && strings.Contains(err.Error(), origins) && !strings.Contains(EnvPrefix+"PW"+OriginsSuffix, origins) {
			t.Fatalf("the error %q repeats the origins list", err)
		}
	})
}

// FuzzMatcherFind: a secret bound to one origin is found, toward any
// other origin, in every spelling a page could send it (raw, percent-
// encoded in part or whole, base64 at any alignment, hex), wherever it
// sits in other text; toward its own origin it is never reported.
func FuzzMatcherFind(f *testing.F) {
	f.Add("hunter2-very-secret", "before ", " after", uint8(0), uint16(0))
	f.Add("p@ss w0rd&=/+?", "q=", "&x=1", uint8(3), uint16(0xffff))
	f.Add("ééééééééé", "", "", uint8(5), uint16(0x5555))
	f.Add("12345678", "a", "b", uint8(7), uint16(1))
	f.Fuzz(func(t *testing.T, value, before, after string, pick uint8, mask uint16) {
		if utf8.RuneCountInString(value) < MinLen {
			return
		}
		const home, away = "https://home.example", "https://away.example"
		m := (*Matcher)(nil).With(Secret{Name: "PW", Value: value, Origins: []string{home}})
		b := []byte(value)
		// A '%' in the text around is not the page's to spell the value
		// with: a client sends a literal '%' encoded, as below.
		before, after = strings.ReplaceAll(before, "%", ""), strings.ReplaceAll(after, "%", "")
		var partly strings.Builder // percent-encoded where mask says
		for i, c := range b {
			if c == '%' || mask&(1<<(i%16)) != 0 {
				fmt.Fprintf(&partly, "%%%02X", c)
			} else {
				partly.WriteByte(c)
			}
		}
		prefix := []byte(before)
		if len(prefix) > 2 {
			prefix = prefix[:int(pick)%3]
		}
		embedded := append(append(append([]byte{}, prefix...), b...), after...)
		spellings := []string{
			value,
			url.QueryEscape(value),
			url.PathEscape(value),
			partly.String(),
			base64.StdEncoding.EncodeToString(b),
			base64.RawURLEncoding.EncodeToString(b),
			base64.StdEncoding.EncodeToString(embedded),
			base64.RawURLEncoding.EncodeToString(embedded),
			fmt.Sprintf("%x", b),
			fmt.Sprintf("%X", b),
			chromeText.Replace(value),
			chromeAttr.Replace(value),
			html.EscapeString(value),
		}
		if utf8.ValidString(value) {
			// JSON.stringify's spelling, every character \u-escaped, every
			// character a reference: a '\' or '&' right before is not the
			// page's to spell the value with (a client escapes its own).
			before = strings.TrimRight(before, "\\&")
			spellings = append(spellings, stringify(value), allEscaped(value, mask&1 != 0))
			if !strings.ContainsFunc(value, func(r rune) bool { return r == 0 || 0x80 <= r && r <= 0x9F }) {
				spellings = append(spellings, numeric(value, "&#%d;"), numeric(value, "&#x%x;"))
			}
		}
		sp := spellings[int(pick)%len(spellings)]
		text := before + sp + after
		if name, ok := m.Find(away, text); !ok || name != "PW" {
			t.Fatalf("secret %q spelled %q in %q not found toward another origin", value, sp, text)
		}
		if name, ok := m.Find(home, text); ok {
			t.Fatalf("secret %s reported toward its own origin", name)
		}
	})
}
