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
	// page larger than this is read (and filed) from its first part.
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
	// FullLength is Content's length in characters before it was cut.
	FullLength int
	// Raw is what was read, whole, at most MaxRawBytes, for the caller to
	// file as evidence: the markdown for markdown (Content is its first
	// part), the document's HTML for html, the text for text. Raw is not
	// scrubbed; it is redacted only as ReadOptions.Redact does, and
	// credential inputs' values are blanked in HTML (BlankCredentials).
	Raw []byte
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
		doc, cut, err := documentHTML(p, redact)
		if err != nil {
			return nil, err
		}
		// The whole markdown is converted and filed; Content is its first
		// maxChars characters, so the filed body is what the result shows.
		md, err := markdown.Convert(doc, markdown.Options{BaseURL: info.URL, MaxChars: MaxRawBytes, MaxInputBytes: MaxRawBytes})
		if err != nil {
			return nil, fmt.Errorf("capture: %w", err)
		}
		raw, rawCut := cutBytes(md.Markdown, MaxRawBytes)
		res.Content, res.Truncated, res.FullLength = bound(md.Markdown, maxChars)
		res.Truncated = res.Truncated || md.Truncated || cut || rawCut
		res.Extractor = md.Extractor
		res.Raw, res.RawType = []byte(raw), "text/markdown; charset=utf-8"
	case ReadHTML:
		doc, cut, err := documentHTML(p, redact)
		if err != nil {
			return nil, err
		}
		res.Content, res.Truncated, res.FullLength = bound(doc, maxChars)
		res.Truncated = res.Truncated || cut
		res.Extractor = markdown.ExtractorDocument
		res.Raw, res.RawType = []byte(doc), "text/html; charset=utf-8"
	case ReadText:
		text, err := innerText(p)
		if err != nil {
			return nil, err
		}
		text = redact(text)
		raw, cut := cutBytes(text, MaxRawBytes)
		res.Content, res.Truncated, res.FullLength = bound(text, maxChars)
		res.Truncated = res.Truncated || cut
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

// documentHTML is the main frame's serialized DOM, cut to MaxRawBytes.
// The browser serializes it (DOM.getOuterHTML on the document object), so
// page script that overrides outerHTML cannot change what is read, and no
// DOM.getDocument call invalidates node ids other code may hold.
func documentHTML(p *rod.Page, redact func(string) string) (string, bool, error) {
	obj, err := p.Evaluate(rod.Eval(`() => document`).ByObject())
	if err != nil {
		return "", false, fmt.Errorf("capture: get document: %w", err)
	}
	defer func() { _ = p.Release(obj) }()
	out, err := proto.DOMGetOuterHTML{ObjectID: obj.ObjectID}.Call(p)
	if err != nil {
		return "", false, fmt.Errorf("capture: get html: %w", err)
	}
	s, cut := cutBytes(redact(BlankCredentials(strings.ToValidUTF8(out.OuterHTML, "\uFFFD"))), MaxRawBytes)
	return s, cut, nil
}

// innerText is the body's rendered text (the document element's when there
// is no body). The string is cut in the page so a huge page does not cross
// the protocol whole.
func innerText(p *rod.Page) (string, error) {
	res, err := p.Eval(`(max) => {
		const el = document.body || document.documentElement;
		const t = el ? el.innerText : "";
		return t.length > max ? t.slice(0, max) : t;
	}`, MaxRawBytes)
	if err != nil {
		return "", fmt.Errorf("capture: inner text: %w", err)
	}
	return strings.ToValidUTF8(res.Value.Str(), "\uFFFD"), nil
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
