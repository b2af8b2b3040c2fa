package local

// Context isolation: a plain session is a browser context
// (Target.createBrowserContext) of one browser the worker shares, instead
// of a browser of its own. A context has its own cookies, storage, cache
// and permissions, its own downloads directory (set by the driver for that
// context alone) and its own proxy: the session's egress proxy, where its
// reach policy and its secrets' origins are enforced, as for a browser of
// its own. What a context does not have is a process of its own: a
// renderer exploit, or a crash of the shared browser, reaches every
// session in it (docs/security.md).
//
// Layout under Options.ProfileRoot, beside the per-session one:
//
//	shared/<boot>-<flavour>-<n>/profile     the shared browser's user data
//	shared/<boot>-<flavour>-<n>/owner.json  its pid and the worker's
//	shared/<boot>-<flavour>-<n>/chrome.log  its output
//	sessions/<tag>/downloads                a context session's downloads
//
// There is one shared browser per flavour: "egress" (started with no name
// lookups of its own and the pin of the worker's egress CA, for sessions
// with an egress proxy) and "plain" (for sessions without).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/chrome"
	"github.com/durable-browser/durable-browser/internal/egress"
	"github.com/durable-browser/durable-browser/providers"
)

// Isolation is how the local provider keeps a plain session apart from
// the worker's others.
type Isolation string

const (
	// IsolationProcess gives every session a browser process of its own.
	IsolationProcess Isolation = "process"
	// IsolationContext opens a plain session as a browser context of the
	// worker's shared browser; a session that needs launch options of its
	// own (a saved profile, a named state, a window, a recording, an
	// egress CA of its own) still gets its own browser.
	IsolationContext Isolation = "context"
)

// ParseIsolation reads --isolation ("" is process).
func ParseIsolation(s string) (Isolation, error) {
	switch Isolation(strings.ToLower(strings.TrimSpace(s))) {
	case "", IsolationProcess:
		return IsolationProcess, nil
	case IsolationContext:
		return IsolationContext, nil
	}
	return "", fmt.Errorf("isolation %q: use process (a browser per session) or context (a browser context per plain session in one shared browser)", s)
}

// Isolation is the provider's isolation mode.
func (p *Provider) Isolation() Isolation { return p.isolation }

// SharesBrowsers says plain sessions are contexts of a shared browser
// (context isolation).
func (p *Provider) SharesBrowsers() bool { return p.isolation == IsolationContext }

// EgressCA is the CA the egress proxies of this provider's sessions must
// sign under (egress.Options.CA), nil when each proxy makes its own: under
// context isolation the shared browser starts with this CA's pin.
func (p *Provider) EgressCA() *egress.CA { return p.ca }

// sharedChrome is one shared browser.
type sharedChrome struct {
	key        string
	dir        string
	profileDir string
	c          *child
	pid, port  int
	ws         string
	// users counts the contexts opened in it and not yet released, and
	// the opens under way: it ends when the last goes (sharedMu).
	users int
}

// exited: the process ended (a zombie not yet waited for included).
func (s *sharedChrome) exited() bool {
	select {
	case <-s.c.done:
		return true
	default:
		return !pidAlive(s.pid)
	}
}

// sharedOwner is shared/<dir>/owner.json: Reap ends a shared browser whose
// worker process is gone.
type sharedOwner struct {
	PID      int    `json:"pid"`
	OwnerPID int    `json:"owner_pid"`
	BootID   string `json:"boot_id"`
}

// ownBrowser says why a create needs a browser of its own ("" when it may
// be a context of the shared browser).
func (p *Provider) ownBrowser(o providers.CreateOptions) string {
	switch {
	case p.isolation != IsolationContext:
		return "isolation process"
	case o.Profile != nil:
		return "a saved profile needs its own user-data directory"
	case o.Headed || p.headed:
		return "a window needs its own browser"
	case o.State != "":
		return "a named state keeps its own user data"
	case o.Record:
		return "a recording needs its own browser"
	case o.Stealth:
		// Popups of a context are attached once they exist, not paused
		// at their start: stealth would miss their first scripts.
		return "stealth is applied to every page before it runs, popups too"
	case o.Session != nil && (o.Session.ActionPolicy == contract.PolicyAsk || o.Session.ActionPolicy == contract.PolicyDeny):
		// Likewise a popup's first request (a form posted to a new
		// window) could leave before the approval gate holds it.
		return "the approval gate holds every page's first request, popups too"
	case o.Egress != "" && o.EgressSPKI != "" && o.EgressSPKI != p.ca.SPKI():
		return "its egress proxy signs under a CA of its own"
	}
	return ""
}

// openContext opens the session o.Tag as a browser context of the shared
// browser, with a page; the tag lock is held.
func (p *Provider) openContext(ctx context.Context, o providers.CreateOptions) (_ *providers.Session, err error) {
	defer p.markStarting(o.Tag)()
	t0 := time.Now()
	sc, err := p.sharedFor(ctx, o.Egress != "")
	if err != nil {
		return nil, err
	}
	tShared := time.Now()
	// A failed open gives its use back (release, below, finds no context
	// to count it by).
	opened := false
	defer func() {
		if !opened {
			p.unuseShared(context.WithoutCancel(ctx), sc.pid)
		}
	}()
	rec, err := p.newRecord(o)
	if err != nil {
		return nil, err
	}
	rec.ProfileDir, rec.PID, rec.Port, rec.WSURL, rec.Shared = sc.profileDir, sc.pid, sc.port, sc.ws, true
	defer func() {
		if err != nil {
			if rerr := p.release(context.WithoutCancel(ctx), o.Tag); rerr != nil {
				p.log.Error().Err(rerr).Str("session", o.Tag).Msg("cleaning up after a failed context")
			}
		}
	}()
	// The record first: a context opened from here on is disposed of by
	// release, whatever fails next.
	if err := p.writeRecord(rec); err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, p.startTO)
	defer cancel()
	conn, err := chrome.Dial(cctx, sc.ws)
	if err != nil {
		return nil, fmt.Errorf("connecting to the shared browser: %w", err)
	}
	defer conn.Close()
	params := map[string]any{"disposeOnDetach": false}
	switch {
	case o.Egress != "":
		params["proxyServer"] = "http://" + o.Egress
		params["proxyBypassList"] = egressBypass
	case o.Proxy != "":
		params["proxyServer"] = o.Proxy
	}
	var bc struct {
		BrowserContextID string `json:"browserContextId"`
	}
	if err := conn.Call(cctx, "Target.createBrowserContext", params, &bc); err != nil {
		return nil, fmt.Errorf("opening the session's browser context: %w", err)
	}
	rec.Context = bc.BrowserContextID
	tContext := time.Now()
	// From here release counts the use off, with the context.
	opened = true
	if err := p.writeRecord(rec); err != nil {
		return nil, err
	}
	var t struct {
		TargetID string `json:"targetId"`
	}
	if err := conn.Call(cctx, "Target.createTarget", map[string]any{"url": "about:blank", "browserContextId": rec.Context}, &t); err != nil {
		return nil, fmt.Errorf("opening the session's page: %w", err)
	}
	rec.Target = t.TargetID
	if err := p.writeRecord(rec); err != nil {
		return nil, err
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }
	p.log.Info().Str("session", rec.Tag).Str("isolation", string(IsolationContext)).Int("pid", rec.PID).
		Str("shared", sc.key).Dict("steps_ms", zerolog.Dict().Float64("shared", ms(tShared.Sub(t0))).
		Float64("context", ms(tContext.Sub(tShared))).Float64("page", ms(time.Since(tContext)))).
		Msg("browser context opened in the shared browser")
	return p.session(rec), nil
}

// sharedFor returns the running shared browser of the flavour, starting
// one when there is none or it exited.
func (p *Provider) sharedFor(ctx context.Context, withEgress bool) (*sharedChrome, error) {
	key := "plain"
	if withEgress {
		key = "egress"
	}
	p.sharedMu.Lock()
	defer p.sharedMu.Unlock()
	if p.closed {
		return nil, errors.New("the local provider is closed: the worker is stopping")
	}
	if s := p.shared[key]; s != nil {
		if !s.exited() {
			s.users++
			return s, nil
		}
		delete(p.shared, key)
		p.endShared(ctx, s)
	}
	p.sharedSeq++
	dir := filepath.Join(p.root, "shared", p.bootID+"-"+key+"-"+strconv.Itoa(p.sharedSeq))
	s := &sharedChrome{key: key, dir: dir, profileDir: filepath.Join(dir, "profile")}
	if err := os.MkdirAll(s.profileDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the shared browser's directory: %w", err)
	}
	args := p.baseArgs(s.profileDir, false)
	if withEgress {
		if err := writeEgressPrefs(s.profileDir); err != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
		args = append(args, egressLockFlags(p.ca.SPKI())...)
	}
	// No start window: a page in the default context would hold a
	// renderer for nothing, and under load it may be listed only after the
	// first sessions' contexts, too late to close it reliably.
	args = append(append(args, p.extra...), "--no-startup-window")
	c, port, ws, err := p.launch(ctx, "shared-"+key, dir, s.profileDir, p.Executable(false), args, func(c *child) error {
		s.c, s.pid = c, c.cmd.Process.Pid
		b, _ := json.Marshal(sharedOwner{PID: s.pid, OwnerPID: os.Getpid(), BootID: p.bootID})
		return os.WriteFile(filepath.Join(dir, "owner.json"), b, 0o600)
	})
	if err != nil {
		if c != nil {
			p.endShared(context.WithoutCancel(ctx), s)
		} else {
			_ = os.RemoveAll(dir)
		}
		return nil, err
	}
	s.port, s.ws = port, ws
	s.users = 1
	p.shared[key] = s
	p.log.Info().Str("shared", key).Int("pid", s.pid).Int("port", port).Msg("shared browser started")
	go func() {
		<-c.done
		p.sharedMu.Lock()
		closing := p.closed
		p.sharedMu.Unlock()
		if !closing {
			p.log.Warn().Str("shared", key).Int("pid", s.pid).Msg("the shared browser exited: its sessions end, and the next create starts a new one")
		}
	}()
	return s, nil
}

// target is what Target.getTargets tells of one target.
type target struct {
	TargetID  string `json:"targetId"`
	Type      string `json:"type"`
	URL       string `json:"url"`
	ContextID string `json:"browserContextId"`
}

// targets lists the browser's targets.
func targets(ctx context.Context, conn *chrome.Conn) ([]target, error) {
	var ts struct {
		TargetInfos []target `json:"targetInfos"`
	}
	err := conn.Call(ctx, "Target.getTargets", nil, &ts)
	return ts.TargetInfos, err
}

// browserContexts is the set of the browser's contexts but its default
// one: those opened for sessions.
func browserContexts(ctx context.Context, conn *chrome.Conn) (map[string]bool, error) {
	var bcs struct {
		IDs []string `json:"browserContextIds"`
	}
	if err := conn.Call(ctx, "Target.getBrowserContexts", nil, &bcs); err != nil {
		return nil, err
	}
	set := make(map[string]bool, len(bcs.IDs))
	for _, id := range bcs.IDs {
		set[id] = true
	}
	return set, nil
}

// endShared ends a shared browser and its process group and deletes its
// directory; sharedMu is held.
func (p *Provider) endShared(ctx context.Context, s *sharedChrome) {
	rec := &Record{Tag: "shared-" + s.key, PID: s.pid, ProfileDir: s.profileDir, WSURL: s.ws}
	if err := p.terminate(ctx, rec, s.c); err != nil {
		p.log.Error().Err(err).Str("shared", s.key).Msg("ending the shared browser")
		return
	}
	_ = os.RemoveAll(s.dir)
}

// unuseShared counts one use of the shared browser with that pid off,
// and ends it when none is left: no Chrome outlives the last session
// released from it (a warm context, --warm-browsers, keeps it up).
func (p *Provider) unuseShared(ctx context.Context, pid int) {
	p.sharedMu.Lock()
	defer p.sharedMu.Unlock()
	for k, s := range p.shared {
		if s.pid != pid {
			continue
		}
		if s.users--; s.users <= 0 {
			delete(p.shared, k)
			p.endShared(ctx, s)
			p.log.Info().Str("shared", k).Int("pid", s.pid).Msg("shared browser ended: its last session was released")
		}
		return
	}
}

// contextAlive: the shared browser runs and still has the session's
// context. The page to drive is the recorded one, else another of the
// context (the first closed itself), else a new one.
func (p *Provider) contextAlive(ctx context.Context, r *Record) bool {
	if r.Port <= 0 || r.Context == "" || !pidAlive(r.PID) || !isOurs(r.PID, r.ProfileDir) {
		return false
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	conn, err := chrome.Dial(cctx, r.WSURL)
	if err != nil {
		return false
	}
	defer conn.Close()
	ts, err := targets(cctx, conn)
	if err != nil {
		return false
	}
	other := ""
	for _, t := range ts {
		if t.Type != "page" || t.ContextID != r.Context {
			continue
		}
		if t.TargetID == r.Target {
			return true
		}
		other = t.TargetID
	}
	if other != "" {
		r.Target = other
		return true
	}
	if contexts, err := browserContexts(cctx, conn); err != nil || !contexts[r.Context] {
		return false
	}
	var t struct {
		TargetID string `json:"targetId"`
	}
	if conn.Call(cctx, "Target.createTarget", map[string]any{"url": "about:blank", "browserContextId": r.Context}, &t) != nil {
		return false
	}
	r.Target = t.TargetID
	return true
}

// releaseContext disposes of a context session's browser context (every
// page in it, popups too), waits until the shared browser lists none of
// its pages, and deletes its directory and record. The shared browser
// keeps running. The tag lock is held.
func (p *Provider) releaseContext(ctx context.Context, rec *Record) error {
	if rec.Context != "" && pidAlive(rec.PID) && isOurs(rec.PID, rec.ProfileDir) {
		if err := disposeContext(ctx, rec); err != nil {
			if pidAlive(rec.PID) && isOurs(rec.PID, rec.ProfileDir) {
				return fmt.Errorf("%w: browser context of session %s: %v", ErrNotReleased, rec.Tag, err)
			}
			// The shared browser ended meanwhile, and its contexts with it.
		}
	}
	sess := p.sessionDir(rec.Tag)
	for _, d := range []string{sess, rec.SessionDir} {
		if d == "" || !strings.HasPrefix(d, p.root+string(os.PathSeparator)) {
			continue
		}
		if err := os.RemoveAll(d); err != nil {
			return fmt.Errorf("deleting session directory: %w", err)
		}
		if _, err := os.Stat(d); !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: session directory %s still exists", ErrNotReleased, d)
		}
	}
	if err := p.removeRecord(rec.Tag); err != nil {
		return err
	}
	p.log.Info().Str("session", rec.Tag).Str("isolation", string(IsolationContext)).Msg("browser context released")
	if rec.Context != "" && rec.BootID == p.bootID {
		p.unuseShared(ctx, rec.PID)
	}
	return nil
}

func disposeContext(ctx context.Context, rec *Record) error {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := chrome.Dial(cctx, rec.WSURL)
	if err != nil {
		return err
	}
	defer conn.Close()
	err = conn.Call(cctx, "Target.disposeBrowserContext", map[string]any{"browserContextId": rec.Context}, nil)
	var ce *chrome.CallError
	if err != nil && !errors.As(err, &ce) { // an answered error: no such context (already gone)
		return err
	}
	tick := time.NewTicker(15 * time.Millisecond)
	defer tick.Stop()
	for {
		ts, err := targets(cctx, conn)
		if err != nil {
			return err
		}
		left := 0
		for _, t := range ts {
			if t.ContextID == rec.Context {
				left++
			}
		}
		if left == 0 {
			return nil
		}
		select {
		case <-cctx.Done():
			return fmt.Errorf("%d target(s) of the context still open", left)
		case <-tick.C:
		}
	}
}

// Close releases the context sessions this process holds and ends the
// shared browsers (the worker calls it once it has released its sessions).
// Browsers of their own are left to Release and Reap.
func (p *Provider) Close(ctx context.Context) {
	if recs, err := p.Records(); err == nil {
		for _, r := range recs {
			if r.Shared && r.OwnerPID == os.Getpid() {
				if err := p.Release(ctx, r.Tag); err != nil {
					p.log.Warn().Err(err).Str("session", r.Tag).Msg("releasing a context session")
				}
			}
		}
	}
	p.sharedMu.Lock()
	defer p.sharedMu.Unlock()
	p.closed = true
	for k, s := range p.shared {
		delete(p.shared, k)
		p.endShared(ctx, s)
	}
}

// reapShared ends the shared browsers of worker processes that are gone
// (on Linux they die with their worker; elsewhere, or after a kill that
// left one, they are found here) and deletes their directories.
func (p *Provider) reapShared(ctx context.Context) {
	ents, err := os.ReadDir(filepath.Join(p.root, "shared"))
	if err != nil {
		return
	}
	p.sharedMu.Lock()
	mine := map[string]bool{}
	for _, s := range p.shared {
		mine[s.dir] = true
	}
	p.sharedMu.Unlock()
	for _, e := range ents {
		dir := filepath.Join(p.root, "shared", e.Name())
		if mine[dir] {
			continue
		}
		var o sharedOwner
		if b, err := os.ReadFile(filepath.Join(dir, "owner.json")); err == nil {
			_ = json.Unmarshal(b, &o)
		}
		if o.OwnerPID != 0 && o.OwnerPID != os.Getpid() && pidAlive(o.OwnerPID) {
			continue // another running worker's
		}
		if o.OwnerPID == 0 {
			if fi, err := e.Info(); err != nil || time.Since(fi.ModTime()) < p.startTO {
				continue // maybe starting: owner.json comes with the pid
			}
		}
		profile := filepath.Join(dir, "profile")
		if o.OwnerPID == os.Getpid() && o.PID > 0 && pidAlive(o.PID) && isOurs(o.PID, profile) {
			continue // this process's, being started
		}
		if o.PID > 0 && pidAlive(o.PID) && isOurs(o.PID, profile) {
			if err := p.terminate(ctx, &Record{Tag: "shared", PID: o.PID, ProfileDir: profile}, nil); err != nil {
				p.log.Warn().Err(err).Str("dir", dir).Msg("ending a shared browser nobody holds")
				continue
			}
		}
		_ = os.RemoveAll(dir)
		p.log.Info().Str("dir", e.Name()).Msg("reaped a shared browser nobody holds")
	}
}
