package websearch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"
)

const (
	braveKey = "brave-key-0123456789"
	exaKey   = "exa-key-abcdefghijkl"
)

// braveServer is shaped like the Brave web search API. status != 200 makes
// it fail with that status (echoing the key, as a careless API might).
func braveServer(t *testing.T, status int, hits *atomic.Int64) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path != "/res/v1/web/search" || r.Method != http.MethodGet {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		if r.Header.Get("X-Subscription-Token") != braveKey {
			http.Error(w, "bad token", http.StatusUnauthorized)
			return
		}
		if status != http.StatusOK {
			http.Error(w, "failing for key "+braveKey, status)
			return
		}
		q, count := r.URL.Query().Get("q"), r.URL.Query().Get("count")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"type":"search","query":{"original":%q},"web":{"type":"search","results":[
			{"title":"Go <strong>docs</strong>","url":"https://go.dev/doc/?utm=1&token=abc#top","description":"The <strong>Go</strong> docs: see [the tour](https://go.dev/tour) and ![logo](x.png). count=%s"},
			{"title":"Second","url":"https://example.com/2","description":"%s"},
			{"title":"Dup","url":"https://example.com/2","description":"same url"},
			{"title":"Not web","url":"javascript:alert(1)","description":"x"},
			{"title":"Third","url":"https://example.com/3","description":"","extra_snippets":["extra one"]}
		]}}`, q, count, strings.Repeat("é", 700))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func exaServer(t *testing.T, status int, hits *atomic.Int64) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path != "/search" || r.Method != http.MethodPost {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		if r.Header.Get("x-api-key") != exaKey {
			http.Error(w, "bad key", http.StatusUnauthorized)
			return
		}
		if status != http.StatusOK {
			http.Error(w, "failing for key "+exaKey, status)
			return
		}
		var req struct {
			Query      string `json:"query"`
			NumResults int    `json:"numResults"`
			Contents   struct {
				Text struct {
					MaxCharacters int `json:"maxCharacters"`
				} `json:"text"`
			} `json:"contents"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Query == "" || req.NumResults < 1 || req.Contents.Text.MaxCharacters < 1 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"requestId":"r1","results":[
			{"id":"https://exa.test/a","title":"Exa A","url":"https://exa.test/a?session=s","text":"Text of A for %s"},
			{"id":"https://exa.test/b","title":"Exa B","url":"https://exa.test/b","text":"long text","highlights":["High one","High two"]}
		]}`, req.Query)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestBraveAnswers(t *testing.T) {
	var bh, eh atomic.Int64
	s := New(Options{
		NoEnv:       true,
		BraveAPIKey: braveKey, BraveBaseURL: braveServer(t, 200, &bh).URL,
		ExaAPIKey: exaKey, ExaBaseURL: exaServer(t, 200, &eh).URL,
	})
	if got := s.Sources(); len(got) != 2 || got[0] != "brave" || got[1] != "exa" {
		t.Fatalf("Sources = %v", got)
	}
	res, err := s.Search(context.Background(), Query{Q: "  golang   docs ", N: 25})
	if err != nil {
		t.Fatal(err)
	}
	if res.Via != "brave" || eh.Load() != 0 {
		t.Fatalf("via %s, exa asked %d times", res.Via, eh.Load())
	}
	if len(res.Hits) != 3 {
		t.Fatalf("hits %+v", res.Hits)
	}
	h := res.Hits[0]
	if h.Title != "Go docs" || h.URL != "https://go.dev/doc/?utm=[redacted]&token=[redacted]" {
		t.Fatalf("hit 0 = %+v", h)
	}
	// count is capped at Brave's 20 per request.
	if h.Snippet != "The Go docs: see the tour and logo. count=20" {
		t.Fatalf("snippet %q", h.Snippet)
	}
	if n := utf8.RuneCountInString(res.Hits[1].Snippet); n != MaxSnippetChar {
		t.Fatalf("long snippet has %d characters", n)
	}
	if res.Hits[2].Snippet != "extra one" {
		t.Fatalf("extra snippet %q", res.Hits[2].Snippet)
	}

	two, err := s.Search(context.Background(), Query{Q: "x", N: 2})
	if err != nil || len(two.Hits) != 2 {
		t.Fatalf("N=2: %v %+v", err, two)
	}
}

func TestFallbackToExa(t *testing.T) {
	for _, status := range []int{500, 429, 401} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			var bh, eh atomic.Int64
			s := New(Options{
				NoEnv:       true,
				BraveAPIKey: braveKey, BraveBaseURL: braveServer(t, status, &bh).URL,
				ExaAPIKey: exaKey, ExaBaseURL: exaServer(t, 200, &eh).URL,
			})
			res, err := s.Search(context.Background(), Query{Q: "exa please"})
			if err != nil {
				t.Fatal(err)
			}
			if res.Via != "exa" || bh.Load() != 1 || eh.Load() != 1 {
				t.Fatalf("via %s brave %d exa %d", res.Via, bh.Load(), eh.Load())
			}
			want := []Hit{
				{Title: "Exa A", URL: "https://exa.test/a?session=[redacted]", Snippet: "Text of A for exa please"},
				{Title: "Exa B", URL: "https://exa.test/b", Snippet: "High one … High two"},
			}
			if len(res.Hits) != 2 || res.Hits[0] != want[0] || res.Hits[1] != want[1] {
				t.Fatalf("hits %+v", res.Hits)
			}
		})
	}
}

func TestFallbackFromMalformedAnswer(t *testing.T) {
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<html>not json</html>")
	}))
	defer bad.Close()
	var eh atomic.Int64
	s := New(Options{NoEnv: true, BraveAPIKey: braveKey, BraveBaseURL: bad.URL, ExaAPIKey: exaKey, ExaBaseURL: exaServer(t, 200, &eh).URL})
	res, err := s.Search(context.Background(), Query{Q: "q"})
	if err != nil || res.Via != "exa" {
		t.Fatalf("%v %+v", err, res)
	}
}

func TestAllSourcesFail(t *testing.T) {
	var bh, eh atomic.Int64
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close() // connection refused
	tests := []struct {
		name          string
		brave, exa    string
		limited, auth bool
	}{
		{"rate limited", braveServer(t, 429, &bh).URL, exaServer(t, 429, &eh).URL, true, false},
		{"auth", braveServer(t, 403, &bh).URL, exaServer(t, 401, &eh).URL, false, true},
		{"mixed", braveServer(t, 500, &bh).URL, gone.URL, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Options{NoEnv: true, BraveAPIKey: braveKey, BraveBaseURL: tc.brave, ExaAPIKey: exaKey, ExaBaseURL: tc.exa})
			_, err := s.Search(context.Background(), Query{Q: "q"})
			var se *SourcesError
			if !errors.As(err, &se) || len(se.Failures) != 2 {
				t.Fatalf("err = %v", err)
			}
			if se.RateLimited() != tc.limited || se.Auth() != tc.auth {
				t.Fatalf("limited %v auth %v", se.RateLimited(), se.Auth())
			}
			msg := err.Error()
			for _, f := range se.Failures {
				msg += " " + f.Err.Error()
			}
			if strings.Contains(msg, braveKey) || strings.Contains(msg, exaKey) {
				t.Fatalf("key in error: %s", msg)
			}
		})
	}
}

func TestCancelledCallIsNotHandedOn(t *testing.T) {
	started := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done()
	}))
	defer slow.Close()
	var eh atomic.Int64
	s := New(Options{NoEnv: true, BraveAPIKey: braveKey, BraveBaseURL: slow.URL, ExaAPIKey: exaKey, ExaBaseURL: exaServer(t, 200, &eh).URL})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	_, err := s.Search(ctx, Query{Q: "q"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if eh.Load() != 0 {
		t.Fatal("a cancelled call was handed to the next source")
	}
}

func TestNoSource(t *testing.T) {
	t.Setenv(EnvBraveAPIKey, "")
	t.Setenv(EnvExaAPIKey, "")
	_, err := New(Options{}).Search(context.Background(), Query{Q: "q"})
	if !errors.Is(err, ErrNoSource) {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(err.Error(), "BRAVE_API_KEY") || !strings.Contains(err.Error(), "EXA_API_KEY") {
		t.Fatalf("message does not name the variables: %v", err)
	}
}

func TestKeysFromEnvironment(t *testing.T) {
	var bh atomic.Int64
	t.Setenv(EnvBraveAPIKey, braveKey)
	t.Setenv(EnvExaAPIKey, "")
	s := New(Options{BraveBaseURL: braveServer(t, 200, &bh).URL})
	if got := s.Sources(); len(got) != 1 || got[0] != "brave" {
		t.Fatalf("Sources = %v", got)
	}
	if res, err := s.Search(context.Background(), Query{Q: "q"}); err != nil || res.Via != "brave" {
		t.Fatalf("%v %+v", err, res)
	}
	if got := New(Options{NoEnv: true}).Sources(); len(got) != 0 {
		t.Fatalf("NoEnv read the environment: %v", got)
	}
}

type staticSource struct{ hits []Hit }

func (s staticSource) Name() string { return "provider" }
func (s staticSource) Search(context.Context, string, int) ([]Hit, error) {
	return s.hits, nil
}

func TestExtraSourceAfterBuiltins(t *testing.T) {
	var bh atomic.Int64
	s := New(Options{
		NoEnv: true, BraveAPIKey: braveKey, BraveBaseURL: braveServer(t, 503, &bh).URL,
		Extra: []Source{staticSource{hits: []Hit{{Title: "P", URL: "https://p.test/x", Snippet: "Bearer abcdefghijklmnop"}}}},
	})
	res, err := s.Search(context.Background(), Query{Q: "q"})
	if err != nil || res.Via != "provider" {
		t.Fatalf("%v %+v", err, res)
	}
	if res.Hits[0].Snippet != "Bearer [redacted]" {
		t.Fatalf("snippet not redacted: %q", res.Hits[0].Snippet)
	}
}

func TestQueryValidation(t *testing.T) {
	s := New(Options{NoEnv: true, Extra: []Source{staticSource{}}})
	for _, q := range []Query{
		{Q: ""},
		{Q: "   "},
		{Q: strings.Repeat("a", MaxQueryChars+1)},
		{Q: "ok", N: MaxN + 1},
		{Q: "ok", N: -1},
	} {
		if _, err := s.Search(context.Background(), q); !errors.Is(err, ErrInvalidQuery) {
			t.Errorf("%q n=%d: err = %v", q.Q, q.N, err)
		}
	}
	if _, err := s.Search(context.Background(), Query{Q: strings.Repeat("é", MaxQueryChars), N: MaxN}); err != nil {
		t.Fatalf("boundary query refused: %v", err)
	}
}

func FuzzPlain(f *testing.F) {
	f.Add("[a](b) ![c](d) <b>x</b> &amp; [e][f]")
	f.Add("[[[(((")
	f.Fuzz(func(t *testing.T, s string) {
		out := clip(plain(s), MaxSnippetChar)
		if utf8.RuneCountInString(out) > MaxSnippetChar || !utf8.ValidString(out) {
			t.Fatalf("bad snippet %q", out)
		}
	})
}
