package websearch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Default API locations.
const (
	DefaultBraveBaseURL = "https://api.search.brave.com"
	DefaultExaBaseURL   = "https://api.exa.ai"
)

// braveMaxCount is the most results the Brave web search API returns per
// request.
const braveMaxCount = 20

// Brave is the Brave Search API web search source:
// GET {base}/res/v1/web/search?q=&count= with header X-Subscription-Token,
// answering web.results[].{title,url,description}.
type Brave struct {
	APIKey  string
	BaseURL string // default DefaultBraveBaseURL
	Client  *http.Client
}

// Name implements Source.
func (b *Brave) Name() string { return "brave" }

type braveResponse struct {
	Web struct {
		Results []struct {
			Title         string   `json:"title"`
			URL           string   `json:"url"`
			Description   string   `json:"description"`
			ExtraSnippets []string `json:"extra_snippets"`
		} `json:"results"`
	} `json:"web"`
}

// Search implements Source.
func (b *Brave) Search(ctx context.Context, q string, n int) ([]Hit, error) {
	base := strings.TrimRight(orDefault(b.BaseURL, DefaultBraveBaseURL), "/")
	v := url.Values{"q": {q}, "count": {strconv.Itoa(min(n, braveMaxCount))}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/res/v1/web/search?"+v.Encode(), nil)
	if err != nil {
		return nil, &SourceError{Source: b.Name(), Err: errors.New("bad base URL")}
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Subscription-Token", b.APIKey)
	var resp braveResponse
	if err := do(b.client(), req, b.Name(), &resp); err != nil {
		return nil, err
	}
	hits := make([]Hit, 0, len(resp.Web.Results))
	for _, r := range resp.Web.Results {
		snippet := r.Description
		if snippet == "" && len(r.ExtraSnippets) > 0 {
			snippet = r.ExtraSnippets[0]
		}
		hits = append(hits, Hit{Title: r.Title, URL: r.URL, Snippet: snippet})
	}
	return hits, nil
}

func (b *Brave) client() *http.Client { return clientOr(b.Client) }

// Exa is the Exa search API source: POST {base}/search with header x-api-key
// and JSON {query, numResults, contents: {text: {maxCharacters}}}, answering
// results[].{title,url,text,highlights}.
type Exa struct {
	APIKey  string
	BaseURL string // default DefaultExaBaseURL
	Client  *http.Client
}

// Name implements Source.
func (e *Exa) Name() string { return "exa" }

type exaRequest struct {
	Query      string `json:"query"`
	NumResults int    `json:"numResults"`
	Contents   struct {
		Text struct {
			MaxCharacters int `json:"maxCharacters"`
		} `json:"text"`
	} `json:"contents"`
}

type exaResponse struct {
	Results []struct {
		Title      string   `json:"title"`
		URL        string   `json:"url"`
		Text       string   `json:"text"`
		Highlights []string `json:"highlights"`
		Summary    string   `json:"summary"`
	} `json:"results"`
}

// Search implements Source.
func (e *Exa) Search(ctx context.Context, q string, n int) ([]Hit, error) {
	base := strings.TrimRight(orDefault(e.BaseURL, DefaultExaBaseURL), "/")
	body := exaRequest{Query: q, NumResults: n}
	// Enough text for a snippet; the Searcher clips it further.
	body.Contents.Text.MaxCharacters = 2 * MaxSnippetChar
	b, err := json.Marshal(body)
	if err != nil {
		return nil, &SourceError{Source: e.Name(), Err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/search", bytes.NewReader(b))
	if err != nil {
		return nil, &SourceError{Source: e.Name(), Err: errors.New("bad base URL")}
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", e.APIKey)
	var resp exaResponse
	if err := do(e.client(), req, e.Name(), &resp); err != nil {
		return nil, err
	}
	hits := make([]Hit, 0, len(resp.Results))
	for _, r := range resp.Results {
		snippet := strings.Join(r.Highlights, " … ")
		if snippet == "" {
			snippet = r.Summary
		}
		if snippet == "" {
			snippet = r.Text
		}
		hits = append(hits, Hit{Title: r.Title, URL: r.URL, Snippet: snippet})
	}
	return hits, nil
}

func (e *Exa) client() *http.Client { return clientOr(e.Client) }

// clientOr is c, or http.DefaultClient when c is nil.
func clientOr(c *http.Client) *http.Client {
	if c != nil {
		return c
	}
	return http.DefaultClient
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// do sends req and decodes a 2xx JSON answer into out. Errors carry the
// status but never the request (whose headers hold the key) nor the body.
func do(c *http.Client, req *http.Request, source string, out any) error {
	resp, err := c.Do(req)
	if err != nil {
		// *url.Error repeats the URL; keep only the cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return &SourceError{Source: source, Err: err}
	}
	defer func() {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
	}()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &SourceError{Source: source, Status: resp.StatusCode, Err: fmt.Errorf("HTTP %d", resp.StatusCode)}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return &SourceError{Source: source, Err: err}
	}
	if len(data) > maxResponseBytes {
		return &SourceError{Source: source, Err: errors.New("answer too large")}
	}
	if err := json.Unmarshal(data, out); err != nil {
		return &SourceError{Source: source, Err: errors.New("answer is not the documented JSON shape")}
	}
	return nil
}
