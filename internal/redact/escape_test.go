package redact

import (
	"fmt"
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/internal/markdown"
)

// Values with the characters HTML and JSON escape, as a black-box tester
// typed them.
var escapedValues = []string{
	"less<than<Sign8",
	"amp&ersand99x",
	`quo"teQuote77`,
	`Pw<&>"q'x/y+z=9`,
	"apo'strophe'88",
	"nb\u00a0sp-secret-1",
	`back\slash-7/"x`,
}

// Written here apart from redact.go: what each serializer makes of v.
var (
	chromeText  = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\u00a0", "&nbsp;")
	chromeAttr  = strings.NewReplacer("&", "&amp;", `"`, "&quot;", "\u00a0", "&nbsp;")
	pythonHTML  = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#x27;")
	lodashHTML  = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;")
	phpHTML     = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#039;")
	xmlAttr     = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")
	upperNamed  = strings.NewReplacer("&", "&AMP;", "<", "&LT;", ">", "&GT;", `"`, "&QUOT;")
	markdownMix = strings.NewReplacer("<", "&lt;", ">", "&gt;") // what the markdown converter writes: '&' left raw
)

// stringify is JSON.stringify's spelling of v, inside the quotes.
func stringify(v string) string {
	var b strings.Builder
	for _, r := range v {
		switch {
		case r == '"' || r == '\\':
			b.WriteString(`\` + string(r))
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// numeric spells every character of v as a character reference: format
// is "&#%d;" or "&#x%X;" and the like.
func numeric(v, format string) string {
	var b strings.Builder
	for _, r := range v {
		fmt.Fprintf(&b, format, r)
	}
	return b.String()
}

// allEscaped spells every character of v as a JSON \u escape (UTF-16),
// its hex digits in lower case, or upper with upper.
func allEscaped(v string, upper bool) string {
	format := `\u%04x`
	if upper {
		format = `\u%04X`
	}
	var b strings.Builder
	for _, r := range v {
		if r > 0xFFFF {
			r -= 0x10000
			fmt.Fprintf(&b, format+format, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
			continue
		}
		fmt.Fprintf(&b, format, r)
	}
	return b.String()
}

// htmlForms are the spellings of v in HTML the redactor must know, by
// name: each serializer's and any mix of references.
func htmlForms(v string) map[string]string {
	return map[string]string{
		"chrome text node":               chromeText.Replace(v),
		"chrome attribute":               chromeAttr.Replace(v),
		"go html.EscapeString":           html.EscapeString(v),
		"python html.escape (&#x27;)":    pythonHTML.Replace(v),
		"lodash escape (&#39;)":          lodashHTML.Replace(v),
		"php htmlspecialchars (&#039;)":  phpHTML.Replace(v),
		"xml attribute":                  xmlAttr.Replace(v),
		"upper-case names":               upperNamed.Replace(v),
		"markdown's mix":                 markdownMix.Replace(v),
		"every character decimal":        numeric(v, "&#%d;"),
		"every character hex":            numeric(v, "&#x%x;"),
		"every character HEX, zeros":     numeric(v, "&#X%06X;"),
		"decimal without ';'":            numeric(v, "&#%d") + " ",
		"JSON.stringify in an attribute": chromeAttr.Replace(stringify(v)),
	}
}

// Each value, in each HTML spelling, in a text node and an attribute of a
// page as Chrome serializes it: redacted whole, the markup around kept,
// and nothing of the value left however the output is decoded.
func TestStringHTMLSpellings(t *testing.T) {
	r := New()
	r.Register(escapedValues...)
	for _, v := range escapedValues {
		for name, sp := range htmlForms(v) {
			t.Run(v+"/"+name, func(t *testing.T) {
				for _, in := range []string{
					`<p class="x">Your password is ` + sp + `.</p>`,
					`<span title="` + sp + `">x</span>`,
					sp,
				} {
					out := r.String(in)
					if !strings.Contains(out, Placeholder) {
						t.Fatalf("nothing redacted in %q", out)
					}
					if l := leftIn(out, v); l != "" {
						t.Fatalf("the value survives (%s) in %q", l, out)
					}
					if strings.HasPrefix(in, "<p") && (!strings.HasPrefix(out, `<p class="x">Your password is `) || !strings.HasSuffix(out, ".</p>")) {
						t.Fatalf("the markup around was not kept: %q", out)
					}
					if again := r.String(out); again != out {
						t.Fatalf("not idempotent: %q then %q", out, again)
					}
				}
			})
		}
	}
}

// leftIn says how v can still be read in out: raw, in a spelling the
// redactor lists, or once out's references or JSON escapes are decoded.
func leftIn(out, v string) string {
	for _, sp := range spellings(v) {
		if len(sp) >= MinLen && strings.Contains(out, sp) {
			return "spelling " + sp
		}
	}
	if strings.Contains(html.UnescapeString(out), v) {
		return "HTML-decoded"
	}
	if d, _ := htmlDecoded(out, nil, false, nil); strings.Contains(d, v) {
		return "decoded as a browser decodes"
	}
	return ""
}

// The JSON spellings: Go's (< > & as \u003c \u003e \u0026) and
// JSON.stringify's (only " \ and control characters escaped).
func TestStringJSONSpellings(t *testing.T) {
	r := New()
	r.Register(escapedValues...)
	for _, v := range escapedValues {
		for name, sp := range map[string]string{"JSON.stringify": stringify(v), "Go encoding/json": goJSON(v)} {
			in := `{"a":1,"v":"` + sp + `","b":2}`
			out := r.String(in)
			if out != `{"a":1,"v":"`+Placeholder+`","b":2}` {
				t.Errorf("%s of %q: %q", name, v, out)
			}
		}
	}
}

func goJSON(v string) string {
	var b strings.Builder
	for _, r := range v {
		switch {
		case r == '<' || r == '>' || r == '&' || r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		case r == '"' || r == '\\':
			b.WriteString(`\` + string(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Text with references and no secret is left alone, and so is a value
// one character off.
func TestStringHTMLNoSecret(t *testing.T) {
	r := New()
	r.Register(escapedValues...)
	for _, in := range []string{
		`<a href="/item?id=1&amp;ref=list">Item &lt;new&gt;</a>&nbsp;<span title="&quot;x&quot;">12.50 &amp; free</span>`,
		`Pw&lt;&amp;&gt;&quot;q'x/y+z=8`, // the last character differs
		`less&lt;than&lt;Sign9`,
		`&#108;&#101;&#115;&#115;&#60;&#116;&#104;&#97;&#110;&#60;&#83;&#105;&#103;&#110;`, // less<than<Sign, short of the 8
		"a=1&b=2&less=3 &amp &lt &#; &#x; &unknown; &",
	} {
		if out := r.String(in); out != in {
			t.Errorf("String(%q) = %q, want it unchanged", in, out)
		}
	}
}

// Decoding: what each reference stands for, and where it sat.
func TestHTMLDecoded(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a &lt;b&gt; &amp; &quot;c&quot; &#39;d&#x27; &nbsp;", "a <b> & \"c\" 'd' \u00a0"},
		{"&#60&#x3c;&#X3C;&#0000060;&LT;&AMP;&QUOT;&apos;", "<<<<<&\"'"},
		{"&#0;&#xD800;&#x110000;&#99999999999999999999;&#128;", "\uFFFD\uFFFD\uFFFD\uFFFD€"},
		{"no refs & here &x &; &# &#x &amp &unknown; a=1&b=2", "no refs & here &x &; &# &#x &amp &unknown; a=1&b=2"},
		{"&#x1F600;", "😀"},
	} {
		got, refs := htmlDecoded(tc.in, nil, true, nil)
		if got != tc.want {
			t.Errorf("htmlDecoded(%q) = %q, want %q", tc.in, got, tc.want)
		}
		// Every decoded byte maps back into the reference it came from.
		for _, ref := range refs {
			a, e := sourceSpan(refs, ref.at, ref.at+ref.n)
			if a != ref.src || e != ref.src+ref.srcN || !strings.HasPrefix(tc.in[a:], "&") {
				t.Errorf("%q: reference at %d maps to [%d,%d), want [%d,%d)", tc.in, ref.at, a, e, ref.src, ref.src+ref.srcN)
			}
		}
	}
	// Text between references maps to itself, shifted.
	in := "ab&lt;cd&amp;ef"
	dec, refs := htmlDecoded(in, nil, true, nil)
	if dec != "ab<cd&ef" {
		t.Fatal(dec)
	}
	for d, want := range []struct{ a, e int }{{0, 1}, {1, 2}, {2, 6}, {6, 7}, {7, 8}, {8, 13}, {13, 14}, {14, 15}} {
		if a, e := sourceSpan(refs, d, d+1); a != want.a || e != want.e {
			t.Errorf("decoded byte %d (%q) maps to [%d,%d), want [%d,%d)", d, dec[d], a, e, want.a, want.e)
		}
	}
}

func TestJSONDecoded(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"v":"\u005a\u0071 \"x\" \\ \/ \n\t"}`, "{\"v\":\"Zq \"x\" \\ / \n\t\"}"},
		{`\ud83d\ude00 \ud83d \ude00x \u00e9`, "😀 \uFFFD \uFFFDx é"},
		{`C:\path\x \u12 \\u0041 end\`, `C:\path\x \u12 \u0041 end\`},
		{"no escapes", "no escapes"},
	} {
		if got := jsonDecoded(tc.in, nil, nil); got != tc.want {
			t.Errorf("jsonDecoded(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// A read in markdown is converted from the redacted HTML: the converter
// decodes references, so HTML the redactor missed would reach the
// markdown as the raw value, or in its own escaping (it writes '<' as
// &lt; and leaves '&', it writes '_' '*' '[' '\' with a backslash), which
// no redactor pass after it knows. Each value placed where a page puts
// text and attributes the converter prints (text, link text and title,
// image alt, a preformatted block, a table cell), as Chrome serializes
// them, leaves nothing of itself in the markdown, however the markdown is
// read; and without the redactor the same page does show it (the
// control).
func TestMarkdownOfRedactedHTML(t *testing.T) {
	r := New()
	r.Register(escapedValues...)
	r.Register("under_score*star[b]x")
	unescape := regexp.MustCompile("\\\\([!-/:-@\\[-`{-~])")
	read := func(md string) string { return html.UnescapeString(unescape.ReplaceAllString(md, "$1")) }
	for _, v := range append(escapedValues, "under_score*star[b]x") {
		t.Run(v, func(t *testing.T) {
			text, attr := chromeText.Replace(v), chromeAttr.Replace(v)
			page := `<!DOCTYPE html><html><head><title>` + text + `</title></head><body><main>
<h1>Account</h1>
<p>Your password is ` + text + ` and nothing else.</p>
<p><a href="https://a.example/p" title="` + attr + `">link ` + text + `</a> <img src="https://a.example/i.png" alt="` + attr + `"></p>
<pre>` + text + `</pre>
<table><tr><th>k</th></tr><tr><td>` + text + `</td></tr></table>
<ul><li><em>` + text + `</em></li></ul>
</main></body></html>`
			control, err := markdown.Convert(page, markdown.Options{BaseURL: "https://a.example/"})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(read(control.Markdown), v) {
				t.Fatalf("control: the page's markdown does not show the value:\n%s", control.Markdown)
			}
			res, err := markdown.Convert(r.String(page), markdown.Options{BaseURL: "https://a.example/"})
			if err != nil {
				t.Fatal(err)
			}
			md := res.Markdown
			if strings.Count(read(md), Placeholder) < 5 {
				t.Fatalf("fewer placeholders than places:\n%s", md)
			}
			for _, form := range []string{md, read(md), unescape.ReplaceAllString(md, "$1"), html.UnescapeString(md)} {
				if l := leftIn(form, v); l != "" {
					t.Fatalf("the value survives (%s) in the markdown:\n%s", l, md)
				}
			}
			if again := r.String(md); again != md {
				t.Fatalf("redacting the markdown again changes it:\n%s\n%s", md, again)
			}
		})
	}
}

// The guard finds a value spelled in any form a page can give a body or
// URL: JSON.stringify's, Go's, every character \u-escaped, HTML-escaped
// by any serializer or every character a reference, and those
// percent-encoded; toward its own origin it finds nothing.
func TestMatcherFindEscapedSpellings(t *testing.T) {
	values := append(append([]string{}, escapedValues...), "pässwörd-😀-secret")
	for _, v := range values {
		m := (*Matcher)(nil).With(Secret{Name: "PW", Value: v, Origins: []string{"http://127.0.0.1:8080"}})
		forms := map[string]string{
			"JSON.stringify":            `{"v":"` + stringify(v) + `"}`,
			"Go encoding/json":          `{"v":"` + goJSON(v) + `"}`,
			"every character \\u":       `{"v":"` + allEscaped(v, false) + `"}`,
			"every character \\U":       `{"v":"` + allEscaped(v, true) + `"}`,
			"\\u in a form body":        "a=1&v=" + url.QueryEscape(`{"v":"`+allEscaped(v, false)+`"}`),
			"stringify, encodeURI'd":    "/log?d=" + url.PathEscape(`{"v":"`+stringify(v)+`"}`),
			"JSON.stringify in HTML":    `<div data-v="` + chromeAttr.Replace(`{"v":"`+stringify(v)+`"}`) + `">`,
			"JSON in JSON":              `{"d":"{\"v\":\"` + strings.ReplaceAll(strings.ReplaceAll(stringify(v), `\`, `\\`), `"`, `\"`) + `\"}"}`,
			"Go JSON of its HTML":       `{"html":"<p>` + goJSON(chromeText.Replace(v)) + `</p>"}`,
			"Go JSON of its references": `{"html":"` + goJSON(numeric(v, "&#%d;")) + `"}`,
		}
		for name, sp := range htmlForms(v) {
			forms[name] = "<p>" + sp + "</p>"
		}
		for name, body := range forms {
			if n, ok := m.Find("http://127.0.0.1:9090", "http://127.0.0.1:9090/json", body); !ok || n != "PW" {
				t.Errorf("%q as %s (%q): not found toward another origin", v, name, body)
			}
			if _, ok := m.Find("http://127.0.0.1:8080", "http://127.0.0.1:8080/json", body); ok {
				t.Errorf("%q as %s: found toward its own origin", v, name)
			}
		}
		// A body one character off carries nothing.
		off := v[:len(v)-1] + "#"
		for name, body := range map[string]string{"stringify": stringify(off), "\\u": allEscaped(off, false), "numeric": numeric(off, "&#%d;"), "text": chromeText.Replace(off)} {
			if n, ok := m.Find("http://127.0.0.1:9090", body); ok {
				t.Errorf("%q: a body one character off (%s) reported %s", v, name, n)
			}
		}
	}
	// JSON.stringify's spelling is one the matcher knows outright (not
	// only decoded): found where a decoder would not reach it.
	if !containsSpelling(matchSpellings(`Pw<&>"q'x/y+z=9`), `Pw<&>\"q'x/y+z=9`) {
		t.Error("JSON.stringify's spelling is not a match spelling")
	}
}

func containsSpelling(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}
