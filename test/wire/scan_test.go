package wire

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"
)

// needle is one spelling of one secret.
type needle struct {
	secret, kind, value string
	// short needles (a secret's first or last 8 characters) are not searched
	// in binary bodies (images), where 8 given characters turn up by chance.
	short bool
}

func (n needle) label() string { return n.secret + ":" + n.kind }

// needlesFor lists every spelling of a secret the scan looks for: raw,
// URL-encoded (query and path), JSON-escaped (Go's and JSON.stringify's),
// HTML-escaped (Chrome's text node and attribute, Go's html.EscapeString),
// hex (lower and upper case), base64 (standard and URL alphabets, padded
// and raw), and its first and last 8 characters. Identical spellings are
// kept once, under the first kind. (Every source is also searched decoded,
// see views, so a spelling made of references or \u escapes is found too.)
func needlesFor(s sentinel) []needle {
	b := []byte(s.Value)
	goJSON, _ := json.Marshal(s.Value)
	kinds := []struct {
		kind, value string
	}{
		{"raw", s.Value},
		{"query-escaped", url.QueryEscape(s.Value)},
		{"path-escaped", url.PathEscape(s.Value)},
		{"json-go", string(goJSON[1 : len(goJSON)-1])},
		{"json-stringify", strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s.Value)},
		{"html-text", strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s.Value)},
		{"html-attr", strings.NewReplacer("&", "&amp;", `"`, "&quot;").Replace(s.Value)},
		{"html-escaped", html.EscapeString(s.Value)},
		{"hex", hex.EncodeToString(b)},
		{"HEX", strings.ToUpper(hex.EncodeToString(b))},
		{"base64-std", base64.StdEncoding.EncodeToString(b)},
		{"base64-std-raw", base64.RawStdEncoding.EncodeToString(b)},
		{"base64-url", base64.URLEncoding.EncodeToString(b)},
		{"base64-url-raw", base64.RawURLEncoding.EncodeToString(b)},
		{"first8", s.Value[:8]},
		{"last8", s.Value[len(s.Value)-8:]},
	}
	var out []needle
	seen := map[string]bool{}
	for _, k := range kinds {
		if seen[k.value] {
			continue
		}
		seen[k.value] = true
		out = append(out, needle{secret: s.Name, kind: k.kind, value: k.value, short: k.kind == "first8" || k.kind == "last8"})
	}
	return out
}

func allNeedles(ss []sentinel) []needle {
	var out []needle
	for _, s := range ss {
		out = append(out, needlesFor(s)...)
	}
	// Longest first, so masking a context replaces whole spellings.
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].value) > len(out[j].value) })
	return out
}

// hit is one needle found in one source.
type hit struct {
	source, needle, context string
	offset                  int
}

func (h hit) String() string {
	return fmt.Sprintf("%s: %s at byte %d: …%s…", h.source, h.needle, h.offset, h.context)
}

// corpus is every byte a run produced, by source.
type corpus struct {
	names []string
	data  map[string][]byte
	// binary sources are searched for full spellings only.
	binary map[string]bool
}

func newCorpus() *corpus { return &corpus{data: map[string][]byte{}, binary: map[string]bool{}} }

func (c *corpus) add(name string, b []byte) {
	if _, ok := c.data[name]; !ok {
		c.names = append(c.names, name)
	}
	c.data[name] = append(c.data[name], b...)
	if !utf8.Valid(b) {
		c.binary[name] = true
	}
}

func (c *corpus) size() (n int) {
	for _, b := range c.data {
		n += len(b)
	}
	return n
}

// views are a textual source as it is and decoded: its HTML character
// references decoded, its JSON string escapes decoded, and both, each when
// it changes the text. A secret a page or serializer wrote with some or all
// of its characters as &#60; or \u003c reads raw in one of them.
func views(name string, data []byte) (names []string, datas [][]byte) {
	names, datas = []string{name}, [][]byte{data}
	add := func(n string, d []byte) {
		for _, have := range datas {
			if bytes.Equal(have, d) {
				return
			}
		}
		names, datas = append(names, n), append(datas, d)
	}
	s := string(data)
	j := jsonUnescaped(s)
	add(name+" (JSON escapes decoded)", []byte(j))
	add(name+" (HTML references decoded)", []byte(html.UnescapeString(s)))
	add(name+" (JSON escapes and HTML references decoded)", []byte(html.UnescapeString(j)))
	return names, datas
}

// jsonEscapes are runs of JSON string escapes.
var jsonEscapes = regexp.MustCompile(`(?:\\u[0-9a-fA-F]{4}|\\["\\/bfnrt])+`)

// jsonUnescaped decodes every run of JSON string escapes in s, wherever it
// stands (s need not be JSON).
func jsonUnescaped(s string) string {
	return jsonEscapes.ReplaceAllStringFunc(s, func(run string) string {
		var out string
		if json.Unmarshal([]byte(`"`+run+`"`), &out) != nil {
			return run
		}
		return out
	})
}

// scan finds every needle in every source, textual ones also decoded
// (views). A hit's context never shows a spelling: each is replaced by its
// label.
func scan(c *corpus, needles []needle) []hit {
	var hits []hit
	for _, source := range c.names {
		names, datas := []string{source}, [][]byte{c.data[source]}
		if !c.binary[source] {
			names, datas = views(source, c.data[source])
		}
		for v, name := range names {
			hits = append(hits, scanOne(name, datas[v], c.binary[source], needles)...)
		}
	}
	return hits
}

// scanOne finds every needle in one source's data.
func scanOne(name string, data []byte, binary bool, needles []needle) []hit {
	var hits []hit
	for _, n := range needles {
		if n.short && binary {
			continue
		}
		nv := []byte(n.value)
		for off := 0; ; {
			i := bytes.Index(data[off:], nv)
			if i < 0 {
				break
			}
			at := off + i
			hits = append(hits, hit{source: name, needle: n.label(), offset: at, context: maskedContext(data, at, len(nv), needles)})
			off = at + 1
		}
	}
	return hits
}

// maskedContext is up to 40 bytes each side of a hit, with every spelling in
// it replaced by its label and anything else non-printable shown as '.'.
func maskedContext(data []byte, at, n int, needles []needle) string {
	lo, hi := max(0, at-40), min(len(data), at+n+40)
	s := string(data[lo:hi])
	for _, nd := range needles {
		s = strings.ReplaceAll(s, nd.value, "«"+nd.label()+"»")
	}
	s = maskFragments(s, needles)
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == utf8.RuneError {
			return '.'
		}
		return r
	}, s)
}

// addDecodedJSON walks JSON and adds every string that decodes as base64
// (standard or URL alphabet, padded or not) to the corpus, decoded, so text
// carried base64-encoded at any offset is searched in the clear too.
func addDecodedJSON(c *corpus, name string, raw []byte) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return
	}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case string:
			if b, ok := decodeBase64(x); ok {
				c.add(name+" (base64-decoded strings)", b)
				addDecodedJSON(c, name+" (base64-decoded strings)", b)
			}
		}
	}
	walk(v)
}

func decodeBase64(s string) ([]byte, bool) {
	if len(s) < 12 {
		return nil, false
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, true
		}
	}
	return nil, false
}

// The control for the scanner itself: a synthetic corpus holding each
// secret in each spelling, embedded in other text (and binary bytes) at odd
// offsets, is found spelling by spelling; the same text without them is
// clean. This proves what the scanner can see, not what the worker hides.
func TestScannerFindsEverySpelling(t *testing.T) {
	ss := []sentinel{
		{"PW", "Pw0123456789abcdefgh+/=xyz<&>\"'!$@*XYZ12"},
		{"CARD", "41234567890123456789012345678901"},
	}
	needles := allNeedles(ss)
	for _, s := range ss {
		for _, n := range needlesFor(s) {
			c := newCorpus()
			c.add("text", []byte(`{"note":"before `+n.value+` after"}`))
			hits := scan(c, needles)
			found := false
			for _, h := range hits {
				if h.needle == n.label() {
					found = true
				}
				for _, nd := range needles {
					if strings.Contains(h.context, nd.value) {
						t.Fatalf("context of %s shows the spelling %s: %s", h.needle, nd.label(), h.context)
					}
				}
			}
			if !found {
				t.Errorf("%s not found; hits %v", n.label(), hits)
			}
			// Binary bodies are searched for full spellings only.
			c = newCorpus()
			c.add("png", append([]byte{0x89, 'P', 'N', 'G', 0xff, 0xfe}, []byte(n.value)...))
			got := len(scan(c, []needle{n})) > 0
			if got == n.short {
				t.Errorf("%s in a binary body: found=%v", n.label(), got)
			}
		}
	}
	// A spelling broken by an inserted character shows in no context.
	c0 := newCorpus()
	c0.add("md", []byte("is "+ss[0].Value[:20]+"\\"+ss[0].Value[20:]+" and"))
	for _, h := range scan(c0, needles) {
		if strings.Contains(h.context, ss[0].Value[8:20]) || strings.Contains(h.context, ss[0].Value[20:len(ss[0].Value)-8]) {
			t.Fatalf("context shows a fragment: %s", h.context)
		}
	}
	// A secret base64-encoded at an offset that does not line up with its
	// own base64 spelling is found once JSON strings are decoded.
	c := newCorpus()
	inner := base64.StdEncoding.EncodeToString([]byte("xy" + ss[0].Value))
	addDecodedJSON(c, "payload", []byte(`{"inline":"`+inner+`","n":[{"deep":"`+inner+`"}]}`))
	if hits := scan(c, needles); len(hits) < 2 {
		t.Errorf("base64 at an offset inside JSON: %v", hits)
	}
	// A secret every character of which is a character reference, or a
	// JSON \u escape, is found raw in the decoded views.
	var refs, escapes strings.Builder
	for _, r := range ss[0].Value {
		fmt.Fprintf(&refs, "&#%d;", r)
		fmt.Fprintf(&escapes, `\u%04x`, r)
	}
	for name, body := range map[string]string{"references": "<p>" + refs.String() + "</p>", "escapes": `{"v":"` + escapes.String() + `"}`} {
		c = newCorpus()
		c.add(name, []byte(body))
		raw := false
		for _, h := range scan(c, needles) {
			raw = raw || h.needle == "PW:raw"
		}
		if !raw {
			t.Errorf("a secret written as %s is not found decoded", name)
		}
	}
	c = newCorpus()
	c.add("clean", []byte("nothing to see: Pw0123 4123 [redacted] token=[redacted] &lt;&amp;&gt; \\u0041"))
	if hits := scan(c, needles); len(hits) != 0 {
		t.Errorf("clean text: %v", hits)
	}
}

// maskFragments replaces with '#' every run of 4 or more bytes that is part
// of some spelling, so a context never shows a secret in pieces either (a
// spelling broken by an inserted character, say).
func maskFragments(s string, needles []needle) string {
	b := []byte(s)
	for i := 0; i < len(b); {
		n := 0
		for l := len(b) - i; l >= 4; l-- {
			for _, nd := range needles {
				if strings.Contains(nd.value, string(b[i:i+l])) {
					n = l
					break
				}
			}
			if n > 0 {
				break
			}
		}
		if n == 0 {
			i++
			continue
		}
		for j := i; j < i+n; j++ {
			b[j] = '#'
		}
		i += n
	}
	return string(b)
}
