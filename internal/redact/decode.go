package redact

import (
	"html"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Escaped spellings: the forms HTML serializers and JavaScript write a
// value in, and the decoders that undo any mixture of them.

// htmlText is v as Chrome's serializer writes a text node: & < > and
// U+00A0 as &amp; &lt; &gt; &nbsp; (XMLSerializer's text too, U+00A0 aside).
func htmlText(v string) string {
	return htmlTextReplacer.Replace(v)
}

// htmlAttr is v as Chrome's serializer writes an attribute value: & " and
// U+00A0 as &amp; &quot; &nbsp;.
func htmlAttr(v string) string {
	return htmlAttrReplacer.Replace(v)
}

// htmlQuoted is v as Python's html.escape, React and Django write it:
// & < > " ' as &amp; &lt; &gt; &quot; &#x27;. (Go's html.EscapeString
// writes &#34; and &#39; for the quotes; it is a spelling of its own.)
func htmlQuoted(v string) string {
	return htmlQuotedReplacer.Replace(v)
}

var (
	htmlTextReplacer   = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\u00a0", "&nbsp;")
	htmlAttrReplacer   = strings.NewReplacer("&", "&amp;", `"`, "&quot;", "\u00a0", "&nbsp;")
	htmlQuotedReplacer = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#x27;")
)

// jsString is v as JavaScript's JSON.stringify writes it inside the quotes:
// only " and \ and the control characters are escaped (\b \f \n \r \t, the
// rest as \u00xx), where Go's encoding/json also writes < > & as \u003c
// \u003e \u0026.
func jsString(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\b':
			b.WriteString(`\b`)
		case c == '\f':
			b.WriteString(`\f`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[c>>4])
			b.WriteByte("0123456789abcdef"[c&0xf])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// charRef is one character reference decoded by htmlDecoded: at and n are
// where its text sits in the decoded string, src and srcN where the
// reference sat in the source.
type charRef struct{ at, n, src, srcN int }

// byteSet is a set of byte values: the bytes the spellings searched for
// are made of, or those a decoding wrote.
type byteSet [4]uint64

func (b *byteSet) add(s string) {
	for i := 0; i < len(s); i++ {
		b[s[i]>>6] |= 1 << (s[i] & 63)
	}
}

func (b *byteSet) has(c byte) bool { return b[c>>6]&(1<<(c&63)) != 0 }

// anyIn says whether s holds a byte of b; a nil b holds every byte.
func (b *byteSet) anyIn(s string) bool {
	if b == nil {
		return true
	}
	for i := 0; i < len(s); i++ {
		if b.has(s[i]) {
			return true
		}
	}
	return false
}

// meets says whether b and o share a byte; a nil o holds every byte.
func (b *byteSet) meets(o *byteSet) bool {
	return o == nil || b[0]&o[0] != 0 || b[1]&o[1] != 0 || b[2]&o[2] != 0 || b[3]&o[3] != 0
}

// maxRefName bounds the name of a named reference (the longest HTML has is
// 31 characters, &CounterClockwiseContourIntegral;).
const maxRefName = 32

// htmlDecoded returns s with its character references decoded as a browser
// decodes them: named ones ending in ';' (&lt; &amp; &quot; &nbsp; ...,
// in either case where HTML has both), decimal and hex ones with or without
// ';' and with any number of leading zeros (&#60; &#x3C; &#0060), out of
// range or surrogate numbers as U+FFFD and 128-159 as windows-1252. Text
// that is no reference is kept as it is. With spans, it also lists where
// each decoded reference sat; the text between references is the same
// length on both sides. s itself, and no spans, when nothing was decoded.
//
// Only references that stand for a byte in want are decoded (nil: all):
// text searched for spellings made of want's bytes finds the same in a
// reference left as it is as in its decoding, as no spelling can hold a
// byte of the decoding. So most text, whose references are &amp; &quot;
// &nbsp; and no secret holds & " or U+00A0, is left as it is without a
// copy. It reads s once. With wrote, it adds there the bytes the decoded
// references stand for: a spelling found in the output and not in s holds
// one of them.
func htmlDecoded(s string, want *byteSet, spans bool, wrote *byteSet) (string, []charRef) {
	i := strings.IndexByte(s, '&')
	if i < 0 {
		return s, nil
	}
	var b strings.Builder
	var refs []charRef
	last := 0
	for i >= 0 {
		end, dec, ok := decodeRef(s, i)
		if !ok || !want.anyIn(dec) {
			next := strings.IndexByte(s[i+1:], '&')
			if next < 0 {
				break
			}
			i += 1 + next
			continue
		}
		if b.Cap() == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[last:i])
		if spans {
			if refs == nil {
				refs = make([]charRef, 0, strings.Count(s[i:], "&"))
			}
			refs = append(refs, charRef{at: b.Len(), n: len(dec), src: i, srcN: end - i})
		}
		if wrote != nil {
			wrote.add(dec)
		}
		b.WriteString(dec)
		last = end
		next := strings.IndexByte(s[end:], '&')
		if next < 0 {
			break
		}
		i = end + next
	}
	if b.Cap() == 0 {
		return s, nil
	}
	b.WriteString(s[last:])
	return b.String(), refs
}

// decodeRef decodes the character reference at s[i] (an '&'): where it
// ends in s and what it stands for, or ok false when s[i:] starts none.
func decodeRef(s string, i int) (end int, dec string, ok bool) {
	j := i + 1
	if j < len(s) && s[j] == '#' {
		j++
		hexDigits := j < len(s) && (s[j] == 'x' || s[j] == 'X')
		if hexDigits {
			j++
		}
		start, x := j, 0
		for ; j < len(s); j++ {
			d := digit(s[j], hexDigits)
			if d < 0 {
				break
			}
			if x <= utf8.MaxRune { // past it the value only stays out of range
				if hexDigits {
					x = x*16 + d
				} else {
					x = x*10 + d
				}
			}
		}
		if j == start {
			return 0, "", false
		}
		if j < len(s) && s[j] == ';' {
			j++
		}
		return j, numericRef(x), true
	}
	for j < len(s) && j-i-1 < maxRefName && isAlnum(s[j]) {
		j++
	}
	if j == i+1 || j >= len(s) || s[j] != ';' {
		return 0, "", false
	}
	// The names serializers write, without the html package's copy.
	switch s[i+1 : j] {
	case "amp", "AMP":
		return j + 1, "&", true
	case "lt", "LT":
		return j + 1, "<", true
	case "gt", "GT":
		return j + 1, ">", true
	case "quot", "QUOT":
		return j + 1, `"`, true
	case "apos":
		return j + 1, "'", true
	case "nbsp":
		return j + 1, "\u00a0", true
	}
	j++
	dec = html.UnescapeString(s[i:j])
	if dec == s[i:j] {
		return 0, "", false
	}
	return j, dec, true
}

// numericRef is what the numeric character reference of x stands for.
func numericRef(x int) string {
	switch {
	case x == 0 || x > utf8.MaxRune || utf16.IsSurrogate(rune(x)):
		return "\uFFFD"
	case 0x80 <= x && x <= 0x9F:
		// windows-1252, as browsers read these (html knows the table).
		return html.UnescapeString("&#" + strconv.Itoa(x) + ";")
	}
	return string(rune(x))
}

func digit(c byte, hexDigits bool) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case hexDigits && 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case hexDigits && 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// sourceSpan maps the decoded bytes [a, e) of htmlDecoded's output back to
// the source: a reference any of them came from is taken whole.
func sourceSpan(refs []charRef, a, e int) (int, int) {
	return sourceAt(refs, a, false), sourceAt(refs, e-1, true)
}

// sourceAt is the source offset of decoded byte d: where the reference it
// came from starts (or, with end, ends), or where d itself sits.
func sourceAt(refs []charRef, d int, end bool) int {
	// The last reference starting at or before d.
	lo, hi := 0, len(refs)
	for lo < hi {
		m := (lo + hi) / 2
		if refs[m].at <= d {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		if end {
			return d + 1
		}
		return d
	}
	r := refs[lo-1]
	if d < r.at+r.n {
		if end {
			return r.src + r.srcN
		}
		return r.src
	}
	off := r.src + r.srcN + (d - r.at - r.n)
	if end {
		return off + 1
	}
	return off
}

// jsonDecoded returns s with every JSON string escape in it decoded (\" \\
// \/ \b \f \n \r \t and \uXXXX, surrogate pairs joined, a lone surrogate as
// U+FFFD), wherever it stands: s need not be JSON, and a backslash that
// starts no escape is kept. As htmlDecoded, it decodes only escapes that
// stand for a byte in want (nil: all), adds to wrote (if not nil) the
// bytes of what it decoded, and answers s itself, without a copy, when it
// decoded none.
func jsonDecoded(s string, want, wrote *byteSet) string {
	i := strings.IndexByte(s, '\\')
	if i < 0 {
		return s
	}
	var b []byte
	last := 0 // s[last:i] is not copied yet
	for i >= 0 {
		n, r := jsonEscape(s[i:])
		if n == 0 {
			n = 1
		} else if want == nil || r < utf8.RuneSelf && want.has(byte(r)) || r >= utf8.RuneSelf && want.anyIn(string(r)) {
			if b == nil {
				b = make([]byte, 0, len(s))
			}
			b = append(b, s[last:i]...)
			at := len(b)
			b = utf8.AppendRune(b, r)
			if wrote != nil {
				wrote.add(string(b[at:]))
			}
			last = i + n
		}
		next := strings.IndexByte(s[i+n:], '\\')
		if next < 0 {
			break
		}
		i += n + next
	}
	if b == nil {
		return s
	}
	return string(append(b, s[last:]...))
}

// jsonEscape decodes the escape s starts with (s[0] is a backslash): its
// length and rune, or 0 when it is none.
func jsonEscape(s string) (int, rune) {
	if len(s) < 2 {
		return 0, 0
	}
	switch s[1] {
	case '"', '\\', '/':
		return 2, rune(s[1])
	case 'b':
		return 2, '\b'
	case 'f':
		return 2, '\f'
	case 'n':
		return 2, '\n'
	case 'r':
		return 2, '\r'
	case 't':
		return 2, '\t'
	case 'u':
		r, ok := hex4(s[2:])
		if !ok {
			return 0, 0
		}
		if !utf16.IsSurrogate(r) {
			return 6, r
		}
		if len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
			if r2, ok := hex4(s[8:]); ok {
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					return 12, d
				}
			}
		}
		return 6, utf8.RuneError
	}
	return 0, 0
}

func hex4(s string) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for i := 0; i < 4; i++ {
		d := digit(s[i], true)
		if d < 0 {
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, true
}
