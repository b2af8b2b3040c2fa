// Package local is the provider that runs Chromium on this machine: one
// browser process per session tag, each with its own profile directory, in
// its own process group, recorded on disk so a restarted worker finds it.
//
// Layout under Options.ProfileRoot:
//
//	sessions/<tag>/profile     the browser's user data (unless saving a profile)
//	sessions/<tag>/downloads   Session.DownloadDir
//	sessions/<tag>/chrome.log  the browser's stdout and stderr
//	records/<tag>.json         Record, 0600 (it holds the DevTools URL)
//	.profiles/<name>/          a saved sign-in profile
//	.profiles/<name>.lock      the one session using it
package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/durable-browser/durable-browser/internal/chrome"
	"github.com/durable-browser/durable-browser/internal/egress"
	"github.com/durable-browser/durable-browser/internal/tags"
	"github.com/durable-browser/durable-browser/providers"
)

// Name is the provider's name in sessions and configuration.
const Name = "local"

// Options configures a local provider.
type Options struct {
	// ChromePath is the browser executable; empty means chrome.Find (which
	// reads CHROME_PATH, then PATH, then the usual install paths).
	ChromePath string
	// HeadlessShell chooses what runs headless browsers (chrome.FindShell):
	// "" or "auto" the headless shell where one is installed and no
	// ChromePath or CHROME_PATH names a browser, "off" the full browser,
	// else the shell's path. The shell is Chrome's engine without the
	// browser's user interface: about half the CPU a call and half the
	// memory (docs/benchmarks.md). Headed sessions always run ChromePath.
	HeadlessShell string
	// ProfileRoot holds every session's profile, the records and saved
	// profiles. Required.
	ProfileRoot string
	// BootID names this worker process boot; records carry it so Reap knows
	// which browsers a previous boot left. Required.
	BootID string
	// NoSandbox adds --no-sandbox; it is forced when running as root, where
	// Chrome's sandbox cannot start.
	NoSandbox bool
	// Headed shows browser windows for every session. By default sessions
	// are headless unless CreateOptions.Headed asks otherwise.
	Headed bool
	// ExtraFlags are appended to every browser's command line.
	ExtraFlags []string
	// Logger receives start, release and reap lines (never DevTools URLs).
	Logger zerolog.Logger
	// StartTimeout bounds a cold start to an open DevTools port (default
	// 30s), counted from when the launch got its slot (MaxLaunches).
	StartTimeout time.Duration
	// MaxLaunches bounds the browsers starting at once (default
	// DefaultMaxLaunches); a create beyond it waits for a slot, as long as
	// its context lets it.
	MaxLaunches int
	// KillGrace is how long a browser gets to exit after Browser.close and
	// again after SIGTERM before the next step (default 3s).
	KillGrace time.Duration
	// Isolation is where a plain session lives: IsolationProcess (default)
	// starts a browser of its own for every session; IsolationContext
	// opens a plain session as a browser context of one browser the
	// worker shares (see shared.go).
	Isolation Isolation
}

// Provider runs local browsers. It is safe for concurrent use.
type Provider struct {
	chromePath string
	// shellPath runs headless browsers when set (Options.HeadlessShell).
	shellPath string
	root      string
	bootID    string
	noSandbox bool
	headed    bool
	extra     []string
	log       zerolog.Logger
	startTO   time.Duration
	grace     time.Duration
	launches  *launchQueue
	isolation Isolation
	// ca is the one interception CA of the shared browser's sessions'
	// egress proxies (context isolation only).
	ca *egress.CA

	// sharedMu guards shared and serialises starting a shared browser.
	sharedMu  sync.Mutex
	shared    map[string]*sharedChrome // by flavour ("plain", "egress")
	sharedSeq int
	closed    bool

	mu       sync.Mutex
	children map[string]*child // browsers this Provider started, by tag
	// starting holds the tags whose start is under way, queued for a
	// launch slot included: Reap leaves their records alone.
	starting map[string]bool
	// locks serialises Create, Release and Reap of one tag.
	locks tags.Locks
}

// child is a browser process this Provider started and reaps.
type child struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when Wait returns
	// dir is its session directory, which stays its own when Retag hands
	// the browser to another tag.
	dir string
}

var _ providers.Provider = (*Provider)(nil)

// New checks the options, finds the browser and prepares the profile root.
func New(o Options) (*Provider, error) {
	if !supported {
		return nil, errors.New("the local provider needs a Unix system (Linux or macOS)")
	}
	if o.ProfileRoot == "" {
		return nil, errors.New("local provider: ProfileRoot is required: give a directory for browser profiles")
	}
	if o.BootID == "" {
		return nil, errors.New("local provider: BootID is required: pass this worker process's boot id")
	}
	path, err := chrome.Find(chrome.FindOptions{Explicit: o.ChromePath})
	if err != nil {
		return nil, err
	}
	shell, err := chrome.FindShell(chrome.FindOptions{Explicit: o.ChromePath}, o.HeadlessShell)
	if err != nil {
		return nil, err
	}
	root, err := filepath.Abs(o.ProfileRoot)
	if err != nil {
		return nil, fmt.Errorf("local provider: ProfileRoot: %w", err)
	}
	for _, d := range []string{"sessions", "records", ".profiles"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
			return nil, fmt.Errorf("local provider: ProfileRoot %s: %w", root, err)
		}
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 30 * time.Second
	}
	if o.KillGrace <= 0 {
		o.KillGrace = 3 * time.Second
	}
	if o.MaxLaunches <= 0 {
		o.MaxLaunches = DefaultMaxLaunches()
	}
	iso, err := ParseIsolation(string(o.Isolation))
	if err != nil {
		return nil, err
	}
	var ca *egress.CA
	if iso == IsolationContext {
		if ca, err = egress.NewCA(); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(filepath.Join(root, "shared"), 0o700); err != nil {
			return nil, fmt.Errorf("local provider: ProfileRoot %s: %w", root, err)
		}
	}
	return &Provider{
		isolation:  iso,
		ca:         ca,
		shared:     map[string]*sharedChrome{},
		chromePath: path,
		shellPath:  shell,
		root:       root,
		bootID:     o.BootID,
		noSandbox:  o.NoSandbox || runningAsRoot(),
		headed:     o.Headed,
		extra:      append([]string(nil), o.ExtraFlags...),
		log:        o.Logger.With().Str("provider", Name).Logger(),
		startTO:    o.StartTimeout,
		grace:      o.KillGrace,
		launches:   newLaunchQueue(o.MaxLaunches),
		children:   map[string]*child{},
		starting:   map[string]bool{},
	}, nil
}

// Name returns "local".
func (p *Provider) Name() string { return Name }

// Executable is what runs a browser: the headless shell for a headless
// one where there is a shell, else the full browser.
func (p *Provider) Executable(headed bool) string {
	if !headed && p.shellPath != "" {
		return p.shellPath
	}
	return p.chromePath
}

// Capabilities: saved profiles, stealth (applied by the driver), headed,
// and an egress proxy for everything the browser sends.
func (p *Provider) Capabilities() providers.Capabilities {
	return providers.Capabilities{Profiles: true, Proxies: true, Stealth: true, Headed: true, Egress: true}
}

// Create returns the live browser carrying the tag, or starts one. A browser
// found from an earlier boot is adopted: its record takes this BootID.
func (p *Provider) Create(ctx context.Context, o providers.CreateOptions) (*providers.Session, error) {
	if err := tags.Valid(o.Tag); err != nil {
		return nil, err
	}
	if o.Profile != nil {
		if err := o.Profile.Validate(); err != nil {
			return nil, err
		}
	}
	if err := checkProxy(o.Proxy); err != nil {
		return nil, err
	}
	if o.Proxy != "" && o.Egress != "" {
		return nil, errors.New("proxy: an upstream proxy cannot be combined with the worker's egress proxy (the reach guard); run the worker without the reach guard to use one")
	}
	if o.Egress != "" {
		if err := checkEgressFlags(p.extra); err != nil {
			return nil, err
		}
	}
	unlock := p.locks.Lock(o.Tag)
	defer unlock()

	if rec, _ := p.readRecord(o.Tag); rec != nil {
		if p.alive(ctx, rec) {
			if rec.BootID != p.bootID || rec.OwnerPID != os.Getpid() {
				rec.BootID, rec.OwnerPID = p.bootID, os.Getpid()
				if err := p.writeRecord(rec); err != nil {
					return nil, err
				}
				p.log.Info().Str("session", o.Tag).Int("pid", rec.PID).Msg("adopted browser from an earlier boot")
			}
			s := p.session(rec)
			s.Found = true
			return s, nil
		}
	}
	// Whatever is left of a dead browser goes before a new one starts.
	if err := p.release(ctx, o.Tag); err != nil {
		return nil, err
	}
	if why := p.ownBrowser(o); why != "" {
		if p.isolation == IsolationContext {
			p.log.Info().Str("session", o.Tag).Str("isolation", string(IsolationProcess)).Str("why", why).Msg("session gets a browser of its own")
		}
		return p.start(ctx, o)
	}
	return p.openContext(ctx, o)
}

// Find returns the live browser carrying the tag, or providers.ErrNotFound.
// It does not adopt: see Create and Reap.
func (p *Provider) Find(ctx context.Context, tag string) (*providers.Session, error) {
	if err := tags.Valid(tag); err != nil {
		return nil, err
	}
	rec, err := p.readRecord(tag)
	if err != nil {
		return nil, err
	}
	if rec == nil || !p.alive(ctx, rec) {
		return nil, providers.ErrNotFound
	}
	s := p.session(rec)
	s.Found = true
	return s, nil
}

// Release ends the tag's browser and its process group, waits until every
// process of it has exited, deletes its session directory (a saved profile
// being saved stays) and its record. Releasing an unknown tag is not an error.
func (p *Provider) Release(ctx context.Context, tag string) error {
	return p.locks.Locked(tag, func() error { return p.release(ctx, tag) })
}

func (p *Provider) session(r *Record) *providers.Session {
	s := &providers.Session{
		Tag:         r.Tag,
		Provider:    Name,
		CDPURL:      r.WSURL,
		PID:         r.PID,
		Stealth:     r.Stealth,
		DownloadDir: r.DownloadDir,
		Made:        r.Options,
		Egress:      r.Egress,
		EgressSPKI:  r.EgressSPKI,
		Isolation:   string(IsolationProcess),
	}
	if r.Shared {
		s.TargetID, s.BrowserContextID, s.Isolation = r.Target, r.Context, string(IsolationContext)
	}
	return s
}

// alive: the pid runs, is still our browser, and its port answers with the
// recorded DevTools URL.
func (p *Provider) alive(ctx context.Context, r *Record) bool {
	if r.Shared {
		return p.contextAlive(ctx, r)
	}
	if r.Port <= 0 || !pidAlive(r.PID) || !isOurs(r.PID, r.ProfileDir) {
		return false
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	ws, err := chrome.VersionWS(cctx, r.Port)
	if err != nil {
		return false
	}
	return samePath(ws, r.WSURL)
}

func samePath(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && ua.Path == ub.Path && ua.Port() == ub.Port()
}

func checkProxy(proxy string) error {
	if proxy == "" {
		return nil
	}
	u, err := url.Parse(proxy)
	if err != nil || u.Host == "" {
		return errors.New("proxy: give scheme://host:port (http, https or socks5)")
	}
	if u.User != nil {
		return errors.New("proxy: the local provider cannot pass proxy credentials to Chrome; use a proxy without user:password")
	}
	switch u.Scheme {
	case "http", "https", "socks4", "socks5":
		return nil
	}
	return fmt.Errorf("proxy: scheme %q is not supported: use http, https, socks4 or socks5", u.Scheme)
}

// markStarting marks o.Tag as starting until the function it returns is
// called.
func (p *Provider) markStarting(tag string) (done func()) {
	p.mu.Lock()
	p.starting[tag] = true
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		delete(p.starting, tag)
		p.mu.Unlock()
	}
}

// newRecord is the record of a session about to open, with its downloads
// directory made; its browser's fields are the caller's to fill.
func (p *Provider) newRecord(o providers.CreateOptions) (*Record, error) {
	sess := p.sessionDir(o.Tag)
	rec := &Record{
		Tag:         o.Tag,
		SessionDir:  sess,
		DownloadDir: filepath.Join(sess, "downloads"),
		ProfileDir:  filepath.Join(sess, "profile"),
		BootID:      p.bootID,
		OwnerPID:    os.Getpid(),
		StartedAt:   time.Now().UTC(),
		Stealth:     o.Stealth,
		Options:     o.Session,
		Egress:      o.Egress,
		EgressSPKI:  o.EgressSPKI,
	}
	if err := os.MkdirAll(rec.DownloadDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating session directory: %w", err)
	}
	return rec, nil
}

// start launches a browser for o.Tag; the tag lock is held.
func (p *Provider) start(ctx context.Context, o providers.CreateOptions) (_ *providers.Session, err error) {
	if (o.Headed || p.headed) && !hasDisplay(runtime.GOOS, os.Getenv) {
		return nil, &NoDisplayError{}
	}
	defer p.markStarting(o.Tag)()
	rec, err := p.newRecord(o)
	if err != nil {
		return nil, err
	}
	rec.Headed = o.Headed || p.headed
	defer func() {
		if err != nil {
			// Nothing of a failed start may stay behind.
			if rerr := p.release(context.WithoutCancel(ctx), o.Tag); rerr != nil {
				p.log.Error().Err(rerr).Str("session", o.Tag).Msg("cleaning up after a failed start")
			}
		}
	}()
	if o.Profile != nil {
		rec.Profile, rec.Save = o.Profile.Name, o.Profile.Save
		if o.Profile.Save {
			rec.ProfileDir = p.profileDir(o.Profile.Name)
		}
	}
	// A record exists before the lock and the process do, so a failure or a
	// crash of this worker from here on leaves a trail for release and Reap.
	if err := p.writeRecord(rec); err != nil {
		return nil, err
	}
	if rec.Profile != "" {
		if err := p.handOverSaver(ctx, rec.Profile, o.Replaces, rec.Save); err != nil {
			return nil, err
		}
		// One session at a time per profile, saving or on a copy: a copy
		// taken while another browser writes the profile is not a sign-in.
		if err := p.lockProfile(rec.Profile, o.Tag, o.Replaces, rec.Save); err != nil {
			return nil, err
		}
	}
	switch {
	case rec.Save:
		if err := os.MkdirAll(rec.ProfileDir, 0o700); err != nil {
			return nil, fmt.Errorf("creating profile %q: %w", rec.Profile, err)
		}
		clearRunState(rec.ProfileDir)
	case rec.Profile != "":
		if err := copyProfile(p.profileDir(rec.Profile), rec.ProfileDir); err != nil {
			return nil, fmt.Errorf("copying profile %q: %w", rec.Profile, err)
		}
	default:
		if err := os.MkdirAll(rec.ProfileDir, 0o700); err != nil {
			return nil, fmt.Errorf("creating profile directory: %w", err)
		}
	}

	if rec.Egress != "" {
		if err := writeEgressPrefs(rec.ProfileDir); err != nil {
			return nil, err
		}
	}

	_, port, wsURL, err := p.launch(ctx, o.Tag, rec.SessionDir, rec.ProfileDir, p.Executable(rec.Headed), p.args(rec, o), func(c *child) error {
		p.mu.Lock()
		p.children[o.Tag] = c
		p.mu.Unlock()
		rec.PID = c.cmd.Process.Pid
		if err := p.writeRecord(rec); err != nil {
			return err
		}
		if rec.Profile != "" {
			return p.setLockPID(rec.Profile, rec.Tag, rec.PID)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	rec.Port, rec.WSURL = port, wsURL
	if err := p.writeRecord(rec); err != nil {
		return nil, err
	}
	p.log.Info().Str("session", rec.Tag).Int("pid", rec.PID).Int("port", port).
		Bool("headed", rec.Headed).Str("executable", filepath.Base(p.Executable(rec.Headed))).Str("profile", rec.Profile).Bool("save", rec.Save).Msg("browser started")
	return p.session(rec), nil
}

// launch starts one browser process (exe: a session's own, or the shared
// one of context isolation) once the launch queue gives it a slot: its output
// to dir/chrome.log, in its own process group, tied to this worker.
// started runs as soon as the process exists (the caller records its pid);
// launch then waits for its DevTools port. who names it in log lines.
func (p *Provider) launch(ctx context.Context, who, dir, profileDir, exe string, args []string, started func(*child) error) (*child, int, string, error) {
	// Cold starts queue for a slot: started all at once on a busy host
	// they starve each other past the start bound, which counts from here.
	// The create heartbeats meanwhile; its own deadline bounds the wait.
	done, waited, err := p.launches.acquire(ctx, func(inFlight, waiting int) {
		p.log.Info().Str("session", who).Int("starting", inFlight).Int("queued", waiting).
			Int("max_launches", cap(p.launches.slots)).Msg("browser launch queued: the worker's launch slots are busy")
	})
	if err != nil {
		return nil, 0, "", err
	}
	defer done()
	if waited > 0 {
		p.log.Info().Str("session", who).Dur("waited", waited).Msg("browser launch slot taken")
	}

	logPath := filepath.Join(dir, "chrome.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, 0, "", fmt.Errorf("creating browser log: %w", err)
	}
	cmd := exec.Command(exe, args...)
	// A file, not a pipe: the browser may outlive this worker (where
	// startTied cannot tie it), and a pipe with no reader would break its writes.
	cmd.Stdout, cmd.Stderr = logf, logf
	ownGroup(cmd)
	// On Linux the browser dies with this worker process: see startTied.
	err = startTied(cmd)
	logf.Close()
	if err != nil {
		return nil, 0, "", &StartError{Path: exe, Exit: err.Error()}
	}
	c := &child{cmd: cmd, done: make(chan struct{}), dir: dir}
	go func() {
		_ = cmd.Wait()
		close(c.done)
	}()
	if err := started(c); err != nil {
		return c, 0, "", err
	}
	port, wsURL, err := p.waitPort(ctx, exe, profileDir, c, logPath)
	return c, port, wsURL, err
}

// hasDisplay says a headed browser can show its window: always on macOS and
// Windows, elsewhere only with an X or Wayland display set.
func hasDisplay(goos string, getenv func(string) string) bool {
	switch goos {
	case "darwin", "windows":
		return true
	}
	return getenv("DISPLAY") != "" || getenv("WAYLAND_DISPLAY") != ""
}

func (p *Provider) args(rec *Record, o providers.CreateOptions) []string {
	a := p.baseArgs(rec.ProfileDir, rec.Headed)
	if o.Proxy != "" {
		a = append(a, "--proxy-server="+o.Proxy)
	}
	if rec.Egress != "" {
		a = append(a, egressFlags(rec.Egress, rec.EgressSPKI)...)
	}
	a = append(a, p.extra...)
	return append(a, "about:blank")
}

// disabledFeatures are the Chrome features every browser of the provider
// starts without (--disable-features; an operator's own flag of that name,
// Options.ExtraFlags, comes later and replaces it).
const disabledFeatures = "WebUIOmniboxPopup,WebUIOmniboxAimPopup"

// baseArgs are the flags every browser of the provider starts with.
func (p *Provider) baseArgs(profileDir string, headed bool) []string {
	a := []string{
		// Port 0: the OS picks a free ephemeral port, never the well-known 9222.
		"--remote-debugging-port=0",
		"--remote-debugging-address=127.0.0.1",
		"--user-data-dir=" + profileDir,
		"--no-first-run",
		"--no-default-browser-check",
		"--disable-background-networking",
		"--disable-component-update",
		"--disable-sync",
		"--disable-default-apps",
		"--disable-breakpad",
		"--password-store=basic",
		"--use-mock-keychain",
		"--mute-audio",
		// The omnibox popup is a WebUI page in a renderer of its own per
		// window (Chromium 156): a window per session, and per browser
		// context, for a popup no session ever shows. Unknown feature
		// names are ignored by Chromes that do not have it.
		"--disable-features=" + disabledFeatures,
	}
	if !headed && p.shellPath == "" {
		// The headless shell is headless without it.
		a = append(a, "--headless=new")
	}
	if p.noSandbox {
		a = append(a, "--no-sandbox")
	}
	return a
}

// waitPort polls for the DevToolsActivePort file until the port answers, the
// process exits, or the start timeout passes.
func (p *Provider) waitPort(ctx context.Context, exe, profileDir string, c *child, logPath string) (int, string, error) {
	deadline := time.NewTimer(p.startTO)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	portFile := filepath.Join(profileDir, "DevToolsActivePort")
	for {
		if b, err := os.ReadFile(portFile); err == nil {
			if port, path, err := chrome.ParseDevToolsActivePort(b); err == nil {
				ws := "ws://127.0.0.1:" + strconv.Itoa(port) + path
				cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				got, err := chrome.VersionWS(cctx, port)
				cancel()
				if err == nil && samePath(got, ws) {
					return port, ws, nil
				}
			}
		}
		select {
		case <-c.done:
			ps := c.cmd.ProcessState
			e := &StartError{Path: exe, Stderr: tail(logPath, 10, 2000)}
			if ps != nil {
				e.Exit = ps.String()
			}
			_, aborted := abortedBySignal(ps)
			e.SandboxHint = aborted || strings.Contains(strings.ToLower(e.Stderr), "sandbox")
			return 0, "", e
		case <-ctx.Done():
			return 0, "", fmt.Errorf("starting browser: %w", ctx.Err())
		case <-deadline.C:
			e := &StartError{Path: exe, TimedOut: true, Stderr: tail(logPath, 10, 2000)}
			e.SandboxHint = strings.Contains(strings.ToLower(e.Stderr), "sandbox")
			return 0, "", e
		case <-tick.C:
		}
	}
}

// tail returns the last n non-empty lines of a file, at most max bytes.
func tail(path string, n, max int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const window = 16 << 10
	if fi, err := f.Stat(); err == nil && fi.Size() > window {
		_, _ = f.Seek(-window, io.SeekEnd)
	}
	b, _ := io.ReadAll(io.LimitReader(f, window))
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	s := strings.Join(lines, "\n")
	if len(s) > max {
		s = s[len(s)-max:]
	}
	return s
}

// release ends and deletes whatever the tag has; the tag lock is held.
func (p *Provider) release(ctx context.Context, tag string) error {
	rec, err := p.readRecord(tag)
	if err != nil {
		return err
	}
	p.mu.Lock()
	c := p.children[tag]
	p.mu.Unlock()
	sess := p.sessionDir(tag)
	if rec == nil && c == nil {
		if err := os.RemoveAll(sess); err != nil {
			return fmt.Errorf("deleting session directory: %w", err)
		}
		return nil
	}
	if rec != nil && rec.Shared {
		return p.releaseContext(ctx, rec)
	}
	if rec == nil {
		// Only the process is known (its record could not be written).
		rec = &Record{Tag: tag, PID: c.cmd.Process.Pid, ProfileDir: filepath.Join(c.dir, "profile"), SessionDir: c.dir}
	}
	if err := p.terminate(ctx, rec, c); err != nil {
		return err
	}
	p.mu.Lock()
	if p.children[tag] == c {
		delete(p.children, tag)
	}
	p.mu.Unlock()
	if err := os.RemoveAll(sess); err != nil {
		return fmt.Errorf("deleting session directory: %w", err)
	}
	if rec.SessionDir != "" && rec.SessionDir != sess && strings.HasPrefix(rec.SessionDir, p.root+string(os.PathSeparator)) {
		_ = os.RemoveAll(rec.SessionDir)
	}
	if _, err := os.Stat(sess); !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: session directory %s still exists", ErrNotReleased, sess)
	}
	if rec.Profile != "" {
		if err := p.unlockProfile(rec.Profile, tag); err != nil {
			return err
		}
	}
	if err := p.removeRecord(tag); err != nil {
		return err
	}
	p.log.Info().Str("session", tag).Int("pid", rec.PID).Msg("browser released")
	return nil
}

// terminate ends the browser and its group and waits until they are gone:
// Browser.close first (so a saved profile is flushed), then SIGTERM, then
// SIGKILL, each after a grace period.
func (p *Provider) terminate(ctx context.Context, rec *Record, c *child) error {
	pid := rec.PID
	exited := func() bool {
		if c != nil {
			select {
			case <-c.done:
				return true
			default:
				return false
			}
		}
		return !pidAlive(pid) || !isOurs(pid, rec.ProfileDir)
	}
	gone := func() bool { return exited() && !groupAlive(pid) }
	// Only a process proven to be ours is signalled. A process group stays
	// reserved while any member lives, so once the leader was ours its group
	// is too.
	if pid <= 0 || exited() && !groupAlive(pid) {
		return nil
	}
	if !exited() && !isOurs(pid, rec.ProfileDir) && c == nil {
		return nil // the pid was reused by something else: ours is gone
	}
	if rec.WSURL != "" && !exited() {
		cctx, cancel := context.WithTimeout(ctx, p.grace)
		if conn, err := chrome.Dial(cctx, rec.WSURL); err == nil {
			_ = conn.Call(cctx, "Browser.close", nil, nil)
			_ = conn.Close()
		}
		cancel()
		if waitUntil(ctx, p.grace, gone) {
			return nil
		}
	}
	signalGroup(pid, sigTerm)
	if waitUntil(ctx, p.grace, gone) {
		return nil
	}
	p.log.Warn().Str("session", rec.Tag).Int("pid", pid).Msg("browser ignored SIGTERM; killing")
	signalGroup(pid, sigKill)
	if waitUntil(ctx, 10*time.Second, gone) {
		return nil
	}
	return fmt.Errorf("%w: pid %d (session %s) is still running after SIGKILL", ErrNotReleased, pid, rec.Tag)
}

// waitUntil polls cond until it holds, d passes or ctx ends.
func waitUntil(ctx context.Context, d time.Duration, cond func() bool) bool {
	if cond() {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	tick := time.NewTicker(15 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return cond()
		case <-t.C:
			return cond()
		case <-tick.C:
			if cond() {
				return true
			}
		}
	}
}
