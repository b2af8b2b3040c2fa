package redact

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/durable-browser/durable-browser/internal/scrub"
)

const secret = "hunter2-very/secret value&more"

func TestStringRegisteredSpellings(t *testing.T) {
	r := New()
	r.Register(secret, "short")
	tests := []struct {
		name, in string
	}{
		{"raw", "pw is " + secret + " ok"},
		{"query escape", "https://x.test/?p=" + url.QueryEscape(secret)},
		{"path escape", "https://x.test/" + url.PathEscape(secret) + "/a"},
		{"base64", "blob " + base64.StdEncoding.EncodeToString([]byte(secret))},
		{"base64url raw", "blob " + base64.RawURLEncoding.EncodeToString([]byte(secret))},
		{"json escaped", `{"a":"` + strings.ReplaceAll(secret, "&", `\u0026`) + `"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := r.String(tc.in)
			if !strings.Contains(got, Placeholder) {
				t.Fatalf("no placeholder in %q", got)
			}
			for _, sp := range spellings(secret) {
				if strings.Contains(got, sp) {
					t.Fatalf("spelling %q left in %q", sp, got)
				}
			}
		})
	}
	if got := r.String("a short word"); got != "a short word" {
		t.Fatalf("short value was registered: %q", got)
	}
	if r.Len() != 1 {
		t.Fatalf("Len = %d, want 1", r.Len())
	}
}

func TestStringShapes(t *testing.T) {
	jwt := "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	tests := []struct {
		name, in, want string
	}{
		{"token param", "https://a.test/cb?token=abc123&x=1", "https://a.test/cb?token=[redacted]&x=1"},
		{"access_token", "?access_token=zzz", "?access_token=[redacted]"},
		{"api_key mixed case", "&API_KEY=k-1", "&API_KEY=[redacted]"},
		{"sig", "?a=1&sig=AbC%2F", "?a=1&sig=[redacted]"},
		{"code", "redirect ?code=4/0Ab&state=s", "redirect ?code=[redacted]&state=s"},
		{"not a param suffix", "monkey=banana", "monkey=banana"},
		{"generic name in prose", "exit code=1, primary key=id", "exit code=1, primary key=id"},
		{"generic name in query", "/cb?key=abc&auth=x;session=y", "/cb?key=[redacted]&auth=[redacted];session=[redacted]"},
		{"password in prose", "login password=hunter22 ok", "login password=[redacted] ok"},
		{"openai key", "key: sk-proj-abcdefghijklmnop1234", "key: [redacted]"},
		{"task- is not sk-", "task-abcdefghijklmnopqrstuvwxyz", "task-abcdefghijklmnopqrstuvwxyz"},
		{"browserbase", "bb_live_AbCdEfGh12345", "[redacted]"},
		{"browserbase test", "x bb_test_AbCdEfGh12345 y", "x [redacted] y"},
		{"google", "AIzaSyA1234567890abcdefghijklmnopqrstu", "[redacted]"},
		{"bearer", "Authorization: Bearer abc.def-ghi_jkl", "Authorization: Bearer [redacted]"},
		{"bearer lower", "bearer abcdefghijkl==", "bearer [redacted]"},
		{"jwt", "cookie=" + jwt + ";", "cookie=[redacted];"},
		{"userinfo", "see https://bob:pa55word@host.test/x", "see https://bob:[redacted]@host.test/x"},
		{"plain", "nothing to see here", "nothing to see here"},
		{"idempotent", "Bearer [redacted]", "Bearer [redacted]"},
	}
	var nilR *Redactor
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := New().String(tc.in); got != tc.want {
				t.Fatalf("String(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if got := nilR.String(tc.in); got != tc.want {
				t.Fatalf("nil String(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestStringRebuiltValue(t *testing.T) {
	// A value that a replacement could re-assemble from the placeholder.
	r := New()
	r.Register("a[redacted]", "abcdefgh")
	in := "aa[redacted] abcdefgh"
	got := r.String(in)
	if strings.Contains(got, "a[redacted]") || strings.Contains(got, "abcdefgh") {
		t.Fatalf("value survived: %q", got)
	}
}

func TestBytes(t *testing.T) {
	r := New()
	r.Register(secret)
	in := []byte("x " + secret)
	if got := string(r.Bytes(in)); got != "x [redacted]" {
		t.Fatalf("Bytes = %q", got)
	}
	clean := []byte("clean")
	if got := r.Bytes(clean); &got[0] != &clean[0] {
		t.Fatal("unchanged input should be returned as is")
	}
}

// TestURL covers what the redactor adds to scrub.URL (whose tests hold the
// scrubbing cases): registered values and credential shapes outside the query.
func TestURL(t *testing.T) {
	r := New()
	r.Register("my-tenant-name")
	tests := []struct{ in, want string }{
		{"https://user:pw@example.com/a/b?q=hello&page=2#frag", "https://example.com/a/b?q=[redacted]&page=[redacted]"},
		{"https://example.com/my-tenant-name/x", "https://example.com/[redacted]/x"},
		{"https://my-tenant-name.example.com/?a=my-tenant-name", "https://[redacted].example.com/?a=[redacted]"},
		{"https://ex.com/p/sk-abcdefghijklmnopqrst", "https://ex.com/p/[redacted]"},
		{"https://ex.com/p;token=abcdefgh/x?code=1", "https://ex.com/p;token=[redacted]"}, // the shape takes the rest,
		{"not a url ?token=abc", "not%20a%20url%20?token=[redacted]"},
		{"", ""},
	}
	for _, tc := range tests {
		if got := r.URL(tc.in); got != tc.want {
			t.Errorf("URL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	// With nothing registered and no shape in it, the redactor's URL is
	// scrub.URL's.
	for _, in := range []string{"https://a.test/x?token=abc&x=&flag#f", "/rel?session=s3cr3t", "javascript:alert(1)"} {
		if got, want := New().URL(in), scrub.URL(in); got != want {
			t.Errorf("New().URL(%q) = %q, scrub.URL = %q", in, got, want)
		}
	}
}

func TestJSON(t *testing.T) {
	r := New()
	r.Register(secret)
	in := json.RawMessage(`{"b":1.50,"a":["` + strings.ReplaceAll(secret, "&", `\u0026`) + `",true,null],"url":"https://x.test/?token=t0k3n","` + "key-" + secret + `":{"n":-2e3}}`)
	got := r.JSON(in)
	if !json.Valid(got) {
		t.Fatalf("invalid JSON out: %s", got)
	}
	want := `{"b":1.50,"a":["[redacted]",true,null],"url":"https://x.test/?token=[redacted]","key-[redacted]":{"n":-2e3}}`
	if string(got) != want {
		t.Fatalf("JSON =\n%s\nwant\n%s", got, want)
	}
	creds := r.JSON(json.RawMessage(`{"Password":"pw","session_id":"tag-1","api_key":7,"x":{"authorization":"Basic dXNlcjpwYXNz"}}`))
	if string(creds) != `{"Password":"[redacted]","session_id":"tag-1","api_key":7,"x":{"authorization":"[redacted]"}}` {
		t.Fatalf("credential keys: %s", creds)
	}
	// Invalid JSON is redacted as text.
	bad := json.RawMessage(`{"a":"` + secret)
	if strings.Contains(string(r.JSON(bad)), secret) {
		t.Fatal("secret survived in invalid JSON")
	}
	if got := r.JSON(json.RawMessage(`"x" "y"`)); string(got) != `"x" "y"` {
		t.Fatalf("trailing data: %s", got)
	}
}

func TestConcurrent(t *testing.T) {
	r := New()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := strings.Repeat(string(rune('a'+i)), 10)
			r.Register(v)
			if got := r.String("x" + v + "x"); strings.Contains(got, v) {
				t.Errorf("value %q survived: %q", v, got)
			}
		}()
	}
	wg.Wait()
}

func TestExpandSecrets(t *testing.T) {
	src := Chain{nil, mapSource{"GITHUB_PASSWORD": "correct horse battery", "PIN": "1234", "LOOSE": "no origins at all"}}
	tests := []struct {
		name, in, want string
		err            error
	}{
		{"none", "plain text", "plain text", nil},
		{"one", "{{secret:GITHUB_PASSWORD}}", "correct horse battery", nil},
		{"lower name, spaces", "pw={{ secret:github_password }}!", "pw=correct horse battery!", nil},
		{"short value", "{{secret:PIN}}", "1234", nil},
		{"unknown", "{{secret:NOPE}}", "", ErrUnknownSecret},
		{"bad name", "{{secret:no-pe}}", "", ErrBadSecretName},
		{"origins list is no secret", "{{secret:PIN_ORIGINS}}", "", ErrBadSecretName},
		{"no origins", "{{secret:LOOSE}}", "", ErrUnboundSecret},
		{"not a placeholder", "{{other:X}}", "{{other:X}}", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := New()
			got, used, err := (&Secrets{Source: src, Redactor: r}).Expand(tc.in)
			if !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			if err == nil && HasSecrets(tc.in) && (len(used) != 1 || used[0].Origins[0] != "https://a.example") {
				t.Fatalf("used = %+v", used)
			}
			if err == nil && strings.Contains(tc.in, "GITHUB") {
				if r.String(got) == got {
					t.Fatal("resolved value not registered")
				}
			}
		})
	}
	_, _, err := (*Secrets)(nil).Expand("{{secret:missing_one}}")
	var ue *UnknownSecretError
	if !errors.As(err, &ue) || ue.EnvVar != "DURABLE_BROWSER_SECRET_MISSING_ONE" || !strings.Contains(err.Error(), ue.EnvVar) {
		t.Fatalf("unknown secret error = %v", err)
	}
	_, _, err = (&Secrets{Source: src}).Expand("{{secret:loose}}")
	var be *UnboundSecretError
	if !errors.As(err, &be) || !strings.Contains(err.Error(), "DURABLE_BROWSER_SECRET_LOOSE_ORIGINS") || strings.Contains(err.Error(), "no origins at all") {
		t.Fatalf("unbound secret error = %v", err)
	}
}

// mapSource binds every secret but LOOSE to https://a.example.
type mapSource map[string]string

func (m mapSource) Lookup(n string) (Secret, bool) {
	v, ok := m[n]
	s := Secret{Name: n, Value: v}
	if n != "LOOSE" {
		s.Origins = []string{"https://a.example"}
	}
	return s, ok
}

func TestEnvSource(t *testing.T) {
	t.Setenv("DURABLE_BROWSER_SECRET_SITE_TOKEN", "env-secret-value")
	t.Setenv("DURABLE_BROWSER_SECRET_SITE_TOKEN_ORIGINS", "https://a.example")
	r := New()
	got, _, err := (&Secrets{Source: EnvSource{}, Redactor: r}).Expand("{{secret:site_token}}")
	if err != nil || got != "env-secret-value" {
		t.Fatalf("got %q, %v", got, err)
	}
	if r.String(got) != Placeholder {
		t.Fatal("env secret not registered")
	}
}

func TestFileSource(t *testing.T) {
	fs, err := ParseFileSource([]byte("# comment\n\nexport A_B=x=y \"q\"\r\nlower=value\n"))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := fs.Lookup("a_b"); !ok || v.Value != `x=y "q"` {
		t.Fatalf("A_B = %q %v", v.Value, ok)
	}
	if v, ok := fs.Lookup("LOWER"); !ok || v.Value != "value" {
		t.Fatalf("LOWER = %q %v", v.Value, ok)
	}
	if len(fs.Names()) != 2 {
		t.Fatalf("names %v", fs.Names())
	}
	_, err = ParseFileSource([]byte("ok=1\nthis line leaks hunter2\n"))
	if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("bad line error = %v", err)
	}
	path := t.TempDir() + "/secrets.env"
	if _, err := LoadFileSource(path); err == nil {
		t.Fatal("missing file loaded")
	}
}

func FuzzString(f *testing.F) {
	f.Add("abcdefgh", "xx abcdefgh yy")
	f.Add("a[redacted]", "aa[redacted]")
	f.Add("p@ss w0rd&=", "?p="+url.QueryEscape("p@ss w0rd&="))
	f.Add("ééééééééé", "Bearer ééééééééé sk-aaaaaaaaaaaaaaaaaaaa")
	f.Fuzz(func(t *testing.T, value, text string) {
		r := New()
		r.Register(value)
		got := r.String(text)
		if r.Len() == 1 && strings.Contains(got, value) {
			t.Fatalf("value %q survived in %q (from %q)", value, got, text)
		}
		_ = r.URL(text)
		_ = r.JSON(json.RawMessage(text))
	})
}
