package redact

import (
	"fmt"
	"strings"
	"testing"
)

// benchValues are three registered (or typed) secrets, one with the
// characters HTML and JSON escape.
var benchValues = []string{"correct horse battery staple", "tok_live_0123456789abcdef", `Pw<&>"q'x/y+z=9`}

// benchHTML is a page as Chrome serializes it, n bytes long: links with
// &amp; in their queries, attributes with &quot;, text with &lt; and
// &nbsp;, none of it a secret.
func benchHTML(n int) string {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html><head><title>Shop</title></head><body>`)
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, `<div class="row" data-x="{&quot;id&quot;:%d}"><a href="/item?id=%d&amp;ref=list&amp;page=2">Item %d &lt;new&gt;</a>&nbsp;<span>price: 12.50 &amp; free shipping</span></div>`+"\n", i, i, i)
	}
	b.WriteString(`</body></html>`)
	return b.String()[:n]
}

// BenchmarkRedactString is the redactor over what a read files: a page's
// serialized HTML (character references throughout) and plain text
// (none), 3 values registered, nothing to redact (the whole text is read,
// the common case). "plain-values" registers 3 values without a character
// HTML escapes (the common case: no reference in the page can stand for
// a character of theirs).
func BenchmarkRedactString(b *testing.B) {
	r := New()
	r.Register(benchValues...)
	plain := New()
	plain.Register(benchValues[0], benchValues[1], "third-Secret-value-0003")
	for _, tc := range []struct {
		name, text string
		r          *Redactor
	}{
		{"html-64KiB", benchHTML(64 << 10), r},
		{"html-1MiB", benchHTML(1 << 20), r},
		{"html-1MiB-plain-values", benchHTML(1 << 20), plain},
		{"text-64KiB", repeatTo("Some plain text of a page, without anything to hide. ", 64<<10), r},
	} {
		r := tc.r
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.text)))
			for b.Loop() {
				if out := r.String(tc.text); len(out) != len(tc.text) {
					b.Fatal("redacted something")
				}
			}
		})
	}
}

// BenchmarkMatcherFind is the secret guard's search of one request toward
// an origin the 3 typed secrets are not bound to: a URL and a 4 KiB body
// of each common kind, nothing found (the whole text is read). The
// "-plain-values" ones type 3 secrets without a character JSON or HTML
// escapes.
func BenchmarkMatcherFind(b *testing.B) {
	var secrets, plainSecrets []Secret
	for i, v := range benchValues {
		secrets = append(secrets, Secret{Name: fmt.Sprintf("S%d", i), Value: v, Origins: []string{"https://shop.example"}})
	}
	plainSecrets = append(append(plainSecrets, secrets[:2]...), Secret{Name: "S2", Value: "third-Secret-value-0003", Origins: []string{"https://shop.example"}})
	withSpecial, plain := (&Matcher{}).With(secrets...), (&Matcher{}).With(plainSecrets...)
	url := "https://analytics.example/collect?v=1&tid=UA-000000-1&cid=5555.7777&t=pageview&dp=%2Fcheckout%2Fstep-2"
	const n = 4 << 10
	json := repeatTo(`{"event":"click","text":"line one\nline \"two\"","path":"\/a\/b","u":"caf\u00e9"},`, n)
	for _, tc := range []struct {
		name, body string
		m          *Matcher
	}{
		{"form", repeatTo("field=value&other=some+text+here&", n), withSpecial},
		{"json", json, withSpecial},
		{"json-plain-values", json, plain},
		{"html", benchHTML(n), withSpecial},
		{"html-plain-values", benchHTML(n), plain},
		{"plain", repeatTo("just some text in a body ", n), withSpecial},
	} {
		m := tc.m
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(url) + len(tc.body)))
			for b.Loop() {
				if _, found := m.Find("https://analytics.example", url, tc.body); found {
					b.Fatal("found a secret")
				}
			}
		})
	}
}

// repeatTo is s repeated to n bytes.
func repeatTo(s string, n int) string { return strings.Repeat(s, n/len(s)+1)[:n] }
