package activities

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/webfetch"
	"github.com/durable-browser/durable-browser/internal/websearch"
)

// WebFetch reads a public page without a browser, behind the public-host
// guard, and files what it read.
func (a *Activities) WebFetch(ctx context.Context, req contract.WebFetchRequest) (*contract.WebFetchResult, error) {
	if a.o.Fetcher == nil {
		return nil, contract.Fail(contract.CodeRefused, "web_fetch is not configured on this worker")
	}
	stop := a.heartbeat(ctx, nil)
	defer stop()
	r, err := a.o.Fetcher.Fetch(ctx, webfetch.Request{URL: req.Args.URL, Format: req.Args.Format})
	if err != nil {
		return nil, fetchFailure(err)
	}
	res := &contract.WebFetchResult{
		OK: true, URL: r.RequestedURL, FinalURL: r.FinalURL, Status: r.Status, ContentType: r.ContentType,
		Title: r.Title, Content: r.Markdown, Truncated: r.Truncated, IsPDF: r.IsPDF,
	}
	body, ct, ext := r.Body, r.ContentType, extFor(r.ContentType)
	if req.Args.Format != "raw" && !r.IsPDF {
		// The markdown is what the model reads from, so it is what is
		// filed: all of it, of which content is the first part.
		body, ct, ext = []byte(r.Whole), "text/markdown; charset=utf-8", "md"
	}
	if req.Args.Format != "raw" && r.IsPDF {
		res.Content = "This is a PDF. Fetch it again with format \"raw\" to file its bytes and get them by reference."
	}
	if len(body) > 0 {
		cc, err := a.file(ctx, filing{
			tool: contract.ToolWebFetch, args: req.Args, session: req.SessionTag, ext: ext, contentType: ct, body: body,
			requestedURL: r.RequestedURL, finalURL: r.FinalURL, title: r.Title, extractor: r.Extractor, httpStatus: r.Status,
		})
		if err != nil {
			return nil, evidenceFailure(err)
		}
		res.Evidence = cc
	}
	capResult(res)
	return res, nil
}

// capResult keeps a fetch result well under Temporal's payload limits: the
// whole body is in the evidence store either way.
func capResult(r *contract.WebFetchResult) {
	const max = 256 << 10
	if len(r.Content) > max {
		r.Content = r.Content[:max]
		r.Truncated = true
	}
}

func extFor(ct string) string {
	switch {
	case strings.Contains(ct, "pdf"):
		return "pdf"
	case strings.Contains(ct, "html"):
		return "html"
	case strings.Contains(ct, "json"):
		return "json"
	case strings.Contains(ct, "xml"):
		return "xml"
	}
	return "txt"
}

func fetchFailure(err error) *contract.Failure {
	var refused *webfetch.RefusedError
	var status *webfetch.StatusError
	var lookup *webfetch.LookupError
	var slow *webfetch.TimeoutError
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &lookup) && (!errors.As(err, &dnsErr) || dnsErr.IsNotFound):
		// A name that does not exist will not exist on a retry.
		return contract.Fail(contract.CodeCommandFailed,
			"the host %s does not resolve (no such name), so nothing was fetched; retrying will not help: check the spelling of the URL, or find the site with web_search", lookup.Host)
	case errors.As(err, &lookup):
		f := contract.Fail(contract.CodeCommandFailed, "the host %s could not be resolved just now (the name server did not answer); try again shortly", lookup.Host).WithDetail(err.Error())
		f.Retryable = true
		return f
	case errors.Is(err, context.Canceled):
		return contract.Fail(contract.CodeAborted, "the fetch was cancelled")
	case errors.As(err, &slow):
		// Not retried: a second wait would be as long as the first.
		f := contract.Fail(contract.CodeTimeout, "%v; the site is too slow to read now, so the fetch was not repeated: try again later, or use another source", err)
		f.Retryable = false
		return f
	case errors.Is(err, context.DeadlineExceeded):
		return contract.Fail(contract.CodeTimeout, "the fetch ran out of time; try again or another source")
	case errors.As(err, &refused):
		if refused.Kind == webfetch.RefusedType {
			return contract.Fail(contract.CodeNotContent, "%v", err)
		}
		return contract.Fail(contract.CodeRefused, "%v", err)
	case errors.As(err, &status):
		switch {
		case status.Blocked():
			return contract.Fail(contract.CodeBlocked, "%v", err)
		case status.BackOff():
			// The site asked readers to back off (any wait it named short
			// enough was waited once already): not asked again at once.
			code := contract.CodeCommandFailed
			if status.RateLimited() {
				code = contract.CodeRateLimited
			}
			f := contract.Fail(code, "%v", err)
			f.Retryable = false
			return f
		case status.Retryable():
			f := contract.Fail(contract.CodeCommandFailed, "%v", err)
			f.Retryable = true
			return f
		}
		return contract.Fail(contract.CodeCommandFailed, "%v", err)
	}
	f := contract.Fail(contract.CodeCommandFailed, "the fetch failed; check the URL or try again").WithDetail(err.Error())
	f.Retryable = true
	return f
}

// WebSearch asks the configured search sources in order and files the hits.
func (a *Activities) WebSearch(ctx context.Context, req contract.WebSearchRequest) (*contract.WebSearchResult, error) {
	if a.o.Searcher == nil {
		return nil, contract.Fail(contract.CodeRefused, "%v", websearch.ErrNoSource)
	}
	stop := a.heartbeat(ctx, nil)
	defer stop()
	r, err := a.o.Searcher.Search(ctx, websearch.Query{Q: req.Args.Query, N: req.Args.N})
	if err != nil {
		switch {
		case errors.Is(err, websearch.ErrNoSource), errors.Is(err, websearch.ErrInvalidQuery):
			return nil, contract.Fail(contract.CodeRefused, "%v", err)
		case errors.Is(err, context.Canceled):
			return nil, contract.Fail(contract.CodeAborted, "the search was cancelled")
		case errors.Is(err, context.DeadlineExceeded):
			return nil, contract.Fail(contract.CodeTimeout, "the search ran out of time")
		}
		f := contract.Fail(contract.CodeCommandFailed, "every search source failed; try again later").WithDetail(err.Error())
		f.Retryable = true
		return nil, f
	}
	res := &contract.WebSearchResult{OK: true, Via: r.Via, Hits: make([]contract.SearchHit, 0, len(r.Hits))}
	for _, h := range r.Hits {
		res.Hits = append(res.Hits, contract.SearchHit{Title: h.Title, URL: h.URL, Snippet: h.Snippet})
	}
	body, _ := json.Marshal(res.Hits)
	cc, err := a.file(ctx, filing{
		tool: contract.ToolWebSearch, args: req.Args, session: req.SessionTag, ext: "json",
		contentType: "application/json", body: body, extractor: r.Via,
	})
	if err != nil {
		return nil, evidenceFailure(err)
	}
	res.Evidence = cc
	return res, nil
}
