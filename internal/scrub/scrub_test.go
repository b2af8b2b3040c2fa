package scrub

import (
	"net/url"
	"strings"
	"testing"
)

func TestURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"https://example.com/", "https://example.com/"},
		{"https://example.com/a/b?token=abc&x=1#frag", "https://example.com/a/b?token=&x="},
		{"https://user:secret@example.com:8443/p", "https://example.com:8443/p"},
		{"https://user@example.com/p", "https://example.com/p"},
		{"/relative?session=s3cr3t#top", "/relative?session="},
		{"https://example.com/?eyJhbGciOiJIUzI1NiJ9.payload.sig", "https://example.com/"},
		{"https://example.com/?a=1&&b=2;c=3", "https://example.com/?a=&b=&c="},
		{"https://example.com/?" + strings.Repeat("k", 80) + "=v", "https://example.com/"},
		{"https://example.com/?", "https://example.com/"},
		{"https://example.com/#", "https://example.com/"},
		{"javascript:alert(document.cookie)", "javascript:"},
		{"JavaScript:alert(1)", "javascript:"},
		{"data:text/html;base64,PHNjcmlwdD4=", "data:"},
		{"mailto:a@example.com?subject=hi&body=secret", "mailto:a@example.com?subject=&body="},
		{"user:pass@host/path", "user:host/path"},
		{"  https://example.com/x \n", "https://example.com/x"},
		{"https://exa\x00mple.com/?q=1", "https://example.com/?q="},
		{"http://us er:pa ss@bad host/x?k=v#f", "http://bad host/x?k="},
		{"https://example.com/a%20b?q=%41", "https://example.com/a%20b?q="},
	}
	for _, tt := range tests {
		if got := URL(tt.in); got != tt.want {
			t.Errorf("URL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// checkScrubbed asserts the properties every scrubbed URL has.
func checkScrubbed(t *testing.T, in, out string) {
	t.Helper()
	if URL(out) != out {
		t.Fatalf("not idempotent: URL(%q) = %q, URL of that = %q", in, out, URL(out))
	}
	if strings.ContainsRune(out, '#') {
		t.Fatalf("URL(%q) = %q keeps a fragment", in, out)
	}
	if strings.IndexFunc(out, isControl) >= 0 {
		t.Fatalf("URL(%q) = %q keeps a control character", in, out)
	}
	u, err := url.Parse(out)
	if err != nil {
		// Textual fallback: no query value may remain.
		if _, q, ok := strings.Cut(out, "?"); ok {
			for _, p := range strings.Split(q, "&") {
				if !strings.HasSuffix(p, "=") {
					t.Fatalf("URL(%q) = %q keeps a query value", in, out)
				}
			}
		}
		return
	}
	if u.User != nil {
		t.Fatalf("URL(%q) = %q keeps userinfo", in, out)
	}
	for k, vs := range u.Query() {
		for _, v := range vs {
			if v != "" {
				t.Fatalf("URL(%q) = %q keeps value %q of %q", in, out, v, k)
			}
		}
	}
}

func FuzzURL(f *testing.F) {
	for _, s := range []string{
		"https://u:p@example.com/a?b=c#d", "/x?y=z", "mailto:a@b?c=d", "javascript:x", "a:b@c",
		"http://[::1]:80/?a=1", "//host/p?q=1", "?a=b", "#x", "http://%zz/", "http://a@b@c/",
		"https://example.com/?a=1;b=2&c", "\x7f://x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkScrubbed(t, s, URL(s))
	})
}
