package redact

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

func TestParseOrigins(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		bad  string // part of the error
	}{
		{in: "https://a.example", want: []string{"https://a.example"}},
		{in: "HTTPS://A.Example:443/, http://b.example:80", want: []string{"https://a.example", "http://b.example"}},
		{in: "http://127.0.0.1:8080,http://127.0.0.1:8080", want: []string{"http://127.0.0.1:8080"}},
		{in: "https://[::1]:8443", want: []string{"https://[::1]:8443"}},
		{in: "https://a.example.", want: []string{"https://a.example"}},
		{in: "", bad: "origin 1 is empty"},
		{in: "https://a.example,", bad: "origin 2 is empty"},
		{in: "a.example", bad: "scheme"},
		{in: "ftp://a.example", bad: "scheme"},
		{in: "wss://a.example", bad: "scheme"},
		{in: "https://a.example/login", bad: "no path"},
		{in: "https://a.example?x=1", bad: "no path"},
		{in: "https://a.example#x", bad: "no path"},
		{in: "https://user:pw@a.example", bad: "userinfo"},
		{in: "https://", bad: "no host"},
		{in: "https://a.example:0", bad: "port"},
		{in: "https://a.example:99999", bad: "port"},
		{in: "https://a.example:", bad: "empty port"},
		{in: "https://bücher.example", bad: "ASCII"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseOrigins(tc.in)
			if tc.bad != "" {
				if err == nil || !strings.Contains(err.Error(), tc.bad) {
					t.Fatalf("err = %v, want one saying %q", err, tc.bad)
				}
				if tc.in != "" && strings.Contains(err.Error(), tc.in) {
					t.Fatalf("the error repeats the input: %v", err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestOriginOf(t *testing.T) {
	for in, want := range map[string]string{
		"https://A.example/x?y#z":       "https://a.example",
		"https://a.example:443/":        "https://a.example",
		"http://a.example:80":           "http://a.example",
		"http://127.0.0.1:8080/p":       "http://127.0.0.1:8080",
		"wss://a.example:443/socket":    "wss://a.example",
		"https://u:p@a.example.:8443/x": "https://a.example:8443",
		"data:text/plain,hello":         "",
		"about:blank":                   "",
	} {
		if got := OriginOf(in); got != want {
			t.Errorf("OriginOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFileSourceOrigins(t *testing.T) {
	fs, err := ParseFileSource([]byte("PW=correct-horse-staple\nPW_ORIGINS=https://a.example, http://127.0.0.1:9000\nBARE=no-origins-here\n"))
	if err != nil {
		t.Fatal(err)
	}
	pw, ok := fs.Lookup("pw")
	if !ok || pw.Value != "correct-horse-staple" || !reflect.DeepEqual(pw.Origins, []string{"https://a.example", "http://127.0.0.1:9000"}) {
		t.Fatalf("PW = %+v", pw)
	}
	if bare, _ := fs.Lookup("BARE"); len(bare.Origins) != 0 {
		t.Fatalf("BARE has origins %v", bare.Origins)
	}
	if _, ok := fs.Lookup("PW_ORIGINS"); ok {
		t.Fatal("an origins line is a secret")
	}
	for _, n := range fs.Names() {
		if strings.HasSuffix(n, OriginsSuffix) {
			t.Fatalf("Names lists %s", n)
		}
	}
	for in, want := range map[string]string{
		"PW=x1234567\nPW_ORIGINS=https://a.example/login\n": "line 2: origin 1",
		"PW_ORIGINS=https://a.example\n":                    "line 1: PW_ORIGINS without a PW line",
	} {
		if _, err := ParseFileSource([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", in, err, want)
		}
	}
}

func TestEnvSourceOrigins(t *testing.T) {
	t.Setenv("DURABLE_BROWSER_SECRET_PW", "correct-horse-staple")
	t.Setenv("DURABLE_BROWSER_SECRET_PW_ORIGINS", "https://a.example,https://B.example:443")
	t.Setenv("DURABLE_BROWSER_SECRET_BAD", "correct-horse-staple")
	t.Setenv("DURABLE_BROWSER_SECRET_BAD_ORIGINS", "https://a.example/path")
	s, ok := EnvSource{}.Lookup("pw")
	if !ok || !reflect.DeepEqual(s.Origins, []string{"https://a.example", "https://b.example"}) {
		t.Fatalf("PW = %+v", s)
	}
	if _, ok := (EnvSource{}).Lookup("PW_ORIGINS"); ok {
		t.Fatal("an origins variable is a secret")
	}
	_, _, err := (&Secrets{Source: EnvSource{}}).Expand("{{secret:bad}}")
	var ue *UnboundSecretError
	if !errors.As(err, &ue) || ue.Err == nil || !strings.Contains(err.Error(), "DURABLE_BROWSER_SECRET_BAD_ORIGINS") {
		t.Fatalf("malformed origins: %v", err)
	}
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"DURABLE_BROWSER_SECRET_PW=x", "DURABLE_BROWSER_SECRET_PW_ORIGINS=https://a.example"}, ""},
		{[]string{"DURABLE_BROWSER_SECRET_PW=x", "DURABLE_BROWSER_SECRET_PW_ORIGINS=a.example"}, "DURABLE_BROWSER_SECRET_PW_ORIGINS: origin 1"},
		{[]string{"DURABLE_BROWSER_SECRET_PW_ORIGINS=https://a.example"}, "DURABLE_BROWSER_SECRET_PW is not"},
	} {
		err := CheckEnv(tc.env)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("CheckEnv(%q) = %v, want %q", tc.env, err, tc.want)
		}
	}
}

func TestMatcher(t *testing.T) {
	const pw = "hunter2-very/secret value&more"
	m := (*Matcher)(nil).With(
		Secret{Name: "PW", Value: pw, Origins: []string{"https://a.example"}},
		Secret{Name: "TOKEN", Value: "tok_live_0123456789", Origins: []string{"https://api.example"}},
		Secret{Name: "PIN", Value: "1234", Origins: []string{"https://a.example"}},
	)
	if m.Len() != 2 {
		t.Fatalf("Len = %d, want 2 (short values are not searched for)", m.Len())
	}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	found := []struct{ name, text string }{
		{"raw", "/x?p=" + pw},
		{"query escape", "p=" + url.QueryEscape(pw)},
		{"a browser's partial escaping", "/img?p=" + strings.NewReplacer(" ", "%20", "&", "%26").Replace(pw)},
		{"path escape", "/" + url.PathEscape(pw)},
		{"base64", b64(pw)},
		{"base64 inside, offset 1", b64("a" + pw + "zz")},
		{"base64 inside, offset 2", b64("ab" + pw + "z")},
		{"base64 url, offset 1", base64.RawURLEncoding.EncodeToString([]byte("{" + pw + "}"))},
		{"hex", hex.EncodeToString([]byte(pw))},
		{"HEX", strings.ToUpper(hex.EncodeToString([]byte(pw)))},
		{"json escaped", `{"p":"hunter2-very/secret value\u0026more"}`},
	}
	for _, tc := range found {
		if n, ok := m.Find("https://b.example", "https://b.example/", tc.text); !ok || n != "PW" {
			t.Errorf("%s: Find = %q %v, want PW", tc.name, n, ok)
		}
		if n, ok := m.Find("https://a.example", tc.text); ok {
			t.Errorf("%s: found %s toward its own origin", tc.name, n)
		}
	}
	if n, ok := m.Find("https://a.example", "Authorization: Bearer tok_live_0123456789"); !ok || n != "TOKEN" {
		t.Fatalf("TOKEN toward a.example: %q %v", n, ok)
	}
	if _, ok := m.Find("https://b.example", "/x?p=1234", "hunter2-very/secret"); ok {
		t.Fatal("found a secret that is not there")
	}
}

// A host name carries a secret however DNS would see it: in lower case and
// split into labels of at most 63 bytes.
func TestMatcherFindHost(t *testing.T) {
	const pw = "Hunter2-Very-Secret-Value-With-More-Than-Thirty-Two-Bytes"
	m := (*Matcher)(nil).With(Secret{Name: "PW", Value: pw, Origins: []string{"https://a.example"}})
	h := hex.EncodeToString([]byte(pw))
	b32 := strings.ToLower(base64.RawURLEncoding.EncodeToString([]byte(pw)))
	for _, host := range []string{
		h + ".evil.example",
		strings.ToUpper(h[:40]) + "." + h[40:63] + "." + h[63:] + ".evil.example",
		strings.ToLower(pw) + ".evil.example",
		b32[:30] + "." + b32[30:] + ".evil.example",
		"%" + hex.EncodeToString([]byte(h[:1])) + h[1:] + ".evil.example", // percent-encoded, as a URL may spell it
		h[:12] + "\xd0" + h[12:40] + "é." + h[40:] + ".evil.example",      // broken by non-ASCII, whole again in punycode
	} {
		if n, ok := m.FindHost(host, "https://evil.example"); !ok || n != "PW" {
			t.Errorf("FindHost(%s) = %q %v, want PW", host, n, ok)
		}
		if _, ok := m.FindHost(host, "https://a.example"); ok {
			t.Errorf("FindHost(%s) found it toward its own origin", host)
		}
	}
	for _, host := range []string{"evil.example", "a.example", h[:14] + ".evil.example", ""} {
		if _, ok := m.FindHost(host, "https://evil.example"); ok {
			t.Errorf("FindHost(%s) found a secret that is not there", host)
		}
	}
	if _, ok := (*Matcher)(nil).FindHost(h); ok {
		t.Error("a nil Matcher found something")
	}
}

func TestMatcherShownHost(t *testing.T) {
	const pw = "Shown-Host-Secret-Value-1234"
	m := (*Matcher)(nil).With(Secret{Name: "PW", Value: pw, Origins: []string{"https://a.example"}})
	h := hex.EncodeToString([]byte(pw))
	for host, want := range map[string]string{
		"www." + h[:20] + "." + h[20:] + ".evil.example": "[redacted].evil.example",
		h + ".com":     "[redacted].com",
		"x." + h:       "[redacted]",
		"evil.example": "evil.example",
	} {
		if got := m.ShownHost(host, "https://evil.example"); got != want {
			t.Errorf("ShownHost(%s) = %s, want %s", host, got, want)
		}
	}
}
