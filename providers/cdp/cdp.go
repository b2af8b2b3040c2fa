// Package cdp is the provider that attaches to a Chrome someone already runs
// (its DevTools endpoint, http://host:port or ws://...). A session is a
// browser context of its own in that browser (its own cookies, storage and
// cache) with the page the provider opened in it; release disposes of that
// context, and so of every page in it, and leaves the browser and its other
// pages running.
//
// Which context is which session's is kept in the browser itself, so any
// worker on any machine finds and releases a session by its tag: beside each
// session's context the provider opens a second one holding a single marker
// page, about:blank#durable-browser-session=<tag>&context=<id>&page=<id>&options=<...>,
// naming the session's context, its page and the options it was made with.
// A marker counts only when it is the one page of its context and names
// another context: a page of a session can open pages only in its own
// context, and cannot guess another context's id, so it cannot pass for a
// marker.
package cdp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/chrome"
	"github.com/durable-browser/durable-browser/internal/tags"
	"github.com/durable-browser/durable-browser/providers"
)

// Name is the provider's name in sessions and configuration.
const Name = "cdp"

// ErrUnsupported is returned for create options an attached browser cannot
// honour (saved profiles, proxies).
var ErrUnsupported = errors.New("not supported by the cdp provider")

// ErrBadTag is wrapped by the error for a tag tags.Valid rejects; it is
// tags.ErrInvalid.
var ErrBadTag = tags.ErrInvalid

// ErrNotReleased is wrapped when release could not confirm the pages closed.
var ErrNotReleased = errors.New("pages not confirmed closed")

// Options configures a cdp provider.
type Options struct {
	// Endpoint is the browser's DevTools address: http://host:port (resolved
	// through /json/version) or ws://host:port/devtools/browser/<id>. It is a
	// full-control credential and never logged.
	Endpoint string
	// Logger receives create and release lines.
	Logger zerolog.Logger
	// CallTimeout bounds each exchange with the browser (default 10s).
	CallTimeout time.Duration
}

// Provider opens sessions as browser contexts of one existing browser. It
// keeps nothing about them: the browser's markers are the state.
type Provider struct {
	endpoint string
	log      zerolog.Logger
	timeout  time.Duration

	// locks serialises Create and Release of one tag in this process.
	locks tags.Locks
}

var _ providers.Provider = (*Provider)(nil)

// New checks the endpoint's shape; the browser is first contacted on use.
func New(o Options) (*Provider, error) {
	if _, err := chrome.ParseEndpoint(o.Endpoint); err != nil {
		return nil, err
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 10 * time.Second
	}
	return &Provider{
		endpoint: strings.TrimSpace(o.Endpoint),
		log:      o.Logger.With().Str("provider", Name).Logger(),
		timeout:  o.CallTimeout,
	}, nil
}

// Name returns "cdp".
func (p *Provider) Name() string { return Name }

// Capabilities: stealth is applied by the driver; profiles, proxies and
// headed are the attached browser's own business.
func (p *Provider) Capabilities() providers.Capabilities {
	return providers.Capabilities{Stealth: true}
}

// targetInfo is the part of a DevTools TargetInfo the provider reads.
type targetInfo struct {
	TargetID  string `json:"targetId"`
	Type      string `json:"type"`
	URL       string `json:"url"`
	OpenerID  string `json:"openerId"`
	ContextID string `json:"browserContextId"`
}

// conn opens a connection to the browser for one operation.
func (p *Provider) conn(ctx context.Context) (*chrome.Conn, string, error) {
	ws, err := chrome.ResolveWS(ctx, p.endpoint)
	if err != nil {
		return nil, "", err
	}
	c, err := chrome.Dial(ctx, ws)
	if err != nil {
		return nil, "", err
	}
	return c, ws, nil
}

func targets(ctx context.Context, c *chrome.Conn) (map[string]targetInfo, error) {
	var res struct {
		TargetInfos []targetInfo `json:"targetInfos"`
	}
	if err := c.Call(ctx, "Target.getTargets", nil, &res); err != nil {
		return nil, err
	}
	m := make(map[string]targetInfo, len(res.TargetInfos))
	for _, t := range res.TargetInfos {
		m[t.TargetID] = t
	}
	return m, nil
}

const markerPrefix = "about:blank#durable-browser-session="

// marker is what a marker page says of its session.
type marker struct {
	Tag     string
	Context string // the session's browser context
	Page    string // the page the session drives
	Made    *contract.SessionOptions
	// Own is the marker's own context, Target the marker page.
	Own, Target string
}

func markerURL(m marker) string {
	u := markerPrefix + m.Tag + "&context=" + url.QueryEscape(m.Context) + "&page=" + url.QueryEscape(m.Page)
	if m.Made != nil {
		if b, err := json.Marshal(m.Made); err == nil {
			u += "&options=" + base64.RawURLEncoding.EncodeToString(b)
		}
	}
	return u
}

func parseMarker(raw string) (marker, bool) {
	frag, ok := strings.CutPrefix(raw, "about:blank#")
	if !ok {
		return marker{}, false
	}
	q, err := url.ParseQuery(frag)
	if err != nil {
		return marker{}, false
	}
	m := marker{Tag: q.Get("durable-browser-session"), Context: q.Get("context"), Page: q.Get("page")}
	if tags.Valid(m.Tag) != nil || m.Context == "" || m.Page == "" {
		return marker{}, false
	}
	if o := q.Get("options"); o != "" {
		if b, err := base64.RawURLEncoding.DecodeString(o); err == nil {
			var made contract.SessionOptions
			if json.Unmarshal(b, &made) == nil {
				m.Made = &made
			}
		}
	}
	return m, true
}

// markers returns the tag's markers in the browser: pages with its marker
// URL that are the only page of their context and name another context.
// More than one is left by creates that raced on two workers.
func markers(all map[string]targetInfo, tag string) []marker {
	pages := map[string]int{}
	for _, t := range all {
		if t.Type == "page" {
			pages[t.ContextID]++
		}
	}
	var out []marker
	for _, t := range all {
		if t.Type != "page" || !strings.HasPrefix(t.URL, markerPrefix) {
			continue
		}
		m, ok := parseMarker(t.URL)
		if !ok || m.Tag != tag || t.ContextID == "" || pages[t.ContextID] != 1 || m.Context == t.ContextID {
			continue
		}
		m.Own, m.Target = t.ContextID, t.TargetID
		out = append(out, m)
	}
	return out
}

// page returns the page to drive in m's context: the one the session opened,
// or, when that was closed, another page in the context (a popup it opened).
func page(m marker, all map[string]targetInfo) string {
	if t, ok := all[m.Page]; ok && t.ContextID == m.Context {
		return m.Page
	}
	for id, t := range all {
		if t.Type == "page" && t.ContextID == m.Context {
			return id
		}
	}
	return ""
}

// find is the tag's live session in the browser: a marker whose context
// still has a page. Markers whose session's pages are all gone are returned
// as stale, for the caller to dispose of.
func find(all map[string]targetInfo, tag string) (m marker, target string, stale []marker) {
	for _, mk := range markers(all, tag) {
		if id := page(mk, all); id != "" && target == "" {
			m, target = mk, id
			continue
		}
		if page(mk, all) == "" {
			stale = append(stale, mk)
		}
	}
	return m, target, stale
}

// Create returns the tag's session if its context still has a page, or
// opens a new context with a page, and the marker that names them.
func (p *Provider) Create(ctx context.Context, o providers.CreateOptions) (*providers.Session, error) {
	if err := tags.Valid(o.Tag); err != nil {
		return nil, err
	}
	if o.Profile != nil {
		return nil, fmt.Errorf("saved profiles are %w: the attached browser keeps its own profile; use the local provider for profiles", ErrUnsupported)
	}
	if o.Proxy != "" {
		return nil, fmt.Errorf("proxies are %w: start the browser with --proxy-server instead", ErrUnsupported)
	}
	unlock := p.locks.Lock(o.Tag)
	defer unlock()
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	c, ws, err := p.conn(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	all, err := targets(ctx, c)
	if err != nil {
		return nil, err
	}
	m, target, stale := find(all, o.Tag)
	if target != "" {
		s := p.session(m, ws, target)
		s.Found = true
		return s, nil
	}
	// A session whose pages were all closed elsewhere is gone: its contexts
	// go before a new one opens.
	for _, mk := range stale {
		if err := dispose(ctx, c, mk); err != nil {
			return nil, err
		}
	}
	m = marker{Tag: o.Tag, Made: o.Session}
	if m.Context, err = newContext(ctx, c); err != nil {
		return nil, fmt.Errorf("opening a browser context for the session (the browser must allow Target.createBrowserContext): %w", err)
	}
	undo := func() {
		_ = dispose(context.WithoutCancel(ctx), c, m)
	}
	var res struct {
		TargetID string `json:"targetId"`
	}
	if err := c.Call(ctx, "Target.createTarget", map[string]any{"url": "about:blank", "browserContextId": m.Context}, &res); err != nil {
		undo()
		return nil, fmt.Errorf("opening a page: %w", err)
	}
	m.Page = res.TargetID
	if m.Own, err = newContext(ctx, c); err != nil {
		undo()
		return nil, fmt.Errorf("opening the session's marker context: %w", err)
	}
	if err := c.Call(ctx, "Target.createTarget", map[string]any{"url": markerURL(m), "browserContextId": m.Own, "background": true}, nil); err != nil {
		undo()
		return nil, fmt.Errorf("opening the session's marker page: %w", err)
	}
	p.log.Info().Str("session", o.Tag).Msg("opened a browser context in the attached browser")
	s := p.session(m, ws, m.Page)
	s.Stealth = o.Stealth
	return s, nil
}

func newContext(ctx context.Context, c *chrome.Conn) (string, error) {
	var res struct {
		BrowserContextID string `json:"browserContextId"`
	}
	if err := c.Call(ctx, "Target.createBrowserContext", map[string]any{}, &res); err != nil {
		return "", err
	}
	return res.BrowserContextID, nil
}

// dispose disposes of a session's context and its marker's; a context
// already gone is no error.
func dispose(ctx context.Context, c *chrome.Conn, m marker) error {
	for _, id := range []string{m.Context, m.Own} {
		if id == "" {
			continue
		}
		err := c.Call(ctx, "Target.disposeBrowserContext", map[string]any{"browserContextId": id}, nil)
		var ce *chrome.CallError
		if err != nil && !errors.As(err, &ce) { // an answered error: no such context
			return fmt.Errorf("disposing of the session's browser context: %w", err)
		}
	}
	return nil
}

func (p *Provider) session(m marker, ws, target string) *providers.Session {
	s := &providers.Session{Tag: m.Tag, Provider: Name, CDPURL: ws, TargetID: target, Made: m.Made}
	if m.Made != nil {
		s.Stealth = m.Made.Stealth
	}
	return s
}

// Find returns the tag's session while a page of its context is open. It
// asks the browser, so it finds sessions any worker opened.
func (p *Provider) Find(ctx context.Context, tag string) (*providers.Session, error) {
	if err := tags.Valid(tag); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	c, ws, err := p.conn(ctx)
	if err != nil {
		if browserGone(err) {
			return nil, providers.ErrNotFound
		}
		return nil, err
	}
	defer c.Close()
	all, err := targets(ctx, c)
	if err != nil {
		return nil, err
	}
	m, target, _ := find(all, tag)
	if target == "" {
		return nil, providers.ErrNotFound
	}
	s := p.session(m, ws, target)
	s.Found = true
	return s, nil
}

// Release disposes of the session's browser context (closing every page in
// it, popups too) and its marker's, found by tag in the browser, and waits
// until the browser no longer lists any of their pages. It works from any
// worker. The browser and every other page keep running. Unknown tags are
// not an error.
func (p *Provider) Release(ctx context.Context, tag string) error {
	return p.locks.Locked(tag, func() error { return p.release(ctx, tag) })
}

// release is Release under the tag's lock.
func (p *Provider) release(ctx context.Context, tag string) error {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	c, _, err := p.conn(ctx)
	if err != nil {
		if browserGone(err) {
			// Nothing listens: the browser, and so its pages, are gone.
			return nil
		}
		return err
	}
	defer c.Close()
	all, err := targets(ctx, c)
	if err != nil {
		return err
	}
	mine := markers(all, tag)
	if len(mine) == 0 {
		return nil
	}
	gone := map[string]bool{}
	for _, m := range mine {
		if err := dispose(ctx, c, m); err != nil {
			return err
		}
		gone[m.Context], gone[m.Own] = true, true
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		all, err := targets(ctx, c)
		if err != nil {
			return err
		}
		left := 0
		for _, t := range all {
			if t.Type == "page" && gone[t.ContextID] {
				left++
			}
		}
		if left == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %d page(s) of session %s still open", ErrNotReleased, left, tag)
		case <-tick.C:
		}
	}
	p.log.Info().Str("session", tag).Msg("disposed of the session's browser context")
	return nil
}

// browserGone says nothing listens at the endpoint at all.
func browserGone(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED)
}
