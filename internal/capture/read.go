package capture

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"github.com/durable-browser/durable-browser/internal/markdown"
	"github.com/durable-browser/durable-browser/internal/scrub"
)

// What a read returns.
const (
	ReadMarkdown = "markdown"
	ReadText     = "text"
	ReadHTML     = "html"
	ReadURL      = "url"
	ReadTitle    = "title"
)

// Read defaults.
const (
	// DefaultReadMaxChars bounds Content when ReadOptions.MaxChars is 0.
	DefaultReadMaxChars = markdown.DefaultMaxChars
	// MaxRawBytes bounds ReadResult.Raw, the bytes filed as evidence; a
	// page larger than this is filed from its first part (RawCut says so),
	// and for markdown only its HTML's first MaxRawBytes are converted
	// (SourceCut). It bounds what a worker holds and files per read.
	MaxRawBytes = markdown.DefaultMaxInputBytes
)

// ReadOptions choose what to read.
type ReadOptions struct {
	// What is "markdown" (default), "text", "html", "url" or "title".
	What string
	// MaxChars bounds Content in characters; 0 means DefaultReadMaxChars.
	MaxChars int
	// Redact, when set, hides secrets in what is read before anything is cut
	// to length, so a cut never leaves a secret's prefix behind.
	Redact func(string) string
}

// ReadResult is bounded content and the raw bytes it came from.
type ReadResult struct {
	// What is the kind of content read.
	What string
	// Content is at most MaxChars characters.
	Content string
	// URL is the page's URL without userinfo, fragment or query values.
	URL string
	// Title is the page's title, at most MaxChars characters.
	Title string
	// Extractor names the part converted for markdown (article, main,
	// body, document, text), "body" for text, "document" for html.
	Extractor string
	// Truncated is true when Content (or the page read) was cut.
	Truncated bool
	// FullLength is Content's length in characters before it was cut:
	// the whole text or HTML read, even where Raw holds only its first
	// part; for markdown whose HTML was cut first (SourceCut), the
	// markdown of the part converted.
	FullLength int
	// Raw is what was read, for the caller to file as evidence: the
	// markdown for markdown (Content is its first part), the document's
	// HTML for html, the text for text. It is whole unless RawCut. Raw is
	// not scrubbed; it is redacted only as ReadOptions.Redact does, and
	// credential inputs' values are blanked in HTML (BlankCredentials).
	Raw []byte
	// RawCut is true when Raw is only the first part (at most MaxRawBytes)
	// of what was read: the text, the HTML, or, for markdown, the HTML it
	// was converted from (then SourceCut is true too).
	RawCut bool
	// SourceCut is true for markdown converted from only the first
	// MaxRawBytes of the page's HTML: the markdown, and FullLength, cover
	// that part only.
	SourceCut bool
	// RawType is Raw's media type.
	RawType string
	// Status is the HTTP status the document was served with, 0 when not
	// known (set by the driver, which sees the response).
	Status int
}

// Read reads the page as o asks. Unknown What values are *RefusedError.
func Read(ctx context.Context, p *rod.Page, o ReadOptions) (*ReadResult, error) {
	what := strings.ToLower(strings.TrimSpace(o.What))
	if what == "" {
		what = ReadMarkdown
	}
	switch what {
	case ReadMarkdown, ReadText, ReadHTML, ReadURL, ReadTitle:
	default:
		return nil, refuse(RefusedInvalid, fmt.Sprintf("what %q is not readable; use markdown, text, html, url or title", o.What))
	}
	if o.MaxChars < 0 {
		return nil, refuse(RefusedInvalid, "max chars must not be negative")
	}
	maxChars := o.MaxChars
	if maxChars == 0 {
		maxChars = DefaultReadMaxChars
	}
	p = p.Context(ctx)

	// Target info comes from the browser, not from page script, so a page
	// cannot lie about its URL here.
	info, err := p.Info()
	if err != nil {
		return nil, fmt.Errorf("capture: page info: %w", err)
	}
	res := &ReadResult{What: what, URL: scrub.URL(info.URL)}
	redact := o.Redact
	if redact == nil {
		redact = func(s string) string { return s }
	}
	res.Title, _, _ = bound(redact(info.Title), maxChars)

	switch what {
	case ReadMarkdown:
		doc, _, cut, err := documentHTML(p, redact)
		if err != nil {
			return nil, err
		}
		// The whole markdown is converted and filed; Content is its first
		// maxChars characters, so the filed body is what the result shows.
		md, err := markdown.Convert(doc, markdown.Options{BaseURL: info.URL, MaxChars: MaxRawBytes, MaxInputBytes: MaxRawBytes, Redact: redact})
		if err != nil {
			return nil, fmt.Errorf("capture: %w", err)
		}
		raw, rawCut := cutBytes(md.Markdown, MaxRawBytes)
		var n int
		res.Content, res.Truncated, n = bound(md.Markdown, maxChars)
		res.FullLength = md.FullLength // before Convert's own cut at MaxRawBytes characters
		res.Truncated = res.Truncated || md.Truncated || cut || rawCut
		res.SourceCut = cut || md.InputTruncated
		res.RawCut = rawCut || n < md.FullLength || res.SourceCut
		res.Extractor = md.Extractor
		res.Raw, res.RawType = []byte(raw), "text/markdown; charset=utf-8"
	case ReadHTML:
		doc, full, cut, err := documentHTML(p, redact)
		if err != nil {
			return nil, err
		}
		res.Content, res.Truncated, _ = bound(doc, maxChars)
		res.FullLength = full
		res.Truncated = res.Truncated || cut
		res.RawCut = cut
		res.Extractor = markdown.ExtractorDocument
		res.Raw, res.RawType = []byte(doc), "text/html; charset=utf-8"
	case ReadText:
		// Read past the cap by a margin, redacted, then cut: a secret the
		// cap would have cut in two is whole when it is redacted.
		text, rest, err := innerText(p, MaxRawBytes+redactMargin)
		if err != nil {
			return nil, err
		}
		text = redact(text)
		raw, cut := cutBytes(text, MaxRawBytes)
		res.Content, res.Truncated, res.FullLength = bound(text, maxChars)
		// The characters past what crossed the protocol count too: the
		// whole text's length, not the part read.
		res.FullLength += rest
		cut = cut || rest > 0
		res.Truncated = res.Truncated || cut
		res.RawCut = cut
		res.Extractor = markdown.ExtractorBody
		res.Raw, res.RawType = []byte(raw), "text/plain; charset=utf-8"
	case ReadURL:
		res.Content, res.FullLength = res.URL, utf8.RuneCountInString(res.URL)
		res.Raw, res.RawType = []byte(res.URL), "text/plain; charset=utf-8"
	case ReadTitle:
		res.Content, res.Truncated, res.FullLength = bound(redact(info.Title), maxChars)
		res.Raw, res.RawType = []byte(res.Content), "text/plain; charset=utf-8"
	}
	return res, nil
}

// redactMargin is how far past the read cap a text is read before it is
// redacted and cut, so no secret shorter than it is filed in part.
const redactMargin = 64 << 10

// documentHTML is the main frame's serialized DOM, cut to MaxRawBytes,
// with the whole's length in characters and whether it was cut. The
// browser serializes it (DOM.getOuterHTML on the document object), so page
// script that overrides outerHTML cannot change what is read, and no
// DOM.getDocument call invalidates node ids other code may hold.
func documentHTML(p *rod.Page, redact func(string) string) (doc string, full int, cut bool, err error) {
	obj, err := p.Evaluate(rod.Eval(`() => document`).ByObject())
	if err != nil {
		return "", 0, false, fmt.Errorf("capture: get document: %w", err)
	}
	defer func() { _ = p.Release(obj) }()
	out, err := proto.DOMGetOuterHTML{ObjectID: obj.ObjectID}.Call(p)
	if err != nil {
		return "", 0, false, fmt.Errorf("capture: get html: %w", err)
	}
	whole := redact(BlankCredentials(strings.ToValidUTF8(out.OuterHTML, "\uFFFD")))
	doc, cut = cutBytes(whole, MaxRawBytes)
	return doc, utf8.RuneCountInString(whole), cut, nil
}

// innerText is the body's rendered text (the document element's when there
// is no body), and how many characters (code points) of it were left in
// the page. The string is cut in the page, at a character's boundary, so a
// huge page does not cross the protocol whole.
func innerText(p *rod.Page, max int) (text string, rest int, err error) {
	res, err := p.Eval(`(max) => {
		const el = document.body || document.documentElement;
		const t = el ? el.innerText : "";
		if (t.length <= max) return {t, rest: 0};
		let end = max;
		const c = t.charCodeAt(end - 1);
		if (c >= 0xD800 && c <= 0xDBFF) end--; // not half a surrogate pair
		let rest = 0;
		for (let i = end; i < t.length; i++) {
			const d = t.charCodeAt(i);
			if (d >= 0xD800 && d <= 0xDBFF && i + 1 < t.length) {
				const e = t.charCodeAt(i + 1);
				if (e >= 0xDC00 && e <= 0xDFFF) i++;
			}
			rest++;
		}
		return {t: t.slice(0, end), rest};
	}`, max)
	if err != nil {
		return "", 0, fmt.Errorf("capture: inner text: %w", err)
	}
	return strings.ToValidUTF8(res.Value.Get("t").Str(), "\uFFFD"), res.Value.Get("rest").Int(), nil
}

// bound cuts s to max runes: the kept string, whether it was cut, and the
// full length in runes.
func bound(s string, max int) (string, bool, int) {
	n := utf8.RuneCountInString(s)
	if n <= max {
		return s, false, n
	}
	i := 0
	for pos := range s {
		if i == max {
			return s[:pos], true, n
		}
		i++
	}
	return s, false, n
}

// cutBytes cuts s to at most n bytes at a rune boundary.
func cutBytes(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}
