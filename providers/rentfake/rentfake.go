// Package rentfake is the providers' test kit: loopback stand-ins for the
// browser-renting services (Browserbase, Kernel). Each follows the service's
// documented REST API (endpoints, request and answer shapes, status codes,
// pagination, release that completes a little after it is asked) and backs
// every session with a real local Chromium, whose DevTools address is the
// session's connect URL: the whole tool flow runs on them.
package rentfake

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"time"

	"github.com/durable-browser/durable-browser/providers"
	"github.com/durable-browser/durable-browser/providers/local"
)

// Browsers starts and ends the Chromiums behind fake sessions.
type Browsers interface {
	Create(ctx context.Context, o providers.CreateOptions) (*providers.Session, error)
	Release(ctx context.Context, tag string) error
}

// NewBrowsers is a local provider rooted at dir, for a fake's sessions.
func NewBrowsers(dir string) (*local.Provider, error) {
	return local.New(local.Options{ProfileRoot: dir, BootID: "rentfake"})
}

// Faults lets a test make the next requests fail as the service would.
type Faults struct {
	mu sync.Mutex
	// status answers the next n requests with this code.
	status, n  int
	retryAfter string
}

// FailNext answers the next n requests with status (and a Retry-After
// header, when given).
func (f *Faults) FailNext(n, status int, retryAfter string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n, f.status, f.retryAfter = n, status, retryAfter
}

func (f *Faults) take(w http.ResponseWriter) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n <= 0 {
		return false
	}
	f.n--
	if f.retryAfter != "" {
		w.Header().Set("Retry-After", f.retryAfter)
	}
	writeJSON(w, f.status, map[string]any{"message": http.StatusText(f.status)})
	return true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"statusCode": status, "error": http.StatusText(status), "message": msg})
}

// server is what both fakes share.
type server struct {
	Faults
	srv    *httptest.Server
	source Browsers
	mu     sync.Mutex
	seq    int
	// Requests counts requests by "METHOD /pattern".
	requests map[string]int
	// PollsBeforeGone is how many status reads after a release still show
	// the session (default 2): clients must poll.
	PollsBeforeGone int
}

func (s *server) count(key string) {
	s.mu.Lock()
	s.requests[key]++
	s.mu.Unlock()
}

// Requests is how many requests matched pattern ("POST /v1/sessions").
func (s *server) Requests(pattern string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[pattern]
}

// URL is the fake's base URL.
func (s *server) URL() string { return s.srv.URL }

// Close stops the server and ends every browser still running.
func (s *server) Close() { s.srv.Close() }

func (s *server) nextID(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return fmt.Sprintf("%s-%d-%d", prefix, time.Now().UnixNano()%1e6, s.seq)
}

func atoi(s string, def int) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	return def
}
