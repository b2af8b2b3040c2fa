package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"html"
	"io"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// knownSpellings lists, independently of redact.go, the spellings Register
// promises to search for: raw, URL-encoded (query and path), JSON-escaped
// (Go's and JSON.stringify's), HTML-escaped (Chrome's text node and
// attribute, Go's html.EscapeString, Python's html.escape), base64
// (standard and URL alphabets, with and without padding) and lower-case
// hex; and every character as a decimal or hex character reference (a
// form found by decoding; left out for values whose characters a reference
// does not give back: invalid UTF-8, U+0000, U+0080 to U+009F).
func knownSpellings(v string) []string {
	b := []byte(v)
	j, _ := json.Marshal(v)
	out := []string{
		v,
		url.QueryEscape(v),
		url.PathEscape(v),
		string(j[1 : len(j)-1]),
		base64.StdEncoding.EncodeToString(b),
		base64.RawStdEncoding.EncodeToString(b),
		base64.URLEncoding.EncodeToString(b),
		base64.RawURLEncoding.EncodeToString(b),
		hex.EncodeToString(b),
		html.EscapeString(v),
		chromeText.Replace(v),
		chromeAttr.Replace(v),
		pythonHTML.Replace(v),
	}
	if utf8.ValidString(v) {
		out = append(out, stringify(v))
		if !strings.ContainsFunc(v, func(r rune) bool { return r == 0 || 0x80 <= r && r <= 0x9F }) {
			out = append(out, numeric(v, "&#%d;"), numeric(v, "&#x%X;"))
		}
	}
	return out
}

// survivor returns a spelling of a registered value found in out, or "".
// A spelling that is part of Placeholder itself ("redacted", "[redacted]")
// cannot be told apart from the placeholder and is not counted.
func survivor(out string, values []string) string {
	for _, v := range values {
		for _, sp := range knownSpellings(v) {
			if !strings.Contains(Placeholder, sp) && strings.Contains(out, sp) {
				return sp
			}
		}
	}
	return ""
}

// jsonLeak walks a JSON document and returns a registered value's spelling
// found inside one of its tokens (decoded string, object key or number),
// with the token's kind.
func jsonLeak(doc []byte, values []string) (kind, sp string) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) || err != nil {
			return "", ""
		}
		switch t := tok.(type) {
		case string:
			if s := survivor(t, values); s != "" {
				return "string", s
			}
		case json.Number:
			if s := survivor(t.String(), values); s != "" {
				return "number", s
			}
		}
	}
}

// FuzzRedact holds the redactor to its promises for any registered values
// and any text:
//   - no registered value (of MinLen characters or more) survives String or
//     URL in any spelling Register lists, wherever it is placed in the text;
//   - String is idempotent: redacting its output changes nothing;
//   - JSON keeps valid JSON valid, is idempotent, and no string in its output
//     holds a registered value's spelling.
//
// Known gap (skipped, not failed, until redact.go changes): JSON copies
// numbers through unredacted, so a registered all-digit value (a card number,
// a long PIN) written as a JSON number survives JSON. The seed in
// testdata/fuzz/FuzzRedact/json-number shows it.
func FuzzRedact(f *testing.F) {
	f.Add("abcdefgh", "zz12345678", "xx yy", uint8(0))
	f.Add("hunter2-very/secret value&more", "p@ss w0rd&=", "?p=&q=", uint8(0x13))
	f.Add("ééééééééé", "a<b>c&d\"e\\f", `{"a":"b"}`, uint8(0x35))
	f.Add("redacted", "[redacted]x", "[redacted]", uint8(7))
	f.Add("d]abcdefg", "[redacte", "Bearer abcdefghij token=x", uint8(0x88))
	f.Add("1234567890123456", "short", `{"password":"x","n":[1,2]}`, uint8(0x42))
	f.Add(`Pw<&>"q'x/y+z=9`, "less<than<Sign8", `<p title="a&amp;b">&lt;&#60;</p>`, uint8(0x9b))
	f.Add("amp&ersand99x", "nb\u00a0sp-secret", "&#x3&amp;&#", uint8(0xc4))
	f.Add("\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8", "tab\there\nnewline", "https://u:p@h/?code=1#f", uint8(0xff))
	f.Fuzz(func(t *testing.T, v1, v2, text string, pick uint8) {
		var values []string
		for _, v := range []string{v1, v2} {
			if utf8.RuneCountInString(v) >= MinLen { // Register's rule
				values = append(values, v)
			}
		}
		r := New()
		r.Register(v1, v2)
		if r.Len() != len(dedupe(values)) {
			t.Fatalf("Register(%q, %q) kept %d values, want %d", v1, v2, r.Len(), len(dedupe(values)))
		}

		// Inputs: the fuzzer's text; the text with one spelling of each
		// value placed inside it; every spelling of every value, joined by
		// the text.
		inputs := []string{text}
		cut := int(pick) % (len(text) + 1)
		withOne := text[:cut]
		var all []string
		for i, v := range values {
			sps := knownSpellings(v)
			withOne += sps[(int(pick)>>(4*i))%len(sps)] + text[cut:]
			all = append(all, sps...)
		}
		inputs = append(inputs, withOne, strings.Join(all, text))

		for _, in := range inputs {
			out := r.String(in)
			if sp := survivor(out, values); sp != "" {
				t.Fatalf("String: spelling %q of a registered value survived\nin:  %q\nout: %q", sp, in, out)
			}
			if again := r.String(out); again != out {
				t.Fatalf("String is not idempotent\nin:     %q\nonce:   %q\ntwice:  %q", in, out, again)
			}
			if u := r.URL(in); survivor(u, values) != "" {
				t.Fatalf("URL: spelling %q survived\nin:  %q\nout: %q", survivor(u, values), in, u)
			}
		}

		// JSON documents: the fuzzer's text when it is JSON, and one built
		// from the inputs so there is always a valid document holding the
		// values.
		built, _ := json.Marshal(map[string]any{"text": text, "in": inputs, text: withOne, "n": len(text)})
		docs := [][]byte{built}
		if json.Valid([]byte(text)) {
			docs = append(docs, []byte(text))
		}
		for _, doc := range docs {
			out := r.JSON(doc)
			if !json.Valid(out) {
				t.Fatalf("JSON made valid JSON invalid\nin:  %s\nout: %s", doc, out)
			}
			if again := r.JSON(out); !bytes.Equal(again, out) {
				t.Fatalf("JSON is not idempotent\nin:    %s\nonce:  %s\ntwice: %s", doc, out, again)
			}
			if kind, sp := jsonLeak(out, values); kind != "" {
				t.Fatalf("JSON: spelling %q survived in a %s\nin:  %s\nout: %s", sp, kind, doc, out)
			}
		}
	})
}

func dedupe(vs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range vs {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
