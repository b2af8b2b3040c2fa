// Package browserbase is the provider that rents browsers from Browserbase
// through its REST API (https://api.browserbase.com/v1). A session is one
// Browserbase session, created with the durable-browser tag in its
// userMetadata and keepAlive on, so it outlives the worker that drives it:
// any worker finds it by tag through the list endpoint and attaches through
// its connect URL. Release asks Browserbase to release the session and polls
// its status until it has ended.
package browserbase

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/tags"
	"github.com/durable-browser/durable-browser/providers"
	"github.com/durable-browser/durable-browser/providers/remote"
)

// Name is the provider's name in sessions and configuration.
const Name = "browserbase"

// Environment variables holding the credentials.
const (
	EnvAPIKey    = "BROWSERBASE_API_KEY"
	EnvProjectID = "BROWSERBASE_PROJECT_ID"
	// EnvBaseURL overrides the API's address (tests, proxies).
	EnvBaseURL = "BROWSERBASE_BASE_URL"
)

// DefaultBaseURL is Browserbase's public API.
const DefaultBaseURL = "https://api.browserbase.com"

// DefaultConnectURL is Browserbase's CDP gateway.
const DefaultConnectURL = "wss://connect.browserbase.com"

// MaxTagLen bounds the tag (tags.Valid holds every tag to it): it travels in
// userMetadata, which Browserbase caps at 512 characters as JSON, and a query
// on it must stay short.
const MaxTagLen = 60

// metaKey is the userMetadata field holding the tag.
const metaKey = "durableBrowserTag"

// metaOptions holds the session's options (JSON) so a later create that
// finds the session can compare them.
const metaOptions = "durableBrowserOptions"

// Regions Browserbase runs sessions in.
var Regions = []string{"us-west-2", "us-east-1", "eu-central-1", "ap-southeast-1"}

// Options configures the provider.
type Options struct {
	APIKey    string
	ProjectID string
	// BaseURL defaults to DefaultBaseURL.
	BaseURL string
	// ConnectURL is where a session found without a connect URL is reached
	// (default DefaultConnectURL).
	ConnectURL string
	// Lifetime is a session's maximum life, sent as its timeout: Browserbase
	// ends it then even if nobody released it (default 1h; 60s to 6h).
	Lifetime time.Duration
	// Region is one of Regions ("" lets Browserbase choose).
	Region string
	// Proxies turns on Browserbase's residential proxies.
	Proxies bool
	// AdvancedStealth asks for Browserbase's advanced stealth mode (Scale
	// plan) when a session asks for stealth; otherwise stealth is the
	// driver's own.
	AdvancedStealth bool
	// ReleaseTimeout bounds release's wait for the session to end
	// (default 30s).
	ReleaseTimeout time.Duration
	HTTP           *http.Client
	Logger         zerolog.Logger
}

// FromEnv fills the key, project and base URL from the environment; a
// missing key or project is an error naming the variable.
func FromEnv(o Options, getenv func(string) string) (Options, error) {
	err := remote.FromEnv(Name, getenv, map[string]*string{EnvAPIKey: &o.APIKey, EnvProjectID: &o.ProjectID, EnvBaseURL: &o.BaseURL}, EnvAPIKey, EnvProjectID)
	return o, err
}

// Provider rents Browserbase sessions. It keeps nothing about them: the
// service's userMetadata is the state. The shared rental lifecycle answers
// Create, Find and Release.
type Provider struct {
	*remote.Rental[session]
	o Options
}

var _ providers.Provider = (*Provider)(nil)

// New checks the options; the service is first contacted on use.
func New(o Options) (*Provider, error) {
	if o.APIKey != "" && o.ProjectID == "" {
		return nil, remote.MissingKey(Name, EnvProjectID)
	}
	c, err := remote.Account{Provider: Name, Key: o.APIKey, KeyEnv: EnvAPIKey, BaseURL: o.BaseURL, Default: DefaultBaseURL, HTTP: o.HTTP,
		Auth: func(r *http.Request, key string) { r.Header.Set("X-BB-API-Key", key) }}.Client()
	if err != nil {
		return nil, err
	}
	o.BaseURL = c.Base
	if o.ConnectURL == "" {
		o.ConnectURL = DefaultConnectURL
	}
	if o.Lifetime == 0 {
		o.Lifetime = time.Hour
	}
	if o.Lifetime < time.Minute || o.Lifetime > 6*time.Hour {
		return nil, fmt.Errorf("browserbase: session lifetime must be between 1m and 6h, not %s", o.Lifetime)
	}
	if o.Region != "" && !slices.Contains(Regions, o.Region) {
		return nil, fmt.Errorf("browserbase: region %q is not one of %s", o.Region, strings.Join(Regions, ", "))
	}
	p := &Provider{o: o}
	p.Rental = remote.NewRental[session](bbAPI{p}, c, o.Logger, o.ReleaseTimeout)
	return p, nil
}

// Name returns "browserbase".
func (p *Provider) Name() string { return Name }

// Capabilities: proxies and stealth are the service's; the live view is
// Browserbase's debugger page.
func (p *Provider) Capabilities() providers.Capabilities {
	return providers.Capabilities{Proxies: true, LiveView: true, Stealth: true}
}

// session is the part of Browserbase's Session object the provider reads.
type session struct {
	ID           string          `json:"id"`
	Status       string          `json:"status"`
	ConnectURL   string          `json:"connectUrl"`
	CreatedAt    time.Time       `json:"createdAt"`
	StartedAt    time.Time       `json:"startedAt"`
	EndedAt      *time.Time      `json:"endedAt"`
	UserMetadata json.RawMessage `json:"userMetadata"`
}

// meta reads the tag and options from the session's userMetadata.
func (s session) meta() (tag string, made *contract.SessionOptions) {
	var m map[string]any
	if json.Unmarshal(s.UserMetadata, &m) != nil {
		return "", nil
	}
	tag, _ = m[metaKey].(string)
	if o, ok := m[metaOptions].(string); ok {
		var so contract.SessionOptions
		if json.Unmarshal([]byte(o), &so) == nil {
			made = &so
		}
	}
	return tag, made
}

func checkTag(tag string) error {
	if err := tags.Valid(tag); err != nil {
		return err
	}
	if len(tag) > MaxTagLen {
		return fmt.Errorf("%w: a browserbase session tag is at most %d characters", tags.ErrInvalid, MaxTagLen)
	}
	return nil
}

// find lists the project's running sessions whose userMetadata carries the
// tag. Browserbase's list endpoint filters by status and by a query on
// userMetadata; the tag is checked again here.
func (p *Provider) find(ctx context.Context, tag string) ([]session, error) {
	q := url.Values{}
	q.Set("status", "RUNNING")
	q.Set("q", fmt.Sprintf("user_metadata['%s']:'%s'", metaKey, tag))
	var all []session
	if _, err := p.C.Do(ctx, "list sessions", http.MethodGet, "/v1/sessions?"+q.Encode(), nil, &all); err != nil {
		return nil, err
	}
	var out []session
	for _, s := range all {
		if t, _ := s.meta(); t != tag || s.Status != "RUNNING" {
			continue
		}
		if s.ConnectURL == "" {
			// A listed session may carry no connect URL: read the session;
			// failing that, connect as Browserbase documents for a
			// kept-alive session (key and session id).
			var got session
			if _, err := p.C.Do(ctx, "get session", http.MethodGet, "/v1/sessions/"+url.PathEscape(s.ID), nil, &got); err == nil && got.ConnectURL != "" {
				s.ConnectURL = got.ConnectURL
			} else {
				s.ConnectURL = p.o.ConnectURL + "?" + url.Values{"apiKey": {p.o.APIKey}, "sessionId": {s.ID}}.Encode()
			}
		}
		out = append(out, s)
	}
	return out, nil
}

func (p *Provider) toSession(s session, tag string) *providers.Session {
	_, made := s.meta()
	out := &providers.Session{Tag: tag, Provider: Name, CDPURL: s.ConnectURL, Made: made, RemoteID: s.ID, StartedAt: s.CreatedAt}
	if !s.StartedAt.IsZero() {
		out.StartedAt = s.StartedAt
	}
	if made != nil {
		out.Stealth = made.Stealth
	}
	return out
}

// liveView asks for the session's debugger page (a credential: it goes to
// the handoff port only). Failing to get it is not fatal.
func (p *Provider) liveView(ctx context.Context, id string) string {
	var d struct {
		FullscreenURL string `json:"debuggerFullscreenUrl"`
		URL           string `json:"debuggerUrl"`
	}
	if _, err := p.C.Do(ctx, "session live view", http.MethodGet, "/v1/sessions/"+url.PathEscape(id)+"/debug", nil, &d); err != nil {
		p.Log.Warn().Err(err).Msg("no live view for the session")
		return ""
	}
	if d.FullscreenURL != "" {
		return d.FullscreenURL
	}
	return d.URL
}

// bbAPI is Browserbase's side of the rental lifecycle.
type bbAPI struct{ p *Provider }

func (bbAPI) CheckTag(tag string) error { return checkTag(tag) }

func (bbAPI) Refuse(o providers.CreateOptions) error {
	if o.Profile != nil {
		return fmt.Errorf("saved profiles are %w: Browserbase keeps state in its own contexts; use the local provider for profiles", providers.ErrUnsupported)
	}
	if o.Proxy != "" {
		return fmt.Errorf("per-session proxies are %w: turn on Browserbase proxies for the worker (--browserbase-proxies)", providers.ErrUnsupported)
	}
	return nil
}

func (a bbAPI) List(ctx context.Context, tag string) ([]session, error) {
	return a.p.find(ctx, tag)
}

func (a bbAPI) Session(s session, tag string) *providers.Session {
	return a.p.toSession(s, tag)
}

func (a bbAPI) Reuse(ctx context.Context, s session, o providers.CreateOptions) *providers.Session {
	out := a.p.toSession(s, o.Tag)
	out.LiveViewURL = a.p.liveView(ctx, s.ID)
	return out
}

// Start creates a kept-alive session with the tag (and the options it was
// asked with) in its userMetadata.
func (a bbAPI) Start(ctx context.Context, o providers.CreateOptions) (*providers.Session, error) {
	p := a.p
	meta := map[string]string{metaKey: o.Tag}
	if o.Session != nil {
		if b, err := json.Marshal(o.Session); err == nil && len(b) < 400 {
			meta[metaOptions] = string(b)
		}
	}
	body := map[string]any{
		"projectId":    p.o.ProjectID,
		"keepAlive":    true,
		"timeout":      int(p.o.Lifetime / time.Second),
		"userMetadata": meta,
	}
	if p.o.Region != "" {
		body["region"] = p.o.Region
	}
	if p.o.Proxies {
		body["proxies"] = true
	}
	if o.Stealth && p.o.AdvancedStealth {
		body["browserSettings"] = map[string]any{"advancedStealth": true}
	}
	var s session
	if _, err := p.C.Do(ctx, "create session", http.MethodPost, "/v1/sessions", body, &s); err != nil {
		return nil, err
	}
	if s.ID == "" || s.ConnectURL == "" {
		return nil, remote.StatusError(Name, "create session", 0, 0, "the answer had no id or connect URL")
	}
	p.Log.Info().Str("session", o.Tag).Str("browserbase_session", s.ID).Msg("created a Browserbase session")
	out := p.toSession(s, o.Tag)
	out.Made = o.Session
	out.Stealth = o.Stealth
	out.LiveViewURL = p.liveView(ctx, s.ID)
	return out, nil
}

// End requests the session's release and polls its status, backing off,
// until it is no longer running; it answers how long the session ran, by
// Browserbase's own start and end times when it gives them.
func (a bbAPI) End(ctx context.Context, s session, tag string) (time.Duration, error) {
	p := a.p
	path := "/v1/sessions/" + url.PathEscape(s.ID)
	body := map[string]any{"projectId": p.o.ProjectID, "status": "REQUEST_RELEASE"}
	if _, err := p.C.Do(ctx, "release session", http.MethodPost, path, body, nil); err != nil {
		return 0, err
	}
	var end time.Time
	err := remote.Await(ctx, Name, "session still running after release was requested", func() (bool, error) {
		var got session
		_, err := p.C.Do(ctx, "session status", http.MethodGet, path, nil, &got)
		switch {
		case remote.NotFound(err):
			end = time.Now()
		case err != nil:
			return false, err
		case got.Status != "RUNNING" && got.Status != "PENDING":
			end = time.Now()
			if got.EndedAt != nil {
				end = *got.EndedAt
			}
		default:
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return 0, err
	}
	p.Log.Info().Str("session", tag).Str("browserbase_session", s.ID).Msg("released the Browserbase session")
	start := s.StartedAt
	if start.IsZero() {
		start = s.CreatedAt
	}
	if start.IsZero() || !end.After(start) {
		return 0, nil
	}
	return end.Sub(start), nil
}
