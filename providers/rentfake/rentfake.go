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
	"slices"
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

// createBody reads a create request's JSON object; one that is not
// answers 400, and ok is false.
func createBody(w http.ResponseWriter, r *http.Request) (body map[string]any, ok bool) {
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		fail(w, http.StatusBadRequest, "invalid JSON body")
		return nil, false
	}
	return body, true
}

// seconds reads body[key], a whole number of seconds in [min, max] (def
// when absent); one out of range answers 400 with the service's message,
// and ok is false.
func seconds(w http.ResponseWriter, body map[string]any, key string, def, min, max int, msg string) (n int, ok bool) {
	t, given := body[key].(float64)
	if !given {
		return def, true
	}
	if t < float64(min) || t > float64(max) {
		fail(w, http.StatusBadRequest, msg)
		return 0, false
	}
	return int(t), true
}

// record is a fake's session object, as the shared server reads it.
type record interface {
	// createBody is what the create asked for (nil for a filler).
	createBody() map[string]any
	// connectURL is where the session's browser is reached (a credential).
	connectURL() string
}

// server is what both fakes share: the loopback server with its faults and
// counters, and the sessions in the order they were made.
type server[S record] struct {
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

	// smu guards sessions and order.
	smu      sync.Mutex
	sessions map[string]S
	order    []string
}

// alive counts the sessions alive says are.
func (s *server[S]) alive(alive func(S) bool) int {
	s.smu.Lock()
	defer s.smu.Unlock()
	n := 0
	for _, v := range s.sessions {
		if alive(v) {
			n++
		}
	}
	return n
}

// serve starts the server on loopback: a request authorized refuses gets
// 401 with deny, one a fault takes gets the fault, the rest go to mux.
func (s *server[S]) serve(source Browsers, mux *http.ServeMux, authorized func(*http.Request) bool, deny string) {
	s.source, s.requests, s.PollsBeforeGone, s.sessions = source, map[string]int{}, 2, map[string]S{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pattern := mux.Handler(r)
		s.count(pattern)
		if !authorized(r) {
			fail(w, http.StatusUnauthorized, deny)
			return
		}
		if s.take(w) {
			return
		}
		mux.ServeHTTP(w, r)
	}))
}

func (s *server[S]) count(key string) {
	s.mu.Lock()
	s.requests[key]++
	s.mu.Unlock()
}

// Requests is how many requests matched pattern ("POST /v1/sessions").
func (s *server[S]) Requests(pattern string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[pattern]
}

// URL is the fake's base URL.
func (s *server[S]) URL() string { return s.srv.URL }

// Close ends the server and every session's browser.
func (s *server[S]) Close() {
	s.srv.Close()
	s.smu.Lock()
	ids := slices.Clone(s.order)
	s.smu.Unlock()
	for _, id := range ids {
		_ = s.source.Release(context.Background(), id)
	}
}

// CreateBodies are the bodies of every session's create, in order.
func (s *server[S]) CreateBodies() []map[string]any {
	s.smu.Lock()
	defer s.smu.Unlock()
	var out []map[string]any
	for _, id := range s.order {
		out = append(out, s.sessions[id].createBody())
	}
	return out
}

// ConnectURLs are the connect URLs of every session made (credentials).
func (s *server[S]) ConnectURLs() []string {
	s.smu.Lock()
	defer s.smu.Unlock()
	var out []string
	for _, id := range s.order {
		out = append(out, s.sessions[id].connectURL())
	}
	return out
}

// addLocked keeps a new session; s.smu is held.
func (s *server[S]) addLocked(id string, v S) {
	s.sessions[id] = v
	s.order = append(s.order, id)
}

// add keeps a new session.
func (s *server[S]) add(id string, v S) {
	s.smu.Lock()
	defer s.smu.Unlock()
	s.addLocked(id, v)
}

// launch starts the browser of a new session, with an id made from
// prefix; on failure it has answered 500.
func (s *server[S]) launch(w http.ResponseWriter, r *http.Request, prefix string) (id, cdpURL string, ok bool) {
	id = s.nextID(prefix)
	b, err := s.source.Create(r.Context(), providers.CreateOptions{Tag: id})
	if err != nil {
		fail(w, http.StatusInternalServerError, "could not start a browser")
		return "", "", false
	}
	return id, b.CDPURL, true
}

// ended ends a released session's browser once it has been polled
// PollsBeforeGone times, answering whether it has.
func (s *server[S]) ended(id string, polls *int) (time.Time, bool) {
	*polls++
	if *polls <= s.PollsBeforeGone {
		return time.Time{}, false
	}
	_ = s.source.Release(context.Background(), id)
	return time.Now().UTC(), true
}

func (s *server[S]) nextID(prefix string) string {
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
