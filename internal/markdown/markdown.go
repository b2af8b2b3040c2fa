// Package markdown turns hostile HTML into bounded markdown for a model to
// read: it drops what is not content (scripts, styles, svg, templates,
// iframes...), picks the main content, scrubs link targets of anything that
// could carry a credential, and cuts the result at a rune boundary.
//
// It is used by browser_read (over the live page's HTML) and by web_fetch.
package markdown

import (
	"errors"
	"fmt"
	"iter"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/durable-browser/durable-browser/internal/scrub"
)

// Defaults and hard limits.
const (
	// DefaultMaxChars bounds Result.Markdown when Options.MaxChars is 0.
	DefaultMaxChars = 20_000
	// DefaultMaxInputBytes bounds the HTML that is parsed at all when
	// Options.MaxInputBytes is 0; longer input is cut first.
	DefaultMaxInputBytes = 8 << 20
	// maxDepth bounds element nesting; deeper subtrees are flattened to
	// their text so that no recursion in the converter can exhaust the stack.
	maxDepth = 200
	// maxSpan clamps table colspan/rowspan, which otherwise let a tiny
	// page ask for a huge table.
	maxSpan = 10
)

// Extractor names say which part of the page was converted.
const (
	ExtractorArticle  = "article"
	ExtractorMain     = "main"
	ExtractorBody     = "body"
	ExtractorDocument = "document"
	// ExtractorText means the HTML could not be parsed into a tree and
	// only its text (outside non-content elements) was kept.
	ExtractorText = "text"
)

// ErrInvalidOptions is returned for negative limits.
var ErrInvalidOptions = errors.New("markdown: MaxChars and MaxInputBytes must not be negative")

// Options tune Convert. The zero value is usable.
type Options struct {
	// BaseURL resolves relative links and images. It is never shown itself.
	BaseURL string
	// MaxChars bounds the markdown in characters (runes); 0 means
	// DefaultMaxChars.
	MaxChars int
	// MaxInputBytes bounds the HTML parsed; 0 means DefaultMaxInputBytes.
	MaxInputBytes int
	// Whole converts the whole document instead of the first article, else
	// main, else body.
	Whole bool
	// Redact, when set, is applied to the markdown before it is counted
	// and cut. A caller redacts the HTML first (the converter writes
	// escapes a redactor does not know); this second pass is for text the
	// converter joins, a value a page split across inline elements
	// (<span>pass</span>word), which the HTML pass could not see as one.
	Redact func(string) string
}

// Result is bounded markdown and what it was cut from.
type Result struct {
	// Markdown is at most MaxChars characters.
	Markdown string
	// Truncated is true when Markdown (or the HTML it came from) was cut.
	Truncated bool
	// FullLength is the length in characters of the markdown before it was
	// cut (of the parsed part, when the input itself was cut).
	FullLength int
	// InputTruncated is true when the HTML exceeded MaxInputBytes and only
	// its first part was converted.
	InputTruncated bool
	// Extractor says what was converted: article, main, body, document or
	// text.
	Extractor string
}

// dropped are elements whose content is never text for a reader.
var dropped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Svg: true, atom.Template: true,
	atom.Noscript: true, atom.Iframe: true, atom.Frame: true, atom.Frameset: true,
	atom.Object: true, atom.Embed: true, atom.Canvas: true, atom.Head: true,
	atom.Link: true, atom.Meta: true, atom.Base: true, atom.Applet: true,
	atom.Audio: true, atom.Video: true, atom.Source: true, atom.Track: true,
	atom.Math: true, atom.Select: true, atom.Datalist: true, atom.Input: true,
	atom.Textarea: true,
}

// urlAttrs are attributes holding a URL that the converter may print.
var urlAttrs = map[string]bool{"href": true, "src": true, "cite": true, "action": true, "poster": true}

// Convert turns html into bounded markdown. See Options.
func Convert(htmlText string, opts Options) (Result, error) {
	if opts.MaxChars < 0 || opts.MaxInputBytes < 0 {
		return Result{}, ErrInvalidOptions
	}
	maxChars := opts.MaxChars
	if maxChars == 0 {
		maxChars = DefaultMaxChars
	}
	maxIn := opts.MaxInputBytes
	if maxIn == 0 {
		maxIn = DefaultMaxInputBytes
	}
	var res Result
	if len(htmlText) > maxIn {
		htmlText = cutBytes(htmlText, maxIn)
		res.InputTruncated, res.Truncated = true, true
	}
	var md string
	doc, err := html.Parse(strings.NewReader(htmlText))
	if err != nil {
		// The parser refuses pathological input (more than 512 open
		// elements); a reader still gets the page's text.
		md, res.Extractor = plainText(htmlText), ExtractorText
	} else {
		clean(doc, parseBase(opts.BaseURL))
		root, extractor := doc, ExtractorDocument
		if !opts.Whole {
			root, extractor = selectContent(doc)
		}
		res.Extractor = extractor
		out, err := newConverter().ConvertNode(root)
		if err != nil {
			return Result{}, fmt.Errorf("markdown: convert: %w", err)
		}
		md = string(out)
	}
	md = strings.ToValidUTF8(md, "\uFFFD")
	if opts.Redact != nil {
		md = opts.Redact(md)
	}
	res.FullLength = utf8.RuneCountInString(md)
	if res.FullLength > maxChars {
		md = cutRunes(md, maxChars)
		res.Truncated = true
	}
	res.Markdown = md
	return res, nil
}

func newConverter() *converter.Converter {
	return converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(),
		strikethrough.NewStrikethroughPlugin(),
		table.NewTablePlugin(),
	))
}

// selectContent picks the first article, else the first main, else body.
func selectContent(doc *html.Node) (*html.Node, string) {
	var firstMain, body *html.Node
	for n := range descendants(doc) {
		if n.Type != html.ElementNode {
			continue
		}
		switch n.DataAtom {
		case atom.Article:
			return n, ExtractorArticle
		case atom.Main:
			if firstMain == nil {
				firstMain = n
			}
		case atom.Body:
			if body == nil {
				body = n
			}
		}
	}
	if firstMain != nil {
		return firstMain, ExtractorMain
	}
	if body != nil {
		return body, ExtractorBody
	}
	return doc, ExtractorBody
}

// descendants walks n's subtree in document order without recursion
// (html.Node.Descendants recurses, and hostile input nests deeply).
func descendants(root *html.Node) iter.Seq[*html.Node] {
	return func(yield func(*html.Node) bool) {
		n := root.FirstChild
		for n != nil {
			if !yield(n) {
				return
			}
			if n.FirstChild != nil {
				n = n.FirstChild
				continue
			}
			for n != root && n.NextSibling == nil {
				n = n.Parent
			}
			if n == root {
				return
			}
			n = n.NextSibling
		}
	}
}

// clean removes non-content elements, hidden subtrees and comments,
// flattens over-deep nesting, clamps table spans and scrubs URLs, without
// recursion (the input is hostile and may nest arbitrarily deep).
func clean(doc *html.Node, base *url.URL) {
	type item struct {
		n     *html.Node
		depth int
	}
	stack := []item{{doc, 0}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := it.n
		if n.Type == html.ElementNode {
			fixAttrs(n, base)
		}
		if it.depth >= maxDepth && n.FirstChild != nil {
			flatten(n)
			continue
		}
		for c := n.FirstChild; c != nil; {
			next := c.NextSibling
			if removable(c) {
				n.RemoveChild(c)
			} else {
				stack = append(stack, item{c, it.depth + 1})
			}
			c = next
		}
	}
}

// removable reports whether a node and its subtree are not content.
func removable(n *html.Node) bool {
	switch n.Type {
	case html.CommentNode, html.DoctypeNode:
		return true
	case html.ElementNode:
	default:
		return false
	}
	if n.Namespace != "" && n.Namespace != "html" {
		return true // svg and math content in foreign namespaces
	}
	if dropped[n.DataAtom] {
		return true
	}
	for _, a := range n.Attr {
		switch strings.ToLower(a.Key) {
		case "hidden":
			return true
		case "aria-hidden":
			if strings.EqualFold(strings.TrimSpace(a.Val), "true") {
				return true
			}
		}
	}
	return false
}

// flatten replaces a subtree's children by one text node of its text.
func flatten(n *html.Node) {
	var b strings.Builder
	for d := range descendants(n) {
		if d.Type == html.TextNode {
			b.WriteString(d.Data)
			b.WriteByte(' ')
		}
	}
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		n.RemoveChild(c)
		c = next
	}
	n.AppendChild(&html.Node{Type: html.TextNode, Data: b.String()})
}

// fixAttrs scrubs URL attributes, drops srcset and inline data images, and
// clamps table spans.
func fixAttrs(n *html.Node, base *url.URL) {
	kept := n.Attr[:0]
	for _, a := range n.Attr {
		key := strings.ToLower(a.Key)
		switch {
		case key == "srcset" || key == "style" || strings.HasPrefix(key, "on"):
			continue
		case urlAttrs[key]:
			v := scrubAttr(a.Val, base)
			if v == "" {
				continue
			}
			a.Val = v
		case key == "colspan" || key == "rowspan":
			v, err := strconv.Atoi(strings.TrimSpace(a.Val))
			if err != nil || v < 1 {
				continue
			}
			a.Val = strconv.Itoa(min(v, maxSpan))
		}
		kept = append(kept, a)
	}
	n.Attr = kept
}

// scrubAttr resolves a URL against base and scrubs it. Script and data URLs
// become empty, so the attribute is dropped and only the text remains. The
// converter percent-encodes brackets in link destinations, so a query value
// scrub.URL made "[redacted]" reads "%5Bredacted%5D" in the markdown.
func scrubAttr(raw string, base *url.URL) string {
	raw = strings.TrimSpace(raw)
	if raw == "" || strings.HasPrefix(raw, "#") {
		return ""
	}
	if base != nil {
		if u, err := url.Parse(raw); err == nil {
			raw = base.ResolveReference(u).String()
		}
	}
	s := scrub.URL(raw)
	switch s {
	case "javascript:", "data:", "vbscript:":
		return ""
	}
	return s
}

func parseBase(raw string) *url.URL {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return nil
	}
	return u
}

// plainText keeps the text of html outside non-content elements, using the
// tokenizer, which has no depth limit and no tree.
func plainText(htmlText string) string {
	z := html.NewTokenizer(strings.NewReader(htmlText))
	var b strings.Builder
	skip := 0 // depth inside dropped elements
	for {
		switch z.Next() {
		case html.ErrorToken:
			return collapseSpace(b.String())
		case html.StartTagToken:
			name, _ := z.TagName()
			if a := atom.Lookup(name); dropped[a] && !voidElement(a) {
				skip++
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			if a := atom.Lookup(name); dropped[a] && !voidElement(a) && skip > 0 {
				skip--
			}
		case html.TextToken:
			if skip == 0 {
				b.Write(z.Text())
				b.WriteByte(' ')
			}
		}
	}
}

func voidElement(a atom.Atom) bool {
	switch a {
	case atom.Link, atom.Meta, atom.Base, atom.Embed, atom.Source, atom.Track, atom.Input, atom.Frame:
		return true
	}
	return false
}

// collapseSpace folds runs of white space into one space or newline.
func collapseSpace(s string) string {
	var lines []string
	for _, line := range strings.Split(s, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			lines = append(lines, strings.Join(f, " "))
		}
	}
	return strings.Join(lines, "\n")
}

// cutRunes returns the first n runes of s.
func cutRunes(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

// cutBytes returns at most n bytes of s, ending at a rune boundary.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
