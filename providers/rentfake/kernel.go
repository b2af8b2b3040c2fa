package rentfake

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/durable-browser/durable-browser/providers"
)

// Kernel is a loopback Kernel API (browsers).
type Kernel struct {
	server
	Key string
	// Profiles are the named profiles that exist (Kernel's must be made
	// beforehand).
	Profiles []string
	// LiveViewSecret is put in every live view URL.
	LiveViewSecret string

	kmu   sync.Mutex
	all   map[string]*kBrowser
	order []string
}

type kBrowser struct {
	SessionID      string     `json:"session_id"`
	CDPWSURL       string     `json:"cdp_ws_url"`
	WebdriverWSURL string     `json:"webdriver_ws_url"`
	LiveViewURL    string     `json:"browser_live_view_url,omitempty"`
	CreatedAt      time.Time  `json:"created_at"`
	DeletedAt      *time.Time `json:"deleted_at,omitempty"`
	Headless       bool       `json:"headless"`
	Stealth        bool       `json:"stealth"`
	TimeoutSeconds int        `json:"timeout_seconds"`
	Persistence    *struct {
		ID string `json:"id"`
	} `json:"persistence,omitempty"`
	Profile *struct {
		Name string `json:"name"`
	} `json:"profile,omitempty"`

	Body     map[string]any `json:"-"`
	deleting bool
	polls    int
}

// NewKernel serves a fake Kernel on loopback.
func NewKernel(browsers Browsers, key string) *Kernel {
	f := &Kernel{Key: key, LiveViewSecret: "kernel-live-view-secret-91c2", all: map[string]*kBrowser{}}
	f.source, f.requests, f.PollsBeforeGone = browsers, map[string]int{}, 2
	mux := http.NewServeMux()
	mux.HandleFunc("POST /browsers", f.create)
	mux.HandleFunc("GET /browsers", f.list)
	mux.HandleFunc("GET /browsers/{id}", f.get)
	mux.HandleFunc("DELETE /browsers/{id}", f.delete)
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pattern := mux.Handler(r)
		f.count(pattern)
		if r.Header.Get("Authorization") != "Bearer "+f.Key {
			fail(w, http.StatusUnauthorized, "unauthorized")
			return
		}
		if f.take(w) {
			return
		}
		mux.ServeHTTP(w, r)
	}))
	return f
}

// Close ends the server and every browser.
func (f *Kernel) Close() {
	f.srv.Close()
	f.kmu.Lock()
	ids := slices.Clone(f.order)
	f.kmu.Unlock()
	for _, id := range ids {
		_ = f.source.Release(context.Background(), id)
	}
}

// Active counts the browsers not deleted.
func (f *Kernel) Active() int {
	f.kmu.Lock()
	defer f.kmu.Unlock()
	n := 0
	for _, b := range f.all {
		if b.DeletedAt == nil {
			n++
		}
	}
	return n
}

// CreateBodies are the bodies of the creates that made a browser.
func (f *Kernel) CreateBodies() []map[string]any {
	f.kmu.Lock()
	defer f.kmu.Unlock()
	var out []map[string]any
	for _, id := range f.order {
		out = append(out, f.all[id].Body)
	}
	return out
}

// Fill adds n idle browsers under other persistence ids, so a find must
// page through the list.
func (f *Kernel) Fill(n int) {
	f.kmu.Lock()
	defer f.kmu.Unlock()
	for i := 0; i < n; i++ {
		id := "filler-" + strconv.Itoa(i)
		b := &kBrowser{SessionID: id, CreatedAt: time.Now().UTC(), CDPWSURL: "ws://127.0.0.1:1/devtools/browser/none", TimeoutSeconds: 60}
		b.Persistence = &struct {
			ID string `json:"id"`
		}{ID: "other-" + strconv.Itoa(i)}
		f.all[id] = b
		f.order = append(f.order, id)
	}
}

func (f *Kernel) create(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		fail(w, http.StatusBadRequest, "invalid JSON body")
		return
	}
	timeout := 60
	if t, ok := body["timeout_seconds"].(float64); ok {
		if t < 10 || t > 259200 {
			fail(w, http.StatusBadRequest, "timeout_seconds must be between 10 and 259200")
			return
		}
		timeout = int(t)
	}
	var persist string
	if p, ok := body["persistence"].(map[string]any); ok {
		persist, _ = p["id"].(string)
	}
	var profile string
	if p, ok := body["profile"].(map[string]any); ok {
		profile, _ = p["name"].(string)
		if !slices.Contains(f.Profiles, profile) {
			fail(w, http.StatusNotFound, "profile not found")
			return
		}
	}
	f.kmu.Lock()
	for _, id := range f.order {
		// Kernel returns the running browser of a persistence id.
		if b := f.all[id]; persist != "" && b.DeletedAt == nil && b.Persistence != nil && b.Persistence.ID == persist {
			f.kmu.Unlock()
			writeJSON(w, http.StatusOK, b)
			return
		}
	}
	f.kmu.Unlock()
	id := f.nextID("kb")
	br, err := f.source.Create(r.Context(), providers.CreateOptions{Tag: id})
	if err != nil {
		fail(w, http.StatusInternalServerError, "could not start a browser")
		return
	}
	headless, _ := body["headless"].(bool)
	stealth, _ := body["stealth"].(bool)
	b := &kBrowser{SessionID: id, CDPWSURL: br.CDPURL, WebdriverWSURL: "wss://fake/webdriver/" + id, CreatedAt: time.Now().UTC(),
		Headless: headless, Stealth: stealth, TimeoutSeconds: timeout, Body: body}
	if !headless {
		b.LiveViewURL = "https://live.onkernel.com/" + id + "?token=" + f.LiveViewSecret
	}
	if persist != "" {
		b.Persistence = &struct {
			ID string `json:"id"`
		}{ID: persist}
	}
	if profile != "" {
		b.Profile = &struct {
			Name string `json:"name"`
		}{Name: profile}
	}
	f.kmu.Lock()
	f.all[id] = b
	f.order = append(f.order, id)
	f.kmu.Unlock()
	writeJSON(w, http.StatusOK, b)
}

func (f *Kernel) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, offset := atoi(q.Get("limit"), 20), atoi(q.Get("offset"), 0)
	if limit < 1 || limit > 100 || offset < 0 {
		fail(w, http.StatusBadRequest, "limit must be 1..100 and offset >= 0")
		return
	}
	status := q.Get("status")
	f.kmu.Lock()
	defer f.kmu.Unlock()
	var match []kBrowser
	for _, id := range f.order {
		b := f.all[id]
		f.pollLocked(b)
		deleted := b.DeletedAt != nil
		if (status == "" || status == "active") && deleted || status == "deleted" && !deleted {
			continue
		}
		match = append(match, *b)
	}
	page := []kBrowser{}
	if offset < len(match) {
		page = match[offset:min(len(match), offset+limit)]
	}
	more := offset+len(page) < len(match)
	w.Header().Set("X-Has-More", strconv.FormatBool(more))
	w.Header().Set("X-Next-Offset", strconv.Itoa(offset+len(page)))
	writeJSON(w, http.StatusOK, page)
}

// pollLocked advances a deleted browser: it stays for PollsBeforeGone reads.
func (f *Kernel) pollLocked(b *kBrowser) {
	if !b.deleting || b.DeletedAt != nil {
		return
	}
	b.polls++
	if b.polls <= f.PollsBeforeGone {
		return
	}
	_ = f.source.Release(context.Background(), b.SessionID)
	now := time.Now().UTC()
	b.DeletedAt = &now
}

func (f *Kernel) get(w http.ResponseWriter, r *http.Request) {
	f.kmu.Lock()
	defer f.kmu.Unlock()
	b, ok := f.all[r.PathValue("id")]
	if ok {
		f.pollLocked(b)
	}
	if !ok || b.DeletedAt != nil && r.URL.Query().Get("include_deleted") != "true" {
		fail(w, http.StatusNotFound, "browser not found")
		return
	}
	writeJSON(w, http.StatusOK, b)
}

func (f *Kernel) delete(w http.ResponseWriter, r *http.Request) {
	f.kmu.Lock()
	defer f.kmu.Unlock()
	b, ok := f.all[r.PathValue("id")]
	if !ok || b.DeletedAt != nil {
		fail(w, http.StatusNotFound, "browser not found")
		return
	}
	b.deleting = true
	w.WriteHeader(http.StatusNoContent)
}

// ConnectURLs are the connect URLs of every session made (credentials).
func (f *Kernel) ConnectURLs() []string {
	f.kmu.Lock()
	defer f.kmu.Unlock()
	var out []string
	for _, id := range f.order {
		out = append(out, f.all[id].CDPWSURL)
	}
	return out
}
