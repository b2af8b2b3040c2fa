// Package providers defines where browsers come from. Each implementation
// (local Chrome, an existing CDP endpoint, remote services) creates sessions
// idempotently by tag and releases them idempotently.
package providers

import (
	"context"
	"errors"
	"time"

	"github.com/durable-browser/durable-browser/contract"
)

// ErrNotFound is returned by a provider's Find when no browser carries the
// tag.
var ErrNotFound = errors.New("no browser with that tag")

// ErrUnsupported is wrapped for create options a provider cannot honour.
var ErrUnsupported = errors.New("not supported by this provider")

// ErrNotReleased is wrapped when a release could not confirm the browser
// ended.
var ErrNotReleased = errors.New("browser not confirmed released")

// Capabilities says what a provider can do.
type Capabilities struct {
	Profiles bool `json:"profiles"`
	Proxies  bool `json:"proxies"`
	LiveView bool `json:"live_view"`
	Stealth  bool `json:"stealth"`
	Headed   bool `json:"headed"`
	// Egress: the provider sends every connection of the browser through
	// CreateOptions.Egress and turns off what would go around it (WebRTC
	// over UDP, the browser's own name lookups).
	Egress bool `json:"egress"`
}

// CreateOptions describes the browser a session wants.
type CreateOptions struct {
	Tag     string            `json:"tag"`
	Headed  bool              `json:"headed,omitempty"`
	Stealth bool              `json:"stealth,omitempty"`
	Profile *contract.Profile `json:"profile,omitempty"`
	Proxy   string            `json:"proxy,omitempty"`
	// Egress, when set, is the worker's egress proxy (127.0.0.1:port) for
	// this browser: a provider with Capabilities.Egress routes all of the
	// browser's traffic through it, loopback included.
	Egress string `json:"egress,omitempty"`
	// EgressSPKI, when set, is the pin of the certificate authority the
	// egress proxy presents decrypted TLS under (egress.Proxy.SPKI): the
	// browser accepts the proxy's certificates by it, and no other
	// untrusted ones (the proxy verifies the sites' own). Public.
	EgressSPKI string `json:"egress_spki,omitempty"`
	// Replaces is the tag of a session this one replaces (a relaunch); a
	// profile that session holds may pass to this one.
	Replaces string `json:"replaces,omitempty"`
	// Session is the session's options as the create asked for them. The
	// provider keeps them with the browser and hands them back as
	// Session.Made when a later create finds it, so the caller can refuse a
	// browser made with other options.
	Session *contract.SessionOptions `json:"session,omitempty"`
	// Record and State say the session records its page and keeps a named
	// state (neither is in Session, which holds what a found browser is
	// compared by): the local provider gives such a session a browser of
	// its own under context isolation.
	Record bool   `json:"record,omitempty"`
	State  string `json:"state,omitempty"`
}

// Session is a browser a provider holds for one tag.
type Session struct {
	Tag      string `json:"tag"`
	Provider string `json:"provider"`
	// CDPURL is the DevTools websocket (or http) endpoint the driver attaches to.
	// It is a full-control credential: never put it in history or logs.
	CDPURL string `json:"-"`
	// LiveViewURL, when the provider has one, lets a person watch and act.
	// Also a credential.
	LiveViewURL string `json:"-"`
	PID         int    `json:"pid,omitempty"`
	Stealth     bool   `json:"stealth,omitempty"`
	// DownloadDir is where this session's downloads land, when local.
	DownloadDir string `json:"-"`
	// TargetID, when set, is the page target the provider opened for this
	// session in a browser it shares with others (the cdp provider): the
	// driver should drive that page rather than the browser's first one.
	TargetID string `json:"target_id,omitempty"`
	// BrowserContextID, when set, is the session's own browser context in
	// a browser it shares (the local provider's context isolation): its
	// downloads are set up for that context alone.
	BrowserContextID string `json:"browser_context_id,omitempty"`
	// Isolation is how the session is kept apart from the worker's other
	// sessions, for a local browser: "process" (a browser of its own) or
	// "context" (a browser context in the worker's shared browser).
	Isolation string `json:"isolation,omitempty"`
	// Found is true when Create found the tag's browser instead of starting
	// one.
	Found bool `json:"found,omitempty"`
	// Made is the CreateOptions.Session the browser was made with, as the
	// provider kept it; nil when it kept none (a browser made before
	// providers kept them).
	Made *contract.SessionOptions `json:"made,omitempty"`
	// Egress is the egress proxy the browser was started with ("" when
	// none): a found browser keeps sending its traffic there.
	Egress string `json:"egress,omitempty"`
	// EgressSPKI is the pin the browser was started with ("" when none).
	EgressSPKI string `json:"egress_spki,omitempty"`
	// RemoteID is the service's own id for a rented browser.
	RemoteID string `json:"remote_id,omitempty"`
	// StartedAt is when the browser started, for a rented one as the
	// service says (its minutes are metered from then); zero when unknown.
	StartedAt time.Time `json:"started_at,omitempty"`
}

// Rented is a provider whose browsers run at a service, outside every
// worker: they outlive the worker that drives them (any worker finds one by
// tag) and cost by the minute, so release answers how long the browser ran.
type Rented interface {
	ReleaseMetered(ctx context.Context, tag string) (time.Duration, error)
}

// Provider is a source of browsers, as the activities use it: they create a
// session's browser and release it, and nothing else. The implementations
// (local.Provider, cdp.Provider) also have Name, Capabilities and Find; those are on the concrete types only, so a new provider need not
// write them before something calls them.
type Provider interface {
	// Create finds a browser by tag, or starts one. Calling it twice with one
	// tag yields one browser. A tag that internal/tags.Valid rejects is an
	// error wrapping tags.ErrInvalid.
	Create(ctx context.Context, o CreateOptions) (*Session, error)
	// Release ends the browser and confirms it is gone; releasing an unknown
	// tag is not an error.
	Release(ctx context.Context, tag string) error
}
