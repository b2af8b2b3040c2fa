// Package webfetch reads one public web page for the web_fetch tool, behind a
// guard that keeps it off the worker's own network: the host is resolved
// once and only the vetted address is dialled, non-public addresses and
// ports other than 80 and 443 are refused at every redirect hop, bodies are
// capped, and only text-like content (or a PDF, reported as such) is read.
package webfetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rs/zerolog"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"

	"github.com/durable-browser/durable-browser/internal/markdown"
	"github.com/durable-browser/durable-browser/internal/redact"
)

// Defaults.
const (
	DefaultMaxBytes     = 5 << 20
	DefaultMaxRedirects = 5
	DefaultTimeout      = 30 * time.Second
	DefaultMaxRetryWait = 5 * time.Second
	DefaultUserAgent    = "durable-browser-web-fetch/1"
)

// MaxRetryAfter caps the wait a Retry-After header is read as.
const MaxRetryAfter = 24 * time.Hour

// Formats a Request may ask for.
const (
	FormatMarkdown = "markdown"
	FormatRaw      = "raw"
)

// Resolver resolves a host name; *net.Resolver satisfies it.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// Options configure a Fetcher. The zero value is a safe production setup.
type Options struct {
	// AllowLoopback admits 127.0.0.0/8 and ::1 and any port. Tests only:
	// the default refuses both.
	AllowLoopback bool
	// MaxBytes caps the (decoded) body; a larger body is refused with a
	// RefusedError of kind RefusedSize. Default DefaultMaxBytes.
	MaxBytes int64
	// MaxRedirects caps redirect hops. Default DefaultMaxRedirects; a
	// negative value follows none.
	MaxRedirects int
	// MaxMarkdownChars bounds Result.Markdown; 0 means the converter's
	// default.
	MaxMarkdownChars int
	// Timeout bounds the whole fetch: every lookup, connection, redirect
	// hop, the headers, the body and any Retry-After wait. Default
	// DefaultTimeout. A caller's deadline that comes sooner bounds it too,
	// less a tenth kept for the caller to answer in. When the bound passes
	// the fetch fails with a *TimeoutError.
	Timeout time.Duration
	// MaxRetryWait is the longest Retry-After a 429 or 503 may ask for and
	// still be waited, once, before asking again; the wait must also be
	// under half the time left. Default DefaultMaxRetryWait; negative
	// never waits.
	MaxRetryWait time.Duration
	// Resolver resolves host names. Default net.DefaultResolver.
	Resolver Resolver
	// UserAgent is sent with every request. Default DefaultUserAgent.
	UserAgent string
	// Redactor scrubs the URLs in results and errors; nil scrubs known
	// credential shapes only.
	Redactor *redact.Redactor
	// Logger hears one debug line per hop (scrubbed URLs only).
	Logger zerolog.Logger
}

// Fetcher fetches public pages. It is safe for concurrent use and holds no
// cookies or connections between calls.
type Fetcher struct {
	o Options
}

// New returns a Fetcher with o's zero fields set to their defaults.
func New(o Options) *Fetcher {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxRedirects == 0 {
		o.MaxRedirects = DefaultMaxRedirects
	} else if o.MaxRedirects < 0 {
		o.MaxRedirects = 0
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxRetryWait == 0 {
		o.MaxRetryWait = DefaultMaxRetryWait
	}
	if o.Resolver == nil {
		o.Resolver = net.DefaultResolver
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	return &Fetcher{o: o}
}

// Request is one web_fetch call.
type Request struct {
	URL string
	// Format is FormatMarkdown (the default when empty) or FormatRaw.
	Format string
}

// Result is what a fetch read. URLs are scrubbed; Markdown and Title are
// redacted with the Redactor before conversion and cutting; Body is the page
// as received, NOT redacted: the caller redacts what it keeps of it.
type Result struct {
	// RequestedURL and FinalURL are scrubbed (no userinfo, fragment or query
	// values); FinalURL is the URL after redirects.
	RequestedURL string
	FinalURL     string
	Status       int
	// ContentType is the media type without parameters, for example
	// "text/html".
	ContentType string
	// Body is the bytes as received (decoded from any transfer
	// compression). Empty for a PDF fetched as markdown.
	Body []byte
	// Markdown is the page as markdown for format "markdown": HTML
	// converted, other text as is. Empty for format "raw" and for PDFs.
	Markdown string
	// Truncated says Markdown was cut to its character bound.
	Truncated bool
	// Whole is all the markdown read, of which Markdown is the first part:
	// what is filed as evidence, so the record is the page as read, not
	// the cut the model was shown.
	Whole string
	// Extractor names which part of an HTML page was converted.
	Extractor string
	// IsPDF says the body is a PDF (fetch it with format "raw" to file it).
	IsPDF bool
	// Title is the HTML <title>, when there is one.
	Title string
	// Redirects counts the hops followed.
	Redirects int
}

// StatusError is a final response outside 2xx.
type StatusError struct {
	Code int
	// URL is the scrubbed URL that answered.
	URL string
	// RetryAfter is the wait a 429 or 503 asked for (0 when it named none),
	// at most MaxRetryAfter.
	RetryAfter time.Duration
	// Retried says this answer came after one wait for a Retry-After.
	Retried bool
}

func (e *StatusError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "web_fetch: %s answered HTTP %d", e.URL, e.Code)
	if e.Retried {
		b.WriteString(" again, after the wait it asked for")
	}
	switch {
	case e.Blocked():
		b.WriteString(": the site refuses automated reads; try another source or ask a person")
	case e.RetryAfter > 0:
		fmt.Fprintf(&b, " and asked to wait %d s; fetch it again after that, or use another source", seconds(e.RetryAfter))
	case e.BackOff():
		b.WriteString(": the site asks readers to back off; wait a minute or more before fetching it again, or use another source")
	}
	return b.String()
}

// BackOff reports a 429, or a 503 that named a wait or came after one: the
// site asks readers to back off, so asking again at once will not help.
func (e *StatusError) BackOff() bool {
	return e.RateLimited() || e.RetryAfter > 0 || e.Retried
}

// Blocked reports a status that means the site refuses the reader: 401, 403,
// 451 or 999.
func (e *StatusError) Blocked() bool {
	switch e.Code {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusUnavailableForLegalReasons, 999:
		return true
	}
	return false
}

// RateLimited reports 429.
func (e *StatusError) RateLimited() bool { return e.Code == http.StatusTooManyRequests }

// Retryable reports a status worth retrying later: 408, 425, 429 and 5xx.
func (e *StatusError) Retryable() bool {
	return e.Code == http.StatusRequestTimeout || e.Code == http.StatusTooEarly || e.RateLimited() || e.Code >= 500 && e.Code <= 599
}

// TimeoutError says the site was too slow: the fetch's time bound passed
// before it answered or before its whole body came. Asking again at once
// would wait as long. It unwraps to context.DeadlineExceeded.
type TimeoutError struct {
	// URL is the scrubbed URL being read.
	URL string
	// After is the bound that passed.
	After time.Duration
	// Body says the headers had come and the body was still arriving;
	// Read counts the body's bytes received by then.
	Body bool
	Read int
}

func (e *TimeoutError) Error() string {
	if e.Body {
		return fmt.Sprintf("web_fetch: %s sent its headers, then its body too slowly: %d bytes in %s, not the whole page", e.URL, e.Read, e.After.Round(time.Millisecond))
	}
	return fmt.Sprintf("web_fetch: %s did not answer within %s", e.URL, e.After.Round(time.Millisecond))
}

// Unwrap makes a TimeoutError a deadline error.
func (e *TimeoutError) Unwrap() error { return context.DeadlineExceeded }

// errBound is the cause of a fetch's own deadline.
var errBound = errors.New("web_fetch: the fetch's time bound passed")

// Fetch reads req.URL, following at most MaxRedirects redirects, each hop
// vetted by the guard, all within one time bound (Options.Timeout). A 429 or
// 503 whose Retry-After is short is waited once and asked again. Failures
// are *RefusedError, *StatusError, *LookupError, *TimeoutError, a context
// error (errors.Is context.Canceled, or context.DeadlineExceeded for the
// caller's own deadline) or a transport error.
func (f *Fetcher) Fetch(ctx context.Context, req Request) (*Result, error) {
	format := req.Format
	if format == "" {
		format = FormatMarkdown
	}
	if format != FormatMarkdown && format != FormatRaw {
		return nil, refuse(RefusedURL, "format %q is not supported; use \"markdown\" or \"raw\"", req.Format)
	}
	bound := f.o.Timeout
	if d, ok := ctx.Deadline(); ok {
		bound = min(bound, time.Until(d)*9/10)
	}
	deadline := time.Now().Add(bound)
	ctx, cancel := context.WithDeadlineCause(ctx, deadline, errBound)
	defer cancel()
	// slow turns a failure after the bound passed into a *TimeoutError.
	slow := func(err error, raw string, body bool, read int) error {
		if errors.Is(context.Cause(ctx), errBound) {
			return &TimeoutError{URL: f.o.Redactor.URL(raw), After: bound, Body: body, Read: read}
		}
		return err
	}
	res := &Result{RequestedURL: f.o.Redactor.URL(req.URL)}

	current := req.URL
	retried := false
	for hop := 0; ; hop++ {
		t, err := f.vet(ctx, current)
		if err != nil {
			return nil, slow(err, current, false, 0)
		}
		resp, err := f.roundTrip(ctx, t)
		if err != nil {
			return nil, slow(err, current, false, 0)
		}
		scrubbed := f.o.Redactor.URL(t.url.String())
		f.o.Logger.Debug().Str("url", scrubbed).Int("status", resp.StatusCode).Int("hop", hop).Msg("web_fetch hop")
		if isRedirect(resp.StatusCode) {
			loc := resp.Header.Get("Location")
			closeBody(resp)
			if loc == "" {
				return nil, refuse(RefusedRedirects, "%s answered a redirect without a Location", scrubbed)
			}
			if res.Redirects >= f.o.MaxRedirects {
				return nil, refuse(RefusedRedirects, "more than %d redirects; fetch the final URL directly", f.o.MaxRedirects)
			}
			next, err := t.url.Parse(loc)
			if err != nil {
				return nil, refuse(RefusedRedirects, "%s redirected to a URL that does not parse", scrubbed)
			}
			current = next.String()
			res.Redirects++
			continue
		}
		if code := resp.StatusCode; code < 200 || code > 299 {
			closeBody(resp)
			se := &StatusError{Code: code, URL: scrubbed, Retried: retried}
			if code != http.StatusTooManyRequests && code != http.StatusServiceUnavailable {
				return nil, se
			}
			wait, ok := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
			se.RetryAfter = wait
			if !ok || retried || wait > f.o.MaxRetryWait || wait >= time.Until(deadline)/2 {
				return nil, se
			}
			retried = true
			f.o.Logger.Debug().Str("url", scrubbed).Dur("wait", wait).Msg("web_fetch waits as asked")
			timer := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				timer.Stop()
				return nil, slow(fmt.Errorf("web_fetch: %s: %w", scrubbed, ctx.Err()), current, false, 0)
			case <-timer.C:
			}
			continue
		}
		res.FinalURL = scrubbed
		res.Status = resp.StatusCode
		out, err := f.read(ctx, resp, format, t.url, res)
		var partial *bodyError
		if errors.As(err, &partial) {
			return nil, slow(partial.err, current, true, partial.read)
		}
		return out, err
	}
}

// bodyError is a body that stopped coming after read bytes.
type bodyError struct {
	err  error
	read int
}

func (e *bodyError) Error() string { return e.err.Error() }
func (e *bodyError) Unwrap() error { return e.err }

// parseRetryAfter reads a Retry-After value (RFC 9110, 10.2.3): whole
// seconds or an HTTP date, from now. A date past is 0; a wait over
// MaxRetryAfter is MaxRetryAfter. ok is false when h is neither form.
func parseRetryAfter(h string, now time.Time) (wait time.Duration, ok bool) {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0, false
	}
	if strings.Trim(h, "0123456789") == "" {
		n, err := strconv.ParseUint(h, 10, 64)
		if err != nil || n > uint64(MaxRetryAfter/time.Second) {
			return MaxRetryAfter, true // only digits: too many of them
		}
		return time.Duration(n) * time.Second, true
	}
	t, err := http.ParseTime(h)
	if err != nil {
		return 0, false
	}
	return min(max(t.Sub(now), 0), MaxRetryAfter), true
}

// seconds is d in whole seconds, rounded up.
func seconds(d time.Duration) int64 {
	return int64((d + time.Second - 1) / time.Second)
}

func isRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// roundTrip sends one GET over a transport that can only dial t's vetted
// addresses, with no proxy, no cookies and no connection reuse.
func (f *Fetcher) roundTrip(ctx context.Context, t *target) (*http.Response, error) {
	// No timeout per phase: the fetch's one bound, in ctx, times them all.
	tr := &http.Transport{
		Proxy:                  nil, // an environment proxy would bypass the guard
		DialContext:            t.dialer(),
		ForceAttemptHTTP2:      true,
		DisableKeepAlives:      true,
		MaxResponseHeaderBytes: 256 << 10,
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.url.String(), nil)
	if err != nil {
		return nil, refuse(RefusedURL, "the URL cannot be requested")
	}
	req.Header.Set("User-Agent", f.o.UserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,text/*;q=0.8,application/json;q=0.8,application/pdf;q=0.7,*/*;q=0.1")
	req.Header.Set("Accept-Language", "en;q=0.9,*;q=0.5")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		tr.CloseIdleConnections()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("web_fetch: %s: %w", f.o.Redactor.URL(t.url.String()), ctx.Err())
		}
		return nil, fmt.Errorf("web_fetch: %s: %w", f.o.Redactor.URL(t.url.String()), err)
	}
	// The transport is per hop; closing the body releases its connection.
	resp.Body = &closer{ReadCloser: resp.Body, tr: tr}
	return resp, nil
}

type closer struct {
	io.ReadCloser
	tr *http.Transport
}

func (c *closer) Close() error {
	err := c.ReadCloser.Close()
	c.tr.CloseIdleConnections()
	return err
}

// closeBody closes without reading on: no connection is reused, and a
// body that trickles would hold the fetch.
func closeBody(resp *http.Response) { _ = resp.Body.Close() }

// read checks the final 2xx response's type and size and fills res.
func (f *Fetcher) read(ctx context.Context, resp *http.Response, format string, u *url.URL, res *Result) (*Result, error) {
	defer closeBody(resp)
	if resp.ContentLength > f.o.MaxBytes {
		return nil, refuse(RefusedSize, "the body is %d bytes, over the %d-byte limit", resp.ContentLength, f.o.MaxBytes)
	}
	mediaType := ""
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err == nil {
			mediaType = strings.ToLower(mt)
		} else {
			mediaType = strings.ToLower(strings.TrimSpace(strings.SplitN(ct, ";", 2)[0]))
		}
	}
	// A declared non-text type is refused before its body is read.
	if mediaType != "" && mediaType != "application/octet-stream" && !TextLike(mediaType) && mediaType != "application/pdf" {
		return nil, refuse(RefusedType, "content type %s is not text; web_fetch reads text, HTML, JSON, XML and PDF", mediaType)
	}
	if mediaType == "application/pdf" && format == FormatMarkdown {
		res.ContentType, res.IsPDF = mediaType, true
		return res, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.o.MaxBytes+1))
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, &bodyError{err: fmt.Errorf("web_fetch: reading %s: %w", res.FinalURL, err), read: len(body)}
	}
	if int64(len(body)) > f.o.MaxBytes {
		return nil, refuse(RefusedSize, "the body is over the %d-byte limit", f.o.MaxBytes)
	}
	if mediaType == "" || mediaType == "application/octet-stream" {
		// Undeclared: trust only what the bytes say.
		sniffed, _, _ := mime.ParseMediaType(http.DetectContentType(body))
		if !TextLike(sniffed) && sniffed != "application/pdf" {
			return nil, refuse(RefusedType, "the body is not text (it looks like %s); web_fetch reads text, HTML, JSON, XML and PDF", sniffed)
		}
		mediaType = sniffed
	}
	res.ContentType = mediaType
	if mediaType == "application/pdf" {
		res.IsPDF = true
		if format == FormatMarkdown {
			return res, nil
		}
		res.Body = body
		return res, nil
	}
	res.Body = body
	// What is read from the page is redacted before it is converted or cut:
	// the markdown converter escapes characters ('_' as '\_'), which would
	// turn a secret into a spelling the redactor does not know, and a cut
	// can leave a prefix of one.
	text := decodeText(body, resp.Header.Get("Content-Type"))
	if f.o.Redactor != nil {
		text = f.o.Redactor.String(text)
	}
	isHTML := mediaType == "text/html" || mediaType == "application/xhtml+xml"
	if isHTML {
		res.Title = title([]byte(text))
	}
	if format == FormatRaw {
		return res, nil
	}
	limit := f.o.MaxMarkdownChars
	if limit <= 0 {
		limit = markdown.DefaultMaxChars
	}
	if !isHTML {
		res.Whole = text
	} else {
		// Links resolve against the scrubbed URL: a credential in the
		// page's own query must not be copied into every relative link.
		// Converted whole (the body is bounded already), cut below.
		base := u.Scheme + "://" + u.Host + u.EscapedPath()
		mo := markdown.Options{BaseURL: base, MaxChars: math.MaxInt32}
		if f.o.Redactor != nil {
			mo.Redact = f.o.Redactor.String
		}
		md, err := markdown.Convert(text, mo)
		if err != nil {
			return nil, fmt.Errorf("web_fetch: converting %s to markdown: %w", res.FinalURL, err)
		}
		res.Whole, res.Truncated, res.Extractor = md.Markdown, md.Truncated, md.Extractor
	}
	res.Markdown = res.Whole
	if utf8.RuneCountInString(res.Whole) > limit {
		res.Markdown, res.Truncated = string([]rune(res.Whole)[:limit]), true
	}
	return res, nil
}

// decodeText turns a text body into UTF-8 by the charset it declares (a
// byte-order mark, the Content-Type's charset, an HTML page's <meta>), as
// a browser would; a body that declares none is read as UTF-8 when it is,
// else as windows-1252 (the web's default).
func decodeText(body []byte, contentType string) string {
	enc, name, certain := charset.DetermineEncoding(body, contentType)
	if name == "utf-8" || (!certain && utf8.Valid(body)) {
		return strings.ToValidUTF8(string(body), "\uFFFD")
	}
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		return strings.ToValidUTF8(string(body), "\uFFFD")
	}
	return strings.ToValidUTF8(string(out), "\uFFFD")
}

// TextLike reports the media types web_fetch reads as text; a download of
// one is filed as text (redacted) too.
func TextLike(mt string) bool {
	if strings.HasPrefix(mt, "text/") {
		return true
	}
	switch mt {
	case "application/json", "application/xml", "application/xhtml+xml",
		"application/javascript", "application/x-javascript", "application/ecmascript",
		"application/x-ndjson", "application/yaml", "application/x-yaml", "application/toml":
		return true
	}
	return strings.HasPrefix(mt, "application/") && (strings.HasSuffix(mt, "+json") || strings.HasSuffix(mt, "+xml"))
}

// title returns the first <title>'s text, whitespace collapsed, at most 300
// characters.
func title(body []byte) string {
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return ""
		case html.StartTagToken:
			name, _ := z.TagName()
			switch atom.Lookup(name) {
			case atom.Title:
			case atom.Body:
				return ""
			default:
				continue
			}
			if z.Next() != html.TextToken {
				return ""
			}
			t := strings.Join(strings.Fields(string(z.Text())), " ")
			if utf8.RuneCountInString(t) > 300 {
				t = string([]rune(t)[:300])
			}
			return strings.ToValidUTF8(t, "")
		}
	}
}
