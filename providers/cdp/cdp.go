// Package cdp is the provider that attaches to a Chrome someone already runs
// (its DevTools endpoint, http://host:port or ws://...). A session is a page
// the provider opened in that browser; release closes only the pages the
// session opened (and the popups they opened) and leaves the browser running.
package cdp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"

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
	// StateDir, when set, keeps a small file per tag naming the pages it
	// opened, so a restarted worker finds its sessions. Without it sessions
	// are remembered in memory only.
	StateDir string
	// Logger receives create and release lines.
	Logger zerolog.Logger
	// CallTimeout bounds each exchange with the browser (default 10s).
	CallTimeout time.Duration
}

// Provider opens sessions as pages of one existing browser.
type Provider struct {
	endpoint string
	stateDir string
	log      zerolog.Logger
	timeout  time.Duration

	mu    sync.Mutex
	state map[string]*entry
	// locks serialises Create and Release of one tag.
	locks tags.Locks
}

// entry is what the provider remembers of one tag.
type entry struct {
	Tag string `json:"tag"`
	// Targets are the pages the session opened, first the one it drives.
	Targets []string  `json:"targets"`
	Stealth bool      `json:"stealth,omitempty"`
	Created time.Time `json:"created"`
}

var _ providers.Provider = (*Provider)(nil)

// New checks the endpoint's shape; the browser is first contacted on use.
func New(o Options) (*Provider, error) {
	if _, err := chrome.ParseEndpoint(o.Endpoint); err != nil {
		return nil, err
	}
	if o.StateDir != "" {
		if err := os.MkdirAll(o.StateDir, 0o700); err != nil {
			return nil, fmt.Errorf("cdp provider: StateDir: %w", err)
		}
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 10 * time.Second
	}
	return &Provider{
		endpoint: strings.TrimSpace(o.Endpoint),
		stateDir: o.StateDir,
		log:      o.Logger.With().Str("provider", Name).Logger(),
		timeout:  o.CallTimeout,
		state:    map[string]*entry{},
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
	TargetID string `json:"targetId"`
	Type     string `json:"type"`
	OpenerID string `json:"openerId"`
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

// owned returns the live targets of e: the pages it opened and, recursively,
// the pages those opened.
func owned(e *entry, all map[string]targetInfo) []string {
	mine := map[string]bool{}
	for _, id := range e.Targets {
		mine[id] = true
	}
	for grew := true; grew; {
		grew = false
		for id, t := range all {
			if !mine[id] && t.OpenerID != "" && mine[t.OpenerID] {
				mine[id], grew = true, true
			}
		}
	}
	var out []string
	for _, id := range e.Targets { // keep the session's own order first
		if _, ok := all[id]; ok {
			out = append(out, id)
			delete(mine, id)
		}
	}
	for id := range mine {
		if _, ok := all[id]; ok {
			out = append(out, id)
		}
	}
	return out
}

// Create returns the tag's page if it is still open, or opens a new one.
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
	if e, err := p.load(o.Tag); err != nil {
		return nil, err
	} else if e != nil {
		all, err := targets(ctx, c)
		if err != nil {
			return nil, err
		}
		if live := owned(e, all); len(live) > 0 {
			return p.session(e, ws, live[0]), nil
		}
	}
	var res struct {
		TargetID string `json:"targetId"`
	}
	if err := c.Call(ctx, "Target.createTarget", map[string]any{"url": "about:blank"}, &res); err != nil {
		return nil, fmt.Errorf("opening a page: %w", err)
	}
	e := &entry{Tag: o.Tag, Targets: []string{res.TargetID}, Stealth: o.Stealth, Created: time.Now().UTC()}
	if err := p.save(e); err != nil {
		_ = c.Call(context.WithoutCancel(ctx), "Target.closeTarget", map[string]any{"targetId": res.TargetID}, nil)
		return nil, err
	}
	p.log.Info().Str("session", o.Tag).Msg("opened a page in the attached browser")
	return p.session(e, ws, res.TargetID), nil
}

func (p *Provider) session(e *entry, ws, target string) *providers.Session {
	return &providers.Session{Tag: e.Tag, Provider: Name, CDPURL: ws, TargetID: target, Stealth: e.Stealth}
}

// Find returns the tag's session while any page it opened is still open.
func (p *Provider) Find(ctx context.Context, tag string) (*providers.Session, error) {
	if err := tags.Valid(tag); err != nil {
		return nil, err
	}
	e, err := p.load(tag)
	if err != nil {
		return nil, err
	}
	if e == nil {
		return nil, providers.ErrNotFound
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
	live := owned(e, all)
	if len(live) == 0 {
		return nil, providers.ErrNotFound
	}
	return p.session(e, ws, live[0]), nil
}

// Status is live while a page of the session is open, gone when none is (or
// nothing listens at the endpoint), unknown when the browser cannot be asked.
func (p *Provider) Status(ctx context.Context, tag string) (providers.Status, error) {
	_, err := p.Find(ctx, tag)
	switch {
	case err == nil:
		return providers.StatusLive, nil
	case errors.Is(err, providers.ErrNotFound):
		return providers.StatusGone, nil
	}
	return providers.StatusUnknown, err
}

// Release closes the pages the session opened, and the pages those opened,
// waits until the browser no longer lists them, and forgets the tag. The
// browser and every other page keep running. Unknown tags are not an error.
func (p *Provider) Release(ctx context.Context, tag string) error {
	if err := tags.Valid(tag); err != nil {
		return err
	}
	unlock := p.locks.Lock(tag)
	defer unlock()
	e, err := p.load(tag)
	if err != nil || e == nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	c, _, err := p.conn(ctx)
	if err != nil {
		if browserGone(err) {
			// Nothing listens: the browser, and so its pages, are gone.
			return p.forget(tag)
		}
		return err
	}
	defer c.Close()
	all, err := targets(ctx, c)
	if err != nil {
		return err
	}
	mine := owned(e, all)
	for _, id := range mine {
		err := c.Call(ctx, "Target.closeTarget", map[string]any{"targetId": id}, nil)
		var ce *chrome.CallError
		if err != nil && !errors.As(err, &ce) { // an answered error: already closing or gone
			return fmt.Errorf("closing page: %w", err)
		}
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		all, err := targets(ctx, c)
		if err != nil {
			return err
		}
		left := 0
		for _, id := range mine {
			if _, ok := all[id]; ok {
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
	p.log.Info().Str("session", tag).Int("pages", len(mine)).Msg("closed the session's pages")
	return p.forget(tag)
}

// browserGone says nothing listens at the endpoint at all.
func browserGone(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED)
}

func (p *Provider) statePath(tag string) string {
	return filepath.Join(p.stateDir, tag+".json")
}

func (p *Provider) load(tag string) (*entry, error) {
	p.mu.Lock()
	e := p.state[tag]
	p.mu.Unlock()
	if e != nil || p.stateDir == "" {
		return e, nil
	}
	b, err := os.ReadFile(p.statePath(tag))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading session state: %w", err)
	}
	e = &entry{}
	if err := json.Unmarshal(b, e); err != nil || e.Tag != tag || len(e.Targets) == 0 {
		return nil, nil // torn or foreign: as if absent
	}
	p.mu.Lock()
	p.state[tag] = e
	p.mu.Unlock()
	return e, nil
}

func (p *Provider) save(e *entry) error {
	if p.stateDir != "" {
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		tmp := p.statePath(e.Tag) + ".tmp"
		if err := os.WriteFile(tmp, b, 0o600); err != nil {
			return fmt.Errorf("writing session state: %w", err)
		}
		if err := os.Rename(tmp, p.statePath(e.Tag)); err != nil {
			return fmt.Errorf("writing session state: %w", err)
		}
	}
	p.mu.Lock()
	p.state[e.Tag] = e
	p.mu.Unlock()
	return nil
}

func (p *Provider) forget(tag string) error {
	p.mu.Lock()
	delete(p.state, tag)
	p.mu.Unlock()
	if p.stateDir != "" {
		if err := os.Remove(p.statePath(tag)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing session state: %w", err)
		}
	}
	return nil
}
