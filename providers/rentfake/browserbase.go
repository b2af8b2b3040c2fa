package rentfake

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"time"
)

// Browserbase is a loopback Browserbase API (v1 sessions).
type Browserbase struct {
	server[*bbSession]
	Key, Project string
	// LiveViewSecret is put in every debugger URL, so a test can look for
	// it where it must not be.
	LiveViewSecret string
}

type bbSession struct {
	ID           string          `json:"id"`
	CreatedAt    time.Time       `json:"createdAt"`
	StartedAt    time.Time       `json:"startedAt"`
	EndedAt      *time.Time      `json:"endedAt,omitempty"`
	UpdatedAt    time.Time       `json:"updatedAt"`
	ProjectID    string          `json:"projectId"`
	Status       string          `json:"status"`
	KeepAlive    bool            `json:"keepAlive"`
	Region       string          `json:"region"`
	ProxyBytes   int             `json:"proxyBytes"`
	ExpiresAt    time.Time       `json:"expiresAt"`
	ConnectURL   string          `json:"connectUrl,omitempty"`
	UserMetadata json.RawMessage `json:"userMetadata,omitempty"`

	// What the create asked for, for tests.
	Body      map[string]any `json:"-"`
	polls     int
	releasing bool
}

func (s *bbSession) createBody() map[string]any { return s.Body }
func (s *bbSession) connectURL() string         { return s.ConnectURL }

// NewBrowserbase serves a fake Browserbase on loopback; Close ends it and
// every browser it started.
func NewBrowserbase(browsers Browsers, key, project string) *Browserbase {
	f := &Browserbase{Key: key, Project: project, LiveViewSecret: "bb-live-view-secret-7f3a"}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/sessions", f.create)
	mux.HandleFunc("GET /v1/sessions", f.list)
	mux.HandleFunc("GET /v1/sessions/{id}", f.get)
	mux.HandleFunc("POST /v1/sessions/{id}", f.update)
	mux.HandleFunc("GET /v1/sessions/{id}/debug", f.debug)
	f.serve(browsers, mux, func(r *http.Request) bool { return r.Header.Get("X-BB-API-Key") == f.Key }, "Unauthorized")
	return f
}

// Session is a copy of the session with that id (nil if none).
func (f *Browserbase) Session(id string) *bbSession {
	f.smu.Lock()
	defer f.smu.Unlock()
	if s, ok := f.sessions[id]; ok {
		c := *s
		return &c
	}
	return nil
}

// Running counts the sessions running now.
func (f *Browserbase) Running() int {
	return f.alive(func(s *bbSession) bool { return s.Status == "RUNNING" })
}

var bbRegions = []string{"us-west-2", "us-east-1", "eu-central-1", "ap-southeast-1"}

func (f *Browserbase) create(w http.ResponseWriter, r *http.Request) {
	body, ok := createBody(w, r)
	if !ok {
		return
	}
	if p, _ := body["projectId"].(string); p != f.Project {
		fail(w, http.StatusBadRequest, "projectId is required and must be a project of this key")
		return
	}
	timeout, ok := seconds(w, body, "timeout", 300, 60, 21600, "timeout must be between 60 and 21600 seconds")
	if !ok {
		return
	}
	region := "us-west-2"
	if rg, ok := body["region"].(string); ok {
		if !slices.Contains(bbRegions, rg) {
			fail(w, http.StatusBadRequest, "unknown region")
			return
		}
		region = rg
	}
	var meta json.RawMessage
	if m, ok := body["userMetadata"]; ok {
		meta, _ = json.Marshal(m)
		if len(meta) > 512 {
			fail(w, http.StatusBadRequest, "userMetadata must be under 512 characters")
			return
		}
	}
	id, cdpURL, ok := f.launch(w, r, "bb")
	if !ok {
		return
	}
	now := time.Now().UTC()
	keep, _ := body["keepAlive"].(bool)
	s := &bbSession{ID: id, CreatedAt: now, StartedAt: now, UpdatedAt: now, ProjectID: f.Project, Status: "RUNNING",
		KeepAlive: keep, Region: region, ExpiresAt: now.Add(time.Duration(timeout) * time.Second), ConnectURL: cdpURL,
		UserMetadata: meta, Body: body}
	f.add(id, s)
	writeJSON(w, http.StatusCreated, s)
}

// q is Browserbase's metadata query, as its docs give it:
// user_metadata['key']:'value'.
var bbQuery = regexp.MustCompile(`^user_metadata\['([^']+)'\]:'([^']*)'$`)

func (f *Browserbase) list(w http.ResponseWriter, r *http.Request) {
	status := r.URL.Query().Get("status")
	var key, val string
	if q := r.URL.Query().Get("q"); q != "" {
		m := bbQuery.FindStringSubmatch(q)
		if m == nil {
			fail(w, http.StatusBadRequest, "invalid query")
			return
		}
		key, val = m[1], m[2]
	}
	f.smu.Lock()
	defer f.smu.Unlock()
	out := []bbSession{}
	for _, id := range f.order {
		s := f.sessions[id]
		if status != "" && s.Status != status {
			continue
		}
		if key != "" {
			var m map[string]any
			_ = json.Unmarshal(s.UserMetadata, &m)
			if v, _ := m[key].(string); v != val {
				continue
			}
		}
		c := *s
		// The list's sessions carry no connect URL; a get does.
		c.ConnectURL = ""
		out = append(out, c)
	}
	writeJSON(w, http.StatusOK, out)
}

// poll advances a released session: it shows RUNNING for PollsBeforeGone
// reads, then its browser ends and it is COMPLETED.
func (f *Browserbase) poll(s *bbSession) {
	if !s.releasing || s.Status != "RUNNING" {
		return
	}
	if now, ok := f.ended(s.ID, &s.polls); ok {
		s.Status, s.EndedAt, s.UpdatedAt = "COMPLETED", &now, now
	}
}

// lookupLocked is the path's session, or false with 404 answered; f.smu
// is held.
func (f *Browserbase) lookupLocked(w http.ResponseWriter, r *http.Request) (*bbSession, bool) {
	s, ok := f.sessions[r.PathValue("id")]
	if !ok {
		fail(w, http.StatusNotFound, "Session not found")
	}
	return s, ok
}

func (f *Browserbase) get(w http.ResponseWriter, r *http.Request) {
	f.smu.Lock()
	defer f.smu.Unlock()
	s, ok := f.lookupLocked(w, r)
	if !ok {
		return
	}
	f.poll(s)
	writeJSON(w, http.StatusOK, s)
}

func (f *Browserbase) update(w http.ResponseWriter, r *http.Request) {
	var body struct {
		ProjectID string `json:"projectId"`
		Status    string `json:"status"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.ProjectID != f.Project || body.Status != "REQUEST_RELEASE" {
		fail(w, http.StatusBadRequest, "projectId and status REQUEST_RELEASE are required")
		return
	}
	f.smu.Lock()
	defer f.smu.Unlock()
	s, ok := f.lookupLocked(w, r)
	if !ok {
		return
	}
	if s.Status == "RUNNING" {
		s.releasing = true
	}
	writeJSON(w, http.StatusOK, s)
}

func (f *Browserbase) debug(w http.ResponseWriter, r *http.Request) {
	f.smu.Lock()
	s, ok := f.lookupLocked(w, r)
	f.smu.Unlock()
	if !ok {
		return
	}
	live := "https://www.browserbase.com/devtools-fullscreen/inspector.html?wss=connect.browserbase.com/debug/" + s.ID + "?token=" + f.LiveViewSecret
	writeJSON(w, http.StatusOK, map[string]any{
		"debuggerFullscreenUrl": live,
		"debuggerUrl":           live + "&navbar=1",
		"wsUrl":                 "wss://connect.browserbase.com/debug/" + s.ID,
		"pages":                 []any{},
	})
}
