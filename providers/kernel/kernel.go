// Package kernel is the provider that rents browsers from Kernel through its
// REST API (https://api.onkernel.com). A session is one Kernel browser. Kernel
// keeps no free-form labels on a browser; the one per-browser name it keeps,
// returns in its list and honours on create is the persistence id, so the
// tag goes there: creating with a tag whose browser runs returns that
// browser, and any worker finds it by paging through the list. Release
// deletes the browser and waits until Kernel no longer has it.
package kernel

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/rs/zerolog"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/tags"
	"github.com/durable-browser/durable-browser/providers"
	"github.com/durable-browser/durable-browser/providers/remote"
)

// Name is the provider's name in sessions and configuration.
const Name = "kernel"

// Environment variables.
const (
	EnvAPIKey  = "KERNEL_API_KEY"
	EnvBaseURL = "KERNEL_BASE_URL"
)

// DefaultBaseURL is Kernel's public API.
const DefaultBaseURL = "https://api.onkernel.com"

// pageSize is how many browsers one list page asks for (Kernel's maximum).
const pageSize = 100

// Options configures the provider.
type Options struct {
	APIKey string
	// BaseURL defaults to DefaultBaseURL.
	BaseURL string
	// IdleTimeout is how long Kernel keeps a browser nobody is connected to
	// (default 10m; 10s to 72h). It must outlast the longest pause between
	// two calls of a session, or Kernel ends the session in between.
	IdleTimeout time.Duration
	// Headless asks for Kernel's headless image (lighter, no live view).
	Headless bool
	// ReleaseTimeout bounds release's wait for the browser to go (default 30s).
	ReleaseTimeout time.Duration
	HTTP           *http.Client
	Logger         zerolog.Logger
}

// FromEnv fills the key and base URL from the environment; a missing key
// is an error naming the variable.
func FromEnv(o Options, getenv func(string) string) (Options, error) {
	err := remote.FromEnv(Name, getenv, map[string]*string{EnvAPIKey: &o.APIKey, EnvBaseURL: &o.BaseURL}, EnvAPIKey)
	return o, err
}

// Provider rents Kernel browsers; Kernel's persistence ids are its state.
// The shared rental lifecycle answers Create, Find and Release.
type Provider struct {
	*remote.Rental[browser]
	o Options
}

var _ providers.Provider = (*Provider)(nil)

// New checks the options; the service is first contacted on use.
func New(o Options) (*Provider, error) {
	c, err := remote.Account{Provider: Name, Key: o.APIKey, KeyEnv: EnvAPIKey, BaseURL: o.BaseURL, Default: DefaultBaseURL, HTTP: o.HTTP,
		Auth: func(r *http.Request, key string) { r.Header.Set("Authorization", "Bearer "+key) }}.Client()
	if err != nil {
		return nil, err
	}
	o.BaseURL = c.Base
	if o.IdleTimeout == 0 {
		o.IdleTimeout = 10 * time.Minute
	}
	if o.IdleTimeout < 10*time.Second || o.IdleTimeout > 72*time.Hour {
		return nil, fmt.Errorf("kernel: idle timeout must be between 10s and 72h, not %s", o.IdleTimeout)
	}
	p := &Provider{o: o}
	p.Rental = remote.NewRental[browser](kernelAPI{p}, c, o.Logger, o.ReleaseTimeout)
	return p, nil
}

// Name returns "kernel".
func (p *Provider) Name() string { return Name }

// Capabilities: named profiles, stealth and a live view (headful browsers)
// are Kernel's.
func (p *Provider) Capabilities() providers.Capabilities {
	return providers.Capabilities{Profiles: true, LiveView: !p.o.Headless, Stealth: true, Headed: !p.o.Headless}
}

// browser is the part of Kernel's browser object the provider reads.
type browser struct {
	SessionID   string     `json:"session_id"`
	CDPWSURL    string     `json:"cdp_ws_url"`
	LiveViewURL string     `json:"browser_live_view_url"`
	CreatedAt   time.Time  `json:"created_at"`
	DeletedAt   *time.Time `json:"deleted_at"`
	Stealth     bool       `json:"stealth"`
	Persistence struct {
		ID string `json:"id"`
	} `json:"persistence"`
	Profile struct {
		Name string `json:"name"`
	} `json:"profile"`
}

func (b browser) session(tag string) *providers.Session {
	return &providers.Session{Tag: tag, Provider: Name, CDPURL: b.CDPWSURL, LiveViewURL: b.LiveViewURL,
		Stealth: b.Stealth, RemoteID: b.SessionID, StartedAt: b.CreatedAt}
}

// made is what a found browser was made with, as far as it is the
// browser's own: Kernel keeps no free-form options with a browser, but its
// browser object reports stealth and the profile it was created with. The
// rest (viewport, action policy, allow list) the worker applies to the
// browser when it attaches, from the asking session, so it is taken as
// asked; a profile's save_changes is not reported and is taken as asked for
// the same profile name.
func (b browser) made(asked *contract.SessionOptions) *contract.SessionOptions {
	if asked == nil {
		return nil
	}
	m := *asked
	m.Provider = Name
	m.Stealth = b.Stealth
	switch {
	case b.Profile.Name == "":
		m.Profile = nil
	case asked.Profile == nil || asked.Profile.Name != b.Profile.Name:
		m.Profile = &contract.Profile{Name: b.Profile.Name}
	}
	return &m
}

// find pages through the active browsers for those carrying the tag.
func (p *Provider) find(ctx context.Context, tag string) ([]browser, error) {
	var out []browser
	offset := 0
	for pages := 0; pages < 1000; pages++ {
		q := url.Values{"status": {"active"}, "limit": {strconv.Itoa(pageSize)}, "offset": {strconv.Itoa(offset)}}
		var page []browser
		h, err := p.C.Do(ctx, "list browsers", http.MethodGet, "/browsers?"+q.Encode(), nil, &page)
		if err != nil {
			return nil, err
		}
		for _, b := range page {
			if b.Persistence.ID == tag && b.DeletedAt == nil {
				out = append(out, b)
			}
		}
		// Kernel pages by offset: X-Has-More says whether another page
		// follows, X-Next-Offset where it starts.
		if len(page) == 0 || h.Get("X-Has-More") == "false" {
			return out, nil
		}
		next, err := strconv.Atoi(h.Get("X-Next-Offset"))
		if err != nil || next <= offset {
			if h.Get("X-Has-More") != "true" && len(page) < pageSize {
				return out, nil
			}
			next = offset + len(page)
		}
		offset = next
	}
	return out, nil
}

// kernelAPI is Kernel's side of the rental lifecycle.
type kernelAPI struct{ p *Provider }

func (kernelAPI) CheckTag(tag string) error { return tags.Valid(tag) }

func (kernelAPI) Refuse(o providers.CreateOptions) error {
	if o.Proxy != "" {
		return fmt.Errorf("per-session proxy URLs are %w: Kernel proxies are configured in Kernel", providers.ErrUnsupported)
	}
	if o.Profile != nil {
		return o.Profile.Validate()
	}
	return nil
}

func (a kernelAPI) List(ctx context.Context, tag string) ([]browser, error) {
	return a.p.find(ctx, tag)
}

func (kernelAPI) Session(b browser, tag string) *providers.Session { return b.session(tag) }

func (kernelAPI) Reuse(_ context.Context, b browser, o providers.CreateOptions) *providers.Session {
	s := b.session(o.Tag)
	s.Made = b.made(o.Session)
	return s
}

// Start creates a browser, stealthy and with the named profile as asked,
// under the tag as its persistence id.
func (a kernelAPI) Start(ctx context.Context, o providers.CreateOptions) (*providers.Session, error) {
	p := a.p
	body := map[string]any{
		"persistence":     map[string]string{"id": o.Tag},
		"timeout_seconds": int(p.o.IdleTimeout / time.Second),
		"stealth":         o.Stealth,
		"headless":        p.o.Headless && !o.Headed,
	}
	if o.Profile != nil {
		body["profile"] = map[string]any{"name": o.Profile.Name, "save_changes": o.Profile.Save}
	}
	var b browser
	if _, err := p.C.Do(ctx, "create browser", http.MethodPost, "/browsers", body, &b); err != nil {
		return nil, err
	}
	if b.SessionID == "" || b.CDPWSURL == "" {
		return nil, remote.StatusError(Name, "create browser", 0, 0, "the answer had no session id or CDP URL")
	}
	p.Log.Info().Str("session", o.Tag).Str("kernel_session", b.SessionID).Msg("created a Kernel browser")
	s := b.session(o.Tag)
	s.Made = o.Session
	return s, nil
}

// End deletes the browser and waits until Kernel no longer has it,
// answering how long it ran.
func (a kernelAPI) End(ctx context.Context, b browser, tag string) (time.Duration, error) {
	p := a.p
	path := "/browsers/" + url.PathEscape(b.SessionID)
	if _, err := p.C.Do(ctx, "delete browser", http.MethodDelete, path, nil, nil); err != nil && !remote.NotFound(err) {
		return 0, err
	}
	err := remote.Await(ctx, Name, "browser still there after delete", func() (bool, error) {
		var got browser
		_, err := p.C.Do(ctx, "browser status", http.MethodGet, path, nil, &got)
		if remote.NotFound(err) || (err == nil && got.DeletedAt != nil) {
			return true, nil
		}
		return false, err
	})
	if err != nil {
		return 0, err
	}
	p.Log.Info().Str("session", tag).Str("kernel_session", b.SessionID).Msg("deleted the Kernel browser")
	if b.CreatedAt.IsZero() {
		return 0, nil
	}
	return time.Since(b.CreatedAt), nil
}
