// Package websearch answers the web_search tool from an ordered list of
// search sources (Brave Search API, Exa API, then any extra source such as a
// provider's own search). A source that fails hands the call to the next; a
// cancelled call is never handed on; the answer names the source that gave it.
package websearch

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net/http"
	"os"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rs/zerolog"

	"github.com/durable-browser/durable-browser/internal/redact"
)

// Limits of a query and its answer.
const (
	MaxQueryChars  = 200
	DefaultN       = 10
	MaxN           = 25
	MaxSnippetChar = 500
	// maxResponseBytes bounds what is read from a search API.
	maxResponseBytes = 4 << 20
)

// Environment variables holding the built-in sources' keys.
const (
	EnvBraveAPIKey = "BRAVE_API_KEY"
	EnvExaAPIKey   = "EXA_API_KEY"
)

// ErrNoSource means no search source is configured.
var ErrNoSource = errors.New("web_search has no search source: set " + EnvBraveAPIKey + " (Brave Search API) or " + EnvExaAPIKey + " (Exa API) in the worker's environment")

// ErrInvalidQuery is matched (errors.Is) by every *QueryError.
var ErrInvalidQuery = errors.New("websearch: invalid query")

// QueryError says the query was refused before any source was asked.
type QueryError struct{ Reason string }

func (e *QueryError) Error() string { return "web_search refused: " + e.Reason }

// Is makes errors.Is(err, ErrInvalidQuery) true.
func (e *QueryError) Is(target error) bool { return target == ErrInvalidQuery }

// Query is one web_search call.
type Query struct {
	// Q is the search text, at most MaxQueryChars characters.
	Q string
	// N is how many hits to return, 1 to MaxN; 0 means DefaultN.
	N int
}

// Hit is one search result.
type Hit struct {
	Title string `json:"title"`
	// URL is scrubbed: no userinfo, fragment or query values.
	URL string `json:"url"`
	// Snippet is plain text of at most MaxSnippetChar characters, markdown
	// links reduced to their text, redacted.
	Snippet string `json:"snippet,omitempty"`
}

// Result is a search's answer.
type Result struct {
	// Via names the source that answered ("brave", "exa", ...).
	Via  string `json:"via"`
	Hits []Hit  `json:"hits"`
}

// Source is one search backend. Sources return raw hits; the Searcher
// cleans, scrubs, clips and redacts them.
type Source interface {
	// Name is the source's short name, reported as Result.Via.
	Name() string
	// Search returns up to n hits for q.
	Search(ctx context.Context, q string, n int) ([]Hit, error)
}

// SourceError is one source's failure. It never holds the source's key.
type SourceError struct {
	Source string
	// Status is the HTTP status the source answered, 0 when it did not.
	Status int
	Err    error
}

func (e *SourceError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s answered HTTP %d", e.Source, e.Status)
	}
	return fmt.Sprintf("%s: %v", e.Source, e.Err)
}

// Unwrap returns the underlying error.
func (e *SourceError) Unwrap() error { return e.Err }

// SourcesError says every configured source failed.
type SourcesError struct {
	Failures []*SourceError
}

func (e *SourcesError) Error() string {
	parts := make([]string, len(e.Failures))
	for i, f := range e.Failures {
		parts[i] = f.Error()
	}
	return "web_search: every source failed (" + strings.Join(parts, "; ") + "); try again later or check the search API keys"
}

// RateLimited reports that every source answered 429.
func (e *SourcesError) RateLimited() bool {
	return e.all(func(s int) bool { return s == http.StatusTooManyRequests })
}

// Auth reports that every source refused its key (401 or 403).
func (e *SourcesError) Auth() bool {
	return e.all(func(s int) bool { return s == http.StatusUnauthorized || s == http.StatusForbidden })
}

func (e *SourcesError) all(pred func(int) bool) bool {
	if len(e.Failures) == 0 {
		return false
	}
	for _, f := range e.Failures {
		if !pred(f.Status) {
			return false
		}
	}
	return true
}

// Options configure a Searcher.
type Options struct {
	// BraveAPIKey enables the Brave source; empty reads EnvBraveAPIKey.
	BraveAPIKey string
	// BraveBaseURL overrides https://api.search.brave.com (tests).
	BraveBaseURL string
	// ExaAPIKey enables the Exa source; empty reads EnvExaAPIKey.
	ExaAPIKey string
	// ExaBaseURL overrides https://api.exa.ai (tests).
	ExaBaseURL string
	// NoEnv stops the keys being read from the environment.
	NoEnv bool
	// Extra sources are tried, in order, after Brave and Exa.
	Extra []Source
	// HTTPClient sends the built-in sources' requests. Default: a client
	// with a 30 s timeout (the call's context also bounds every request).
	HTTPClient *http.Client
	// Redactor redacts hits and errors; the sources' keys are registered
	// with it. Nil uses a private one.
	Redactor *redact.Redactor
	// Logger hears a debug line per source failure.
	Logger zerolog.Logger
}

// Searcher tries its sources in order. It is safe for concurrent use.
type Searcher struct {
	sources []Source
	r       *redact.Redactor
	log     zerolog.Logger
}

// New builds a Searcher from o. Sources without a key are left out.
func New(o Options) *Searcher {
	if !o.NoEnv {
		if o.BraveAPIKey == "" {
			o.BraveAPIKey = os.Getenv(EnvBraveAPIKey)
		}
		if o.ExaAPIKey == "" {
			o.ExaAPIKey = os.Getenv(EnvExaAPIKey)
		}
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if o.Redactor == nil {
		o.Redactor = redact.New()
	}
	s := &Searcher{r: o.Redactor, log: o.Logger}
	if k := strings.TrimSpace(o.BraveAPIKey); k != "" {
		o.Redactor.Register(k)
		s.sources = append(s.sources, &Brave{APIKey: k, BaseURL: o.BraveBaseURL, Client: o.HTTPClient})
	}
	if k := strings.TrimSpace(o.ExaAPIKey); k != "" {
		o.Redactor.Register(k)
		s.sources = append(s.sources, &Exa{APIKey: k, BaseURL: o.ExaBaseURL, Client: o.HTTPClient})
	}
	for _, x := range o.Extra {
		if x != nil {
			s.sources = append(s.sources, x)
		}
	}
	return s
}

// Sources names the configured sources in the order they are tried.
func (s *Searcher) Sources() []string {
	out := make([]string, len(s.sources))
	for i, src := range s.sources {
		out[i] = src.Name()
	}
	return out
}

// Search validates q and asks each source in turn until one answers. Errors:
// *QueryError (bad query), ErrNoSource, a context error when the call was
// cancelled or ran out of time, or *SourcesError when every source failed.
func (s *Searcher) Search(ctx context.Context, q Query) (*Result, error) {
	text := strings.Join(strings.Fields(q.Q), " ")
	if text == "" {
		return nil, &QueryError{Reason: "the query is empty; give the words to search for"}
	}
	if n := utf8.RuneCountInString(text); n > MaxQueryChars {
		return nil, &QueryError{Reason: fmt.Sprintf("the query is %d characters; at most %d are allowed", n, MaxQueryChars)}
	}
	n := q.N
	if n == 0 {
		n = DefaultN
	}
	if n < 1 || n > MaxN {
		return nil, &QueryError{Reason: fmt.Sprintf("n is %d; ask for 1 to %d hits", q.N, MaxN)}
	}
	if len(s.sources) == 0 {
		return nil, ErrNoSource
	}
	var failures []*SourceError
	for _, src := range s.sources {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("web_search: %w", err)
		}
		hits, err := src.Search(ctx, text, n)
		if err != nil {
			// A cancelled call is never handed on.
			if cerr := ctx.Err(); cerr != nil {
				return nil, fmt.Errorf("web_search: %w", cerr)
			}
			se, ok := err.(*SourceError)
			if !ok {
				se = &SourceError{Source: src.Name(), Err: err}
			}
			se = &SourceError{Source: se.Source, Status: se.Status, Err: errors.New(s.r.String(errText(se.Err)))}
			failures = append(failures, se)
			s.log.Debug().Str("source", src.Name()).Str("error", se.Error()).Msg("web_search source failed; trying the next")
			continue
		}
		return &Result{Via: src.Name(), Hits: s.clean(hits, n)}, nil
	}
	return nil, &SourcesError{Failures: failures}
}

func errText(err error) string {
	if err == nil {
		return "failed"
	}
	return err.Error()
}

// clean scrubs URLs, reduces titles and snippets to bounded plain text,
// redacts, drops hits without an http(s) URL and duplicates, and keeps n.
func (s *Searcher) clean(hits []Hit, n int) []Hit {
	out := make([]Hit, 0, min(len(hits), n))
	seen := map[string]bool{}
	for _, h := range hits {
		raw := strings.TrimSpace(h.URL)
		lower := strings.ToLower(raw)
		if !strings.HasPrefix(lower, "http://") && !strings.HasPrefix(lower, "https://") {
			continue
		}
		u := s.r.URL(raw)
		if seen[u] {
			continue
		}
		seen[u] = true
		out = append(out, Hit{
			// Redact before cutting, so a cut never leaves half a value.
			Title:   clip(s.r.String(plain(h.Title)), 300),
			URL:     u,
			Snippet: clip(s.r.String(plain(h.Snippet)), MaxSnippetChar),
		})
		if len(out) == n {
			break
		}
	}
	return out
}

var (
	mdImageRE = regexp.MustCompile(`!\[([^\]]*)\]\([^)]*\)`)
	mdLinkRE  = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	mdRefRE   = regexp.MustCompile(`\[([^\]]*)\]\[[^\]]*\]`)
	tagRE     = regexp.MustCompile(`<[^>]*>`)
)

// plain reduces markdown links and images to their text, drops HTML tags,
// decodes entities and collapses whitespace.
func plain(s string) string {
	s = strings.ToValidUTF8(s, "")
	s = mdImageRE.ReplaceAllString(s, "$1")
	s = mdLinkRE.ReplaceAllString(s, "$1")
	s = mdRefRE.ReplaceAllString(s, "$1")
	s = tagRE.ReplaceAllString(s, "")
	s = html.UnescapeString(s)
	return strings.Join(strings.Fields(s), " ")
}

// clip cuts s to at most n characters, ending with "…" when cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}
