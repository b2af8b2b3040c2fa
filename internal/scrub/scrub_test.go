package scrub

import (
	"net/url"
	"strings"
	"testing"
)

// urlCases is every case of URL, including those that were once the
// redactor's own (internal/redact tests what the redactor adds on top).
var urlCases = []struct{ name, in, want string }{
	{"empty", "", ""},
	{"plain", "https://example.com/", "https://example.com/"},
	{"no query", "https://example.com/path", "https://example.com/path"},
	{"values and fragment", "https://example.com/a/b?token=abc&x=1#frag", "https://example.com/a/b?token=[redacted]&x=[redacted]"},
	{"userinfo, values, fragment", "https://user:pw@example.com/a/b?q=hello&page=2#frag", "https://example.com/a/b?q=[redacted]&page=[redacted]"},
	{"userinfo and port", "https://user:secret@example.com:8443/p", "https://example.com:8443/p"},
	{"user only", "https://user@example.com/p", "https://example.com/p"},
	{"two @ in authority", "http://a@b@host/x?y=1", "http://host/x?y=[redacted]"},
	{"relative", "/relative?session=s3cr3t#top", "/relative?session=[redacted]"},
	{"query inside fragment", "https://example.com/#/route?token=1", "https://example.com/"},
	{"bare token key", "https://example.com/?eyJhbGciOiJIUzI1NiJ9.payload.sig", "https://example.com/"},
	{"bare flag, empty value", "https://example.com/?flag&x=", "https://example.com/?x="},
	{"separators", "https://example.com/?a=1&&b=2;c=3", "https://example.com/?a=[redacted]&b=[redacted]&c=[redacted]"},
	{"long key", "https://example.com/?" + strings.Repeat("k", 80) + "=v", "https://example.com/"},
	{"value holding =", "https://example.com/?a=b=c", "https://example.com/?a=[redacted]"},
	{"value holding ?", "https://example.com/p?q=x?token=y", "https://example.com/p?q=[redacted]"},
	{"already scrubbed", "https://example.com/?token=[redacted]&x=", "https://example.com/?token=[redacted]&x="},
	{"empty query", "https://example.com/?", "https://example.com/"},
	{"empty fragment", "https://example.com/#", "https://example.com/"},
	{"javascript", "javascript:alert(document.cookie)", "javascript:"},
	{"javascript case", "JavaScript:alert(1)", "javascript:"},
	{"data", "data:text/html;base64,PHNjcmlwdD4=", "data:"},
	{"mailto", "mailto:a@example.com?subject=hi&body=secret", "mailto:a@example.com?subject=[redacted]&body=[redacted]"},
	{"opaque userinfo", "user:pass@host/path", "user:host/path"},
	{"surrounding space", "  https://example.com/x \n", "https://example.com/x"},
	{"control character", "https://exa\x00mple.com/?q=1", "https://example.com/?q=[redacted]"},
	{"textual fallback", "http://us er:pa ss@bad host/x?k=v#f", "http://bad host/x?k=[redacted]"},
	{"not a url", "not a url ?token=abc", "not%20a%20url%20?token=[redacted]"},
	{"escapes kept", "https://example.com/a%20b?q=%41", "https://example.com/a%20b?q=[redacted]"},
	{"ipv6", "http://[::1]:80/?a=1", "http://[::1]:80/?a=[redacted]"},
}

func TestURL(t *testing.T) {
	for _, tt := range urlCases {
		t.Run(tt.name, func(t *testing.T) {
			got := URL(tt.in)
			if got != tt.want {
				t.Errorf("URL(%q) = %q, want %q", tt.in, got, tt.want)
			}
			checkScrubbed(t, tt.in, got)
		})
	}
}

// queryOf returns the raw query of s as URL reads it: after the first "?"
// and before the first "#", with control characters gone.
func queryOf(s string) string {
	s, _, _ = strings.Cut(stripControl(s), "#")
	_, q, _ := strings.Cut(s, "?")
	return q
}

// withoutQuery returns s with its query (not its fragment) cut out.
func withoutQuery(s string) string {
	s = stripControl(s)
	rest, frag, hasFrag := strings.Cut(s, "#")
	base, _, _ := strings.Cut(rest, "?")
	if hasFrag {
		return base + "#" + frag
	}
	return base
}

func splitQuery(q string) []string {
	return strings.FieldsFunc(q, func(r rune) bool { return r == '&' || r == ';' })
}

// checkScrubbed asserts the properties every scrubbed URL has.
func checkScrubbed(t *testing.T, in, out string) {
	t.Helper()
	if again := URL(out); again != out {
		t.Fatalf("not idempotent: URL(%q) = %q, URL of that = %q", in, out, again)
	}
	if strings.ContainsRune(out, '#') {
		t.Fatalf("URL(%q) = %q keeps a fragment", in, out)
	}
	if strings.IndexFunc(out, isControl) >= 0 {
		t.Fatalf("URL(%q) = %q keeps a control character", in, out)
	}

	// The query is names only, each taken from the input, with the value
	// Redacted or empty.
	inKeys := map[string]bool{}
	for _, p := range splitQuery(queryOf(in)) {
		k, _, _ := strings.Cut(p, "=")
		inKeys[k] = true
	}
	outPre, outQ, _ := strings.Cut(out, "?")
	var skeleton []string
	for _, p := range strings.Split(outQ, "&") {
		if p == "" && outQ == "" {
			break
		}
		name, val, ok := strings.Cut(p, "=")
		if !ok || (val != "" && val != Redacted) || !nameLike(name) {
			t.Fatalf("URL(%q) = %q: query part %q is not name=%s", in, out, p, Redacted)
		}
		if !inKeys[name] {
			t.Fatalf("URL(%q) = %q: name %q is not a key of the input", in, out, name)
		}
		skeleton = append(skeleton, name+"="+Redacted)
	}

	// No query value of 4 characters or more survives, unless the scheme,
	// host or path or the kept names and placeholders hold the same text:
	// "/ab?q=ab?q" keeps "ab?q" that way. The scheme, host and path of the
	// output must hold it only where the input's (raw or scrubbed without
	// the query) do.
	inPre := withoutQuery(in)
	allowed := outPre + "?" + strings.Join(skeleton, "&")
	for _, p := range splitQuery(queryOf(in)) {
		_, v, ok := strings.Cut(p, "=")
		if !ok || len(v) < 4 {
			continue
		}
		// Escaping can make the text by chance (" 00001" is "%2000001"):
		// what counts is the path as it reads once unescaped.
		decoded, err := url.PathUnescape(outPre)
		if err != nil {
			decoded = outPre
		}
		if strings.Contains(outPre, v) && strings.Contains(decoded, v) && !strings.Contains(inPre, v) && !strings.Contains(URL(inPre), v) {
			t.Fatalf("URL(%q) = %q moves query value %q into the path", in, out, v)
		}
		if strings.Contains(out, v) && !strings.Contains(allowed, v) {
			t.Fatalf("URL(%q) = %q keeps query value %q", in, out, v)
		}
	}
	if outQ == "" && outPre != out {
		// A lone "?" is dropped, never kept.
		t.Fatalf("URL(%q) = %q keeps an empty query", in, out)
	}

	// No userinfo: not in the parsed result, nor (when the result does not
	// parse) textually in the authority,
	// and a password of the input does not survive unless the rest of the
	// URL holds it too.
	if u, err := url.Parse(out); err == nil {
		if u.User != nil {
			t.Fatalf("URL(%q) = %q keeps userinfo %q", in, out, u.User)
		}
	} else if i := strings.Index(outPre, "//"); i >= 0 {
		// Textual fallback: the authority is what follows the first "//".
		auth := outPre[i+2:]
		if end := strings.IndexAny(auth, "/\\"); end >= 0 {
			auth = auth[:end]
		}
		if strings.Contains(auth, "@") {
			t.Fatalf("URL(%q) = %q keeps userinfo in %q", in, out, auth)
		}
	}
	if u, err := url.Parse(stripControl(strings.TrimSpace(in))); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && len(pw) >= 4 && strings.Contains(out, pw) {
			u.User = nil
			if !strings.Contains(URL(u.String()), pw) {
				t.Fatalf("URL(%q) = %q keeps password %q", in, out, pw)
			}
		}
	}
}

func FuzzURL(f *testing.F) {
	for _, tt := range urlCases {
		f.Add(tt.in)
	}
	for _, s := range []string{
		"https://u:p@example.com/a?b=c#d", "/x?y=z", "mailto:a@b?c=d", "javascript:x", "a:b@c",
		"//host/p?q=1", "?a=b", "#x", "http://%zz/", "http://a@b@c/",
		"https://example.com/?a=1;b=2&c", "\x7f://x", "https://u:p@h.test:8080/a?b=c#d",
		"//@@?&&==#", "http://[::1]/?%zz", "/ab?q=ab?q", "http://h/?x=[redacted]&y=secretvalue",
		"%/0 ?0=/0 ?",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkScrubbed(t, s, URL(s))
	})
}
