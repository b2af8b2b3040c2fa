package activities

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/evidence"
	"github.com/durable-browser/durable-browser/internal/webfetch"
)

// A host name that does not exist is said so and not retried; a name server
// that did not answer may be tried again.
func TestFetchFailureForUnresolvableHost(t *testing.T) {
	notFound := &webfetch.LookupError{Host: "no-such-host.invalid", Err: &net.DNSError{Err: "no such host", Name: "no-such-host.invalid", IsNotFound: true}}
	f := fetchFailure(notFound)
	if f.Code != contract.CodeCommandFailed || f.Retryable || !strings.Contains(f.Message, "no-such-host.invalid does not resolve") || !strings.Contains(f.Message, "retrying will not help") {
		t.Fatalf("unresolvable host: %+v", f)
	}
	if f := fetchFailure(&webfetch.LookupError{Host: "h.example", Err: errors.New("no addresses")}); f.Retryable {
		t.Fatalf("a name with no addresses: %+v", f)
	}
	timeout := &webfetch.LookupError{Host: "h.example", Err: &net.DNSError{Err: "i/o timeout", Name: "h.example", IsTimeout: true}}
	if f := fetchFailure(timeout); f.Code != contract.CodeCommandFailed || !f.Retryable {
		t.Fatalf("a name server that did not answer: %+v", f)
	}
}

// fetchHarness is a harness whose fetcher reads loopback with a short bound.
func fetchHarness(t *testing.T, timeout time.Duration) *harness {
	t.Helper()
	return newHarness(t, func(o *Options) {
		o.Fetcher = webfetch.New(webfetch.Options{AllowLoopback: true, Timeout: timeout})
		o.Evidence = &evidence.Filer{Store: evidence.NewMemory()}
	})
}

// trickle sends its headers, then a byte every 20 ms for up to 3 s: a site
// that answers but is too slow to read.
func trickle(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusOK)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for range 150 {
		_, _ = w.Write([]byte("x"))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}

// A site too slow to read is one bounded wait and one typed timeout that
// names what was slow, not retried: a second wait would be as long.
func TestWebFetchTooSlowIsOneTimeout(t *testing.T) {
	mute := func(w http.ResponseWriter, r *http.Request) {
		select { // no headers for 3 s
		case <-r.Context().Done():
		case <-time.After(3 * time.Second):
		}
	}
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"trickling body", trickle, "body"},
		{"no headers", mute, "did not answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hits atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				tc.handler(w, r)
			}))
			defer srv.Close()
			h := fetchHarness(t, 300*time.Millisecond)
			start := time.Now()
			_, err := call[contract.WebFetchResult](h, contract.ActivityWebFetch, contract.WebFetchRequest{SessionTag: "s", Args: contract.WebFetchArgs{URL: srv.URL + "/slow"}})
			took := time.Since(start)
			f := wantCode(t, err, contract.CodeTimeout, false)
			if !strings.Contains(f.Message, tc.want) || !strings.Contains(f.Message, "300ms") || !strings.Contains(f.Message, "try again later") {
				t.Errorf("message %q does not say what was slow (%q), the bound, and the way out", f.Message, tc.want)
			}
			if took > 2*time.Second || hits.Load() != 1 {
				t.Errorf("took %s over %d requests; want one bounded wait", took, hits.Load())
			}
		})
	}
}

// A 429 or 503 with a short Retry-After is waited once and asked again; a
// long one, or a second refusal, is a failure that says how long the site
// asked to wait and is not retried against it.
func TestWebFetchRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		name       string
		status     int
		retryAfter []string // per request; past the end, 200
		code       contract.Code
		retryable  bool
		want       string
		hits       int32
	}{
		{"short 429 waited", 429, []string{"0"}, "", false, "", 2},
		{"past date 503 waited", 503, []string{"Sun, 06 Nov 1994 08:49:37 GMT"}, "", false, "", 2},
		{"long 429", 429, []string{"120"}, contract.CodeRateLimited, false, "120 s", 1},
		{"long 503 as a date", 503, []string{time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)}, contract.CodeCommandFailed, false, "3600 s", 1},
		{"absurd 429", 429, []string{"99999999999999999999999"}, contract.CodeRateLimited, false, "86400 s", 1},
		{"429 twice", 429, []string{"0", "0"}, contract.CodeRateLimited, false, "429", 2},
		{"429 without a wait", 429, []string{""}, contract.CodeRateLimited, false, "429", 1},
		{"503 without a wait", 503, []string{""}, contract.CodeCommandFailed, true, "503", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hits atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := int(hits.Add(1)) - 1
				if n >= len(tc.retryAfter) {
					w.Header().Set("Content-Type", "text/plain")
					_, _ = w.Write([]byte("here now"))
					return
				}
				if tc.retryAfter[n] != "" {
					w.Header().Set("Retry-After", tc.retryAfter[n])
				}
				w.WriteHeader(tc.status)
			}))
			defer srv.Close()
			h := fetchHarness(t, 2*time.Second)
			res, err := call[contract.WebFetchResult](h, contract.ActivityWebFetch, contract.WebFetchRequest{SessionTag: "s", Args: contract.WebFetchArgs{URL: srv.URL + "/p", Format: "raw"}})
			if tc.code == "" {
				if err != nil || res.Status != 200 {
					t.Fatalf("want the page after one wait, got %+v, %v", res, err)
				}
			} else {
				f := wantCode(t, err, tc.code, tc.retryable)
				if !strings.Contains(f.Message, tc.want) {
					t.Errorf("message %q does not say %q", f.Message, tc.want)
				}
			}
			if hits.Load() != tc.hits {
				t.Errorf("%d requests, want %d", hits.Load(), tc.hits)
			}
		})
	}
}

// A connection refused may be gone on the next attempt: it stays retryable.
func TestWebFetchRefusedConnectionIsRetryable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	h := fetchHarness(t, 300*time.Millisecond)
	_, err := call[contract.WebFetchResult](h, contract.ActivityWebFetch, contract.WebFetchRequest{SessionTag: "s", Args: contract.WebFetchArgs{URL: srv.URL + "/"}})
	wantCode(t, err, contract.CodeCommandFailed, true)
}
