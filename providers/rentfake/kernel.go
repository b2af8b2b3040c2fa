package rentfake

import (
	"net/http"
	"slices"
	"strconv"
	"time"
)

// Kernel is a loopback Kernel API (browsers).
type Kernel struct {
	server[*kBrowser]
	Key string
	// Profiles are the named profiles that exist (Kernel's must be made
	// beforehand).
	Profiles []string
	// LiveViewSecret is put in every live view URL.
	LiveViewSecret string
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

func (b *kBrowser) createBody() map[string]any { return b.Body }
func (b *kBrowser) connectURL() string         { return b.CDPWSURL }

// NewKernel serves a fake Kernel on loopback.
func NewKernel(browsers Browsers, key string) *Kernel {
	f := &Kernel{Key: key, LiveViewSecret: "kernel-live-view-secret-91c2"}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /browsers", f.create)
	mux.HandleFunc("GET /browsers", f.list)
	mux.HandleFunc("GET /browsers/{id}", f.get)
	mux.HandleFunc("DELETE /browsers/{id}", f.delete)
	f.serve(browsers, mux, func(r *http.Request) bool { return r.Header.Get("Authorization") == "Bearer "+f.Key }, "unauthorized")
	return f
}

// Active counts the browsers not deleted.
func (f *Kernel) Active() int {
	return f.alive(func(b *kBrowser) bool { return b.DeletedAt == nil })
}

// Fill adds n idle browsers under other persistence ids, so a find must
// page through the list.
func (f *Kernel) Fill(n int) {
	f.smu.Lock()
	defer f.smu.Unlock()
	for i := 0; i < n; i++ {
		id := "filler-" + strconv.Itoa(i)
		b := &kBrowser{SessionID: id, CreatedAt: time.Now().UTC(), CDPWSURL: "ws://127.0.0.1:1/devtools/browser/none", TimeoutSeconds: 60}
		b.Persistence = &struct {
			ID string `json:"id"`
		}{ID: "other-" + strconv.Itoa(i)}
		f.addLocked(id, b)
	}
}

func (f *Kernel) create(w http.ResponseWriter, r *http.Request) {
	body, ok := createBody(w, r)
	if !ok {
		return
	}
	timeout, ok := seconds(w, body, "timeout_seconds", 60, 10, 259200, "timeout_seconds must be between 10 and 259200")
	if !ok {
		return
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
	f.smu.Lock()
	for _, id := range f.order {
		// Kernel returns the running browser of a persistence id.
		if b := f.sessions[id]; persist != "" && b.DeletedAt == nil && b.Persistence != nil && b.Persistence.ID == persist {
			f.smu.Unlock()
			writeJSON(w, http.StatusOK, b)
			return
		}
	}
	f.smu.Unlock()
	id, cdpURL, ok := f.launch(w, r, "kb")
	if !ok {
		return
	}
	headless, _ := body["headless"].(bool)
	stealth, _ := body["stealth"].(bool)
	b := &kBrowser{SessionID: id, CDPWSURL: cdpURL, WebdriverWSURL: "wss://fake/webdriver/" + id, CreatedAt: time.Now().UTC(),
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
	f.add(id, b)
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
	f.smu.Lock()
	defer f.smu.Unlock()
	var match []kBrowser
	for _, id := range f.order {
		b := f.sessions[id]
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
	if now, ok := f.ended(b.SessionID, &b.polls); ok {
		b.DeletedAt = &now
	}
}

func (f *Kernel) get(w http.ResponseWriter, r *http.Request) {
	f.smu.Lock()
	defer f.smu.Unlock()
	b, ok := f.sessions[r.PathValue("id")]
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
	f.smu.Lock()
	defer f.smu.Unlock()
	b, ok := f.sessions[r.PathValue("id")]
	if !ok || b.DeletedAt != nil {
		fail(w, http.StatusNotFound, "browser not found")
		return
	}
	b.deleting = true
	w.WriteHeader(http.StatusNoContent)
}
