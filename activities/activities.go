package activities

import (
	"context"
	"crypto/x509"
	"iter"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/egress"
	"github.com/durable-browser/durable-browser/internal/evidence"
	"github.com/durable-browser/durable-browser/internal/handoff"
	"github.com/durable-browser/durable-browser/internal/holds"
	"github.com/durable-browser/durable-browser/internal/jsengine"
	"github.com/durable-browser/durable-browser/internal/liveview"
	"github.com/durable-browser/durable-browser/internal/netguard"
	"github.com/durable-browser/durable-browser/internal/recorder"
	"github.com/durable-browser/durable-browser/internal/redact"
	"github.com/durable-browser/durable-browser/internal/states"
	"github.com/durable-browser/durable-browser/internal/webfetch"
	"github.com/durable-browser/durable-browser/internal/websearch"
	"github.com/durable-browser/durable-browser/providers"
)

// Options builds the activities of one worker process.
type Options struct {
	// HostQueue is this process's own task queue; sessions created here are
	// served only from it.
	HostQueue string
	// Providers by name ("local", "cdp", ...). DefaultProvider names the one
	// used when a session does not say.
	Providers       map[string]providers.Provider
	DefaultProvider string
	// MaxBrowsers bounds the browsers this process holds (sessions plus
	// creates under way); a create beyond it answers browser_unavailable,
	// retryable, at once, so another worker can take it. 0: no bound.
	MaxBrowsers int
	// PastLatency, when set, names the worker's latency bound while it is
	// past it ("" otherwise): a new session's create from the create queue
	// is then refused (browser_unavailable, retryable) so that its retry
	// goes to a worker that takes new sessions.
	PastLatency func() string
	// WarmBrowsers is how many plain browsers of the default provider
	// StartWarm keeps started ahead of sessions (0: none). They count
	// against MaxBrowsers; a plain session's create takes one.
	WarmBrowsers int
	// Prices are the price of a session minute per provider name, for the
	// records of released rented sessions.
	Prices map[string]float64

	// Evidence files every read, redacted (the store applies its own key
	// prefix); its Store also takes the recorder's chunks and serves
	// GetEvidence.
	Evidence *evidence.Filer

	// Secrets resolves {{secret:NAME}} and registers each value it resolves
	// with the worker's redactor (nil: no secrets; none may be typed).
	Secrets *redact.Secrets

	// UploadDir is the only directory browser_upload takes files from; the
	// model names a file relative to it. Empty refuses every upload.
	UploadDir string
	// ProfileGrants are saved profiles every session on this worker may use
	// (Save: may also save), besides those its own options grant.
	ProfileGrants []contract.Profile

	// LiveView, when set, serves a live view of every local and cdp
	// session; a person driving there keeps the agent out.
	LiveView *liveview.Server

	// States keeps sessions' named states (nil: a session asking for one
	// is refused). StateNames, when set, are the globs of the names this
	// worker keeps. StateSaveWait bounds how long a run's or upload's answer
	// waits for its save (default 2s; the save goes on after it);
	// StateLeaseWait how long a create waits for another session to give a
	// state up (default 10s).
	States         *states.Store
	StateNames     []string
	StateSaveWait  time.Duration
	StateLeaseWait time.Duration

	// Cells is what every code cell runs with; the worker sets its
	// Redactor, which all a cell is handed passes. Source, Page and
	// Deadline are each call's.
	Cells jsengine.Options

	Fetcher  *webfetch.Fetcher
	Searcher *websearch.Searcher
	Notifier handoff.Notifier

	// Client lets a run report held requests to its workflow and read the decisions.
	Client client.Client
	// Holds describes each held request, redacted, for the hold signal, the
	// result and the log (default: over a redactor of credential shapes only).
	Holds *holds.Describer
	// HoldTimeout bounds how long a held request waits for a person (default 5m).
	HoldTimeout time.Duration
	// Heartbeat is how often long calls heartbeat (default 2s).
	Heartbeat time.Duration
	// ActionTimeout bounds each action of a batch (default 10s).
	ActionTimeout time.Duration
	// StopGrace is how long a run or upload in flight may go on after its
	// worker starts stopping (default 30s). Past it the call is cut short and
	// answers effect_unknown, as for a lost worker. The worker's own stop
	// timeout must be longer, so the answer is reported before the SDK
	// cancels the call.
	StopGrace time.Duration

	// Reach is where every session's browser may go (the reach guard): the
	// worker's services and the metadata range never, private and loopback
	// ranges as the worker's flags say. A session's allow_hosts narrows it.
	// Nil leaves the browser unguarded (tests of other things only).
	Reach *netguard.Policy
	// Resolver looks names up for the egress proxy (default the system's).
	Resolver egress.Resolver
	// SiteRoots verifies the sites' certificates where the egress proxy
	// decrypts a browser's TLS (default the system's roots). Tests give
	// their loopback servers' pool.
	SiteRoots *x509.CertPool

	// Owners says whether a session's workflow has let go of its browser,
	// for ReleaseDisowned (default: ClientOwners over Client; none without one).
	Owners OwnerFunc

	// Attach drives the browser a provider started (default
	// AttachDriver(nil): page text unredacted; a worker gives its
	// redactor's String). Tests set it to attach a fake.
	Attach AttachFunc

	Logger zerolog.Logger
	Now    func() time.Time
}

// Activities are the tool activities of one worker process. Browsers created
// here live in its registry; a call for a session it does not hold answers
// session_ended.
type Activities struct {
	o   Options
	log zerolog.Logger

	mu       sync.Mutex
	sessions map[string]*liveSession
	creating int // creates past the MaxBrowsers check, not yet in sessions
	// starting holds, by tag, a create in progress; closed when it ends.
	starting map[string]chan struct{}
	// warm keeps plain browsers started ahead (nil: none; see StartWarm).
	warm *warmPool
	// holding counts requests waiting for a person's decision (metrics).
	holding atomic.Int64
}

// liveSession is a browser this process holds.
type liveSession struct {
	ref      contract.SessionRef
	owner    Owner
	provider providers.Provider
	sess     *providers.Session
	browser  Browser
	// made is what the browser was made with (SessionOptions.MadeWith); a create that
	// finds the session must ask for the same.
	made contract.SessionOptions
	// opened is closed once the create that made the browser has given it
	// its first pages (a restore can take seconds); restored is then what
	// that restore brought back, nil if it was no restore. A retry of that
	// create finds the session and answers the same.
	opened   chan struct{}
	restored *contract.Restored
	// policy is the session's action policy for requests outside a run.
	policy string
	// calls serialises calls: one browser, one call at a time. It is a
	// one-slot channel so a waiter can give up with its context.
	calls chan struct{}
	// lastUsed is when the last call ended (unix nanoseconds), for ReleaseOrphans.
	lastUsed atomic.Int64
	// heldUntil, while non-zero, is when the handoff a person is working in
	// this browser expires (unix nanoseconds): no call touches the browser
	// during a handoff, yet it is no orphan. The next call clears it.
	heldUntil atomic.Int64
	// holds counts this session's requests waiting for a person (at most
	// MaxHolds; more are refused unasked).
	holds atomic.Int32
	// egress is the proxy the browser's traffic leaves through (nil when
	// the provider takes none); closed after the browser is released.
	egress *egress.Proxy
	// unlist takes the browser's DevTools port off the worker's listeners
	// (nil when it was not listed).
	unlist func()
	// hands say whether the agent or a person in the live view drives
	// (nil: no live view). epoch is the hands' epoch the call in flight
	// began in; drove says a person had the browser and the agent has not
	// been told yet.
	hands *liveview.Hands
	epoch atomic.Int64
	drove atomic.Bool
	// started is when a rented browser started (its provider's word), for
	// the session minutes results carry; zero for browsers on the worker.
	started time.Time
	// rec records the page when the session asked (SessionOptions.Record).
	rec atomic.Pointer[recorder.Recorder]
	// saver keeps the session's named state (nil when it keeps none).
	saver *stateSaver
	// ckpt keeps the session's checkpoint (nil: no state key, or the
	// session asked for restore false). See checkpoint.go.
	ckpt *stateSaver
	// handedOff says a person was handed the browser (a handoff was
	// notified) and no call has saved its state since: the next call does,
	// the one the workflow makes when the handoff is answered or expires.
	handedOff atomic.Bool
}

// runningS is how long the session's rented browser has run, in seconds
// (0 for a browser on the worker).
func (s *liveSession) runningS() int64 {
	if s.started.IsZero() {
		return 0
	}
	return int64(time.Since(s.started) / time.Second)
}

// rented says the provider's browsers run at a service and outlive this
// worker.
func rented(p providers.Provider) bool {
	_, ok := p.(providers.Rented)
	return ok
}

// closeEgress closes the session's egress proxy and unlists its browser's
// DevTools port: whatever guarded the browser's reach or was a service
// because of it ends with the session.
func (s *liveSession) closeEgress() {
	if s.egress != nil {
		_ = s.egress.Close()
	}
	if s.unlist != nil {
		s.unlist()
	}
}

// idleSince is when the session was last wanted: its last call, or the end
// of a handoff it was handed to a person for, whichever is later.
func (s *liveSession) idleSince() int64 {
	return max(s.lastUsed.Load(), s.heldUntil.Load())
}

// lock waits for the session's turn, or gives up when ctx ends.
func (s *liveSession) lock(ctx context.Context) *contract.Failure {
	select {
	case s.calls <- struct{}{}:
		// A call after a handoff means the person is done with the browser.
		s.heldUntil.Store(0)
		return nil
	case <-ctx.Done():
		return contract.Fail(contract.CodeTimeout, "another call on this session was still running; try again")
	}
}

func (s *liveSession) unlock() {
	s.lastUsed.Store(time.Now().UnixNano())
	<-s.calls
}

// ReleaseOrphans releases the browsers no call has touched for longer than
// idle: a safety net for sessions whose workflow ended without releasing
// them (terminated, or an inline Browser never closed). It never interrupts
// a call, and never takes a browser handed to a person before the handoff
// has expired (then idle counts from the expiry). The worker runs it with
// its reaper.
func (a *Activities) ReleaseOrphans(ctx context.Context, idle time.Duration) []string {
	var released []string
	for tag, s := range a.idleFor(idle) {
		if s.owner.HostQueue != "" && s.provider != nil && s.ref.Provider != "local" {
			// A browser that outlives this worker may have been taken over
			// by another: then this worker only lets go of it.
			if v, err := a.ownership(ctx, s); err == nil && v == MovedHost {
				if a.detachIdle(tag, s) {
					a.log.Info().Str("session_tag", tag).Msg("let go of a browser another worker took over; the browser runs on")
				}
				continue
			}
		}
		ok, err := a.releaseIdle(ctx, tag, s)
		if err != nil {
			a.log.Error().Err(err).Str("session_tag", tag).Msg("releasing an orphaned session")
			continue
		}
		if !ok {
			continue // a call is running: not an orphan
		}
		a.log.Warn().Str("session_tag", tag).Dur("idle", idle).Msg("released a session no call touched; its workflow never released it")
		released = append(released, tag)
	}
	return released
}

// releaseIdle lets go of s and releases its browser, unless a call holds it
// (then ok is false). The process lets go even when the provider fails to
// release: the provider's own reaper finds the browser again.
func (a *Activities) releaseIdle(ctx context.Context, tag string, s *liveSession) (ok bool, err error) {
	select {
	case s.calls <- struct{}{}:
	default:
		return false, nil
	}
	a.mu.Lock()
	if a.sessions[tag] == s {
		delete(a.sessions, tag)
	}
	a.mu.Unlock()
	s.stopRecording(recorder.GapReleased)
	a.endState(ctx, s)
	a.closeBrowser(s)
	<-s.calls
	err = s.provider.Release(ctx, tag)
	s.closeEgress()
	if err != nil {
		return false, err
	}
	return true, nil
}

// DefaultStopGrace is how long calls in flight may finish once their worker
// starts stopping.
const DefaultStopGrace = 30 * time.Second

// New returns the activities for one worker process.
func New(o Options) *Activities {
	if o.DefaultProvider == "" {
		o.DefaultProvider = "local"
	}
	if o.HoldTimeout <= 0 {
		o.HoldTimeout = 5 * time.Minute
	}
	if o.Owners == nil && o.Client != nil {
		o.Owners = ClientOwners(o.Client)
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = 2 * time.Second
	}
	if o.ActionTimeout <= 0 {
		o.ActionTimeout = 10 * time.Second
	}
	if o.StopGrace <= 0 {
		o.StopGrace = DefaultStopGrace
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Attach == nil {
		o.Attach = AttachDriver(nil)
	}
	if o.Holds == nil {
		o.Holds = holds.New(nil)
	}
	return &Activities{o: o, log: o.Logger, sessions: map[string]*liveSession{}}
}

// Registry is where activities are registered (a Temporal worker).
type Registry interface {
	RegisterActivityWithOptions(a any, options activity.RegisterOptions)
}

// RegisterShared registers the activities served from the shared queue:
// session creation, release by tag, and the tools that need no browser.
func (a *Activities) RegisterShared(r Registry) {
	register(r, []named{
		{contract.ActivityCreate, a.Create},
		// Release by tag from any worker, for remote sessions whose host was lost.
		{contract.ActivityRelease, a.Release},
		{contract.ActivityWebFetch, a.WebFetch},
		{contract.ActivityWebSearch, a.WebSearch},
		{contract.ActivityEvidence, a.GetEvidence},
		{contract.ActivityAgentResult, a.AgentResult},
	})
}

// RegisterCreate registers what the create queue serves: a new session's
// browser.create.
func (a *Activities) RegisterCreate(r Registry) {
	register(r, []named{{contract.ActivityCreate, a.Create}})
}

// RegisterHost registers the activities served from this process's host
// queue: everything that touches a browser it holds.
func (a *Activities) RegisterHost(r Registry) {
	register(r, []named{
		{contract.ActivitySnapshot, a.Snapshot},
		{contract.ActivityRun, a.Run},
		{contract.ActivityScreenshot, a.Screenshot},
		{contract.ActivityRead, a.Read},
		{contract.ActivityCheck, a.Check},
		{contract.ActivityDownloads, a.Downloads},
		{contract.ActivityUpload, a.Upload},
		{contract.ActivityRelease, a.Release},
		{contract.ActivityRelaunch, a.Relaunch},
		{contract.ActivityReconcile, a.Reconcile},
		{contract.ActivityNotify, a.Notify},
	})
}

// named is an activity and the name it is registered under.
type named struct {
	name string
	fn   any
}

func register(r Registry, acts []named) {
	for _, x := range acts {
		r.RegisterActivityWithOptions(x.fn, activity.RegisterOptions{Name: x.name})
	}
}

// Sessions lists the tags this process holds, sorted.
func (a *Activities) Sessions() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Sorted(maps.Keys(a.sessions))
}

// idleFor yields, in tag order, the sessions no call has touched for
// longer than d.
func (a *Activities) idleFor(d time.Duration) iter.Seq2[string, *liveSession] {
	cutoff := time.Now().Add(-d).UnixNano()
	return func(yield func(string, *liveSession) bool) {
		for _, tag := range a.Sessions() {
			a.mu.Lock()
			s := a.sessions[tag]
			a.mu.Unlock()
			if s == nil || s.idleSince() > cutoff {
				continue
			}
			if !yield(tag, s) {
				return
			}
		}
	}
}

// Stats is what this process holds now, for its metrics.
type Stats struct {
	// Browsers counts browsers by provider.
	Browsers map[string]int
	// PendingHandoffs counts browsers handed to a person, handoff unexpired.
	PendingHandoffs int
	// HeldRequests counts requests waiting for a person's decision.
	HeldRequests int
	// ChromePIDs are the local browsers' main processes, warm ones included.
	ChromePIDs []int
	// Warm counts the warm browsers waiting for a session; WarmPIDs are
	// their main processes.
	Warm     int
	WarmPIDs []int
}

// Stats reads what this process holds now.
func (a *Activities) Stats() Stats {
	now := a.o.Now().UnixNano()
	st := Stats{Browsers: map[string]int{}, HeldRequests: int(a.holding.Load())}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, s := range a.sessions {
		st.Browsers[s.ref.Provider]++
		if s.heldUntil.Load() > now {
			st.PendingHandoffs++
		}
		if s.sess != nil && s.sess.PID > 0 {
			st.ChromePIDs = append(st.ChromePIDs, s.sess.PID)
		}
	}
	st.Warm, st.WarmPIDs = a.warm.count()
	st.ChromePIDs = append(st.ChromePIDs, st.WarmPIDs...)
	return st
}

// Held is how many sessions' browsers this process holds (creates under
// way not counted).
func (a *Activities) Held() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.sessions)
}

// Close releases every session this process holds; the worker calls it on
// shutdown so no browser outlives its worker.
func (a *Activities) Close(ctx context.Context) {
	a.warmPool().close()
	for _, tag := range a.Sessions() {
		a.mu.Lock()
		s := a.sessions[tag]
		delete(a.sessions, tag)
		a.mu.Unlock()
		if s == nil {
			continue
		}
		// Give a call in flight a moment to finish before its browser goes.
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if s.lock(wctx) == nil {
			defer s.unlock()
		}
		cancel()
		s.stopRecording(recorder.GapWorkerStopped)
		// The session goes on, restored, on another worker.
		a.keepCheckpoint(ctx, s)
		if rented(s.provider) {
			// Its lease lapses unless the session's next call, on another
			// worker, takes it on.
			if s.saver != nil {
				a.saveState(ctx, s, 5*time.Second)
				s.saver.halt()
			}
		} else {
			a.endState(ctx, s)
		}
		a.closeBrowser(s)
		if rented(s.provider) {
			// A rented browser outlives this worker: the session's next
			// call, on another worker, attaches to it by tag.
			a.log.Info().Str("session_tag", tag).Msg("left the rented browser running for the session's next call")
			s.closeEgress()
			continue
		}
		if err := s.provider.Release(ctx, tag); err != nil {
			a.log.Error().Err(err).Str("session_tag", tag).Msg("releasing session at shutdown")
		}
		s.closeEgress()
	}
}

// logger returns a logger carrying the call's workflow, activity and session ids.
func (a *Activities) logger(ctx context.Context, tag string) zerolog.Logger {
	c := a.log.With().Str("session_tag", tag)
	if activity.IsActivity(ctx) {
		info := activity.GetInfo(ctx)
		c = c.Str("workflow_id", info.WorkflowExecution.ID).
			Str("run_id", info.WorkflowExecution.RunID).
			Str("activity_id", info.ActivityID).
			Str("activity", info.ActivityType.Name).
			Int32("attempt", info.Attempt)
	}
	return c.Logger()
}

// heartbeat records progress while fn works, so a lost worker is noticed
// and, for a run, its progress survives in the timeout's details.
func (a *Activities) heartbeat(ctx context.Context, details func() any) (stop func()) {
	if !activity.IsActivity(ctx) {
		return func() {}
	}
	done := make(chan struct{})
	var once sync.Once
	go func() {
		t := time.NewTicker(a.o.Heartbeat)
		defer t.Stop()
		// No beat at once: a call shorter than the interval needs none, and
		// an extra round trip to the server would slow every call.
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if details != nil {
				activity.RecordHeartbeat(ctx, details())
			} else {
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	return func() { once.Do(func() { close(done) }) }
}
