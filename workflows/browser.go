package workflows

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/durable-browser/durable-browser/activities"
	"github.com/durable-browser/durable-browser/internal/tags"
)

// MaxTagLen bounds a session tag.
const MaxTagLen = 60

// Config opens a Browser.
type Config struct {
	// Session describes the browser wanted.
	Session activities.SessionOptions `json:"session"`
	// Tag names the first session; later ones (after a lost worker or a
	// relaunch) are "<Tag>-<n>". Empty means "<workflow id>-<n>". Two Browsers
	// in one workflow need different tags, or they share one browser.
	Tag string `json:"tag,omitempty"`
	// Timeouts bound the activities; zero fields take the defaults.
	Timeouts Timeouts `json:"timeouts,omitempty"`
	// Resume continues a Browser whose State() was carried across
	// continue-as-new; no browser is created when it holds a live session.
	Resume *BrowserState `json:"resume,omitempty"`
	// SkipHumanHandlers leaves out the handoff, hold and approval signal
	// handlers and the hold query. Set it on every Browser but one when a
	// workflow opens several, since one workflow has one handler per name.
	SkipHumanHandlers bool `json:"skip_human_handlers,omitempty"`
}

// BrowserState is everything a Browser remembers. It is plain,
// JSON-serialisable data, so it can be carried across continue-as-new.
type BrowserState struct {
	Base     string                    `json:"base"`
	Seq      int                       `json:"seq"`
	Session  activities.SessionRef     `json:"session"`
	Options  activities.SessionOptions `json:"options"`
	Created  bool                      `json:"created,omitempty"`
	Lost     bool                      `json:"lost,omitempty"`
	Released bool                      `json:"released,omitempty"`
	URL      string                    `json:"url,omitempty"`
	Title    string                    `json:"title,omitempty"`
	Calls    int                       `json:"calls,omitempty"`
	Guard    GuardState                `json:"guard"`
	Human    HumanState                `json:"human"`
}

// Browser is the handle an orchestrator's workflow drives a browser through.
// Every method is deterministic workflow code; calls are served one at a time.
type Browser struct {
	cfg Config
	t   Timeouts
	st  BrowserState
	mu  workflow.Mutex
	// onChange is told when the tag or human state changes (search attributes).
	onChange func(ctx workflow.Context)
	// stopping ends handoff waits: the session is ending.
	stopping bool
	// Signal channels, kept to drain them before continue-as-new.
	sigHandoff, sigHold, sigApproval workflow.ReceiveChannel
}

// newBrowser builds a Browser without creating anything.
func newBrowser(ctx workflow.Context, cfg Config) *Browser {
	b := &Browser{cfg: cfg, t: cfg.Timeouts.withDefaults(), mu: workflow.NewMutex(ctx)}
	if cfg.Resume != nil {
		b.st = *cfg.Resume
	} else {
		b.st.Options = cfg.Session
		b.st.Base = cfg.Tag
		if b.st.Base == "" {
			b.st.Base = workflow.GetInfo(ctx).WorkflowExecution.ID
		}
	}
	return b
}

// Open creates (or finds, by tag) the browser right away and returns its
// handle. A failure to create is an *activities.Failure (browser_unavailable
// or the provider's own code).
func Open(ctx workflow.Context, cfg Config) (*Browser, error) {
	b := newBrowser(ctx, cfg)
	if !cfg.SkipHumanHandlers {
		if err := b.listen(ctx); err != nil {
			return nil, err
		}
	}
	if b.st.Created {
		// Resumed: a lost session is replaced on the next call, which says so.
		return b, nil
	}
	if err := b.mu.Lock(ctx); err != nil {
		return nil, err
	}
	defer b.mu.Unlock()
	if f := b.ensure(ctx); f != nil {
		return nil, f
	}
	return b, nil
}

// State returns a copy of the Browser's state, to carry across continue-as-new.
func (b *Browser) State() BrowserState {
	st := b.st
	st.Guard.Unknown = append([]UnknownCall(nil), st.Guard.Unknown...)
	st.Guard.Repeats = append([]RepeatCount(nil), st.Guard.Repeats...)
	st.Human = b.st.Human.clone()
	return st
}

// Session returns the current session's reference (zero before creation).
func (b *Browser) Session() activities.SessionRef { return b.st.Session }

// Snapshot runs the snapshot tool.
func (b *Browser) Snapshot(ctx workflow.Context, args activities.SnapshotArgs) (*activities.SnapshotResult, error) {
	return typed[activities.SnapshotResult](ctx, b, activities.ToolSnapshot, args)
}

// Run runs a batch of actions or a code cell. It runs at most once.
func (b *Browser) Run(ctx workflow.Context, args activities.RunArgs) (*activities.RunResult, error) {
	return typed[activities.RunResult](ctx, b, activities.ToolRun, args)
}

// Screenshot captures and files a screenshot.
func (b *Browser) Screenshot(ctx workflow.Context, args activities.ScreenshotArgs) (*activities.ScreenshotResult, error) {
	return typed[activities.ScreenshotResult](ctx, b, activities.ToolScreenshot, args)
}

// Read reads and files the page's content.
func (b *Browser) Read(ctx workflow.Context, args activities.ReadArgs) (*activities.ReadResult, error) {
	return typed[activities.ReadResult](ctx, b, activities.ToolRead, args)
}

// Downloads lists and files the session's downloads.
func (b *Browser) Downloads(ctx workflow.Context, args activities.DownloadsArgs) (*activities.DownloadsResult, error) {
	return typed[activities.DownloadsResult](ctx, b, activities.ToolDownloads, args)
}

// Upload chooses a file in a file input. It runs at most once.
func (b *Browser) Upload(ctx workflow.Context, args activities.UploadArgs) (*activities.UploadResult, error) {
	return typed[activities.UploadResult](ctx, b, activities.ToolUpload, args)
}

// Release releases the browser. It is idempotent.
func (b *Browser) Release(ctx workflow.Context, args activities.ReleaseArgs) (*activities.ReleaseResult, error) {
	return typed[activities.ReleaseResult](ctx, b, activities.ToolRelease, args)
}

// Relaunch opens a new browser under a new tag, then releases the old one.
func (b *Browser) Relaunch(ctx workflow.Context, args activities.RelaunchArgs) (*RelaunchResult, error) {
	return typed[RelaunchResult](ctx, b, activities.ToolRelaunch, args)
}

// RequestHandoff asks a person for a step and waits for the answer or expiry.
func (b *Browser) RequestHandoff(ctx workflow.Context, args activities.HandoffArgs) (*HandoffResult, error) {
	return typed[HandoffResult](ctx, b, activities.ToolRequestHandoff, args)
}

// WebFetch fetches a public page without the browser.
func (b *Browser) WebFetch(ctx workflow.Context, args activities.WebFetchArgs) (*activities.WebFetchResult, error) {
	return typed[activities.WebFetchResult](ctx, b, activities.ToolWebFetch, args)
}

// WebSearch searches the web.
func (b *Browser) WebSearch(ctx workflow.Context, args activities.WebSearchArgs) (*activities.WebSearchResult, error) {
	return typed[activities.WebSearchResult](ctx, b, activities.ToolWebSearch, args)
}

// Close releases the browser; a failure to release is an *activities.Failure.
func (b *Browser) Close(ctx workflow.Context) error {
	_, err := b.Release(ctx, activities.ReleaseArgs{})
	return err
}

// CallTool serves a model's tool call by name: it validates the arguments,
// runs the tool and returns either the result JSON or the failure envelope
// JSON ({"ok":false,"code":...}). The error is only for what is not the
// model's to handle, such as the workflow being cancelled.
func (b *Browser) CallTool(ctx workflow.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	typedArgs, f := activities.Validate(name, args)
	if f != nil {
		return json.Marshal(f)
	}
	res, f, err := b.do(ctx, name, typedArgs, args, "")
	if err != nil {
		return nil, err
	}
	if f != nil {
		return json.Marshal(f)
	}
	return json.Marshal(res)
}

func typed[T any](ctx workflow.Context, b *Browser, name string, args any) (*T, error) {
	res, f, err := b.do(ctx, name, args, nil, "")
	if err != nil {
		return nil, err
	}
	if f != nil {
		return nil, f
	}
	out, ok := res.(*T)
	if !ok {
		return nil, fmt.Errorf("workflows: %s answered %T, want %T; this is a bug in durable-browser", name, res, out)
	}
	return out, nil
}

// do serves one call. args is the typed argument value; raw, when given,
// is what the model sent (for the call hash). seed, when given, makes a
// handoff's request id (the update id, so a retried update waits on the
// same request).
func (b *Browser) do(ctx workflow.Context, name string, args any, raw json.RawMessage, seed string) (any, *activities.Failure, error) {
	if raw == nil {
		var err error
		if raw, err = json.Marshal(args); err != nil {
			return nil, nil, err
		}
	}
	if name == activities.ToolRequestHandoff {
		a, ok := argsAs[activities.HandoffArgs](args)
		if !ok {
			return nil, activities.Fail(activities.CodeRefused, "browser_request_handoff: arguments have the wrong type"), nil
		}
		return b.handoff(ctx, a, seed)
	}
	if f := b.human().waiting(); f != nil {
		return nil, f, nil
	}
	if err := b.mu.Lock(ctx); err != nil {
		return nil, nil, err
	}
	defer b.mu.Unlock()
	if f := b.human().waiting(); f != nil {
		// A handoff began while this call waited its turn.
		return nil, f, nil
	}
	b.st.Calls++
	hash := activities.CallHash(name, raw)
	if f := b.st.Guard.check(name, hash); f != nil {
		return nil, f, nil
	}
	res, f, err := b.dispatch(ctx, name, args)
	if err != nil {
		return nil, nil, err
	}
	if f != nil && f.Code == activities.CodeEffectUnknown && f.LastURL == "" {
		// The worker died before its first heartbeat: the page the call
		// started on is the last URL anyone knows.
		f.LastURL = b.st.URL
	}
	if f == nil || (f.Code != activities.CodeSessionReplaced && f.Code != activities.CodeBrowserUnavailable) {
		b.st.Guard.record(name, hash, f)
	}
	if f != nil && f.Code == activities.CodeSessionEnded && b.st.Created && !b.st.Released {
		// The worker no longer holds the browser: the next call opens a new one.
		b.st.Lost = true
	}
	if p := pageOf(res); p != nil && p.URL != "" {
		b.st.URL, b.st.Title = p.URL, p.Title
	}
	return res, f, nil
}

// dispatch runs one tool; the caller holds the lock.
func (b *Browser) dispatch(ctx workflow.Context, name string, args any) (any, *activities.Failure, error) {
	switch name {
	case activities.ToolWebFetch:
		a, _ := argsAs[activities.WebFetchArgs](args)
		out := &activities.WebFetchResult{}
		f, _, err := b.exec(ctx, activities.ActivityWebFetch, activities.ClassRead, false,
			activities.WebFetchRequest{SessionTag: b.st.Session.Tag, Args: a}, out)
		return orNil(out, f, err)
	case activities.ToolWebSearch:
		a, _ := argsAs[activities.WebSearchArgs](args)
		out := &activities.WebSearchResult{}
		f, _, err := b.exec(ctx, activities.ActivityWebSearch, activities.ClassRead, false,
			activities.WebSearchRequest{SessionTag: b.st.Session.Tag, Args: a}, out)
		return orNil(out, f, err)
	case activities.ToolRelease:
		return b.release(ctx)
	case activities.ToolRelaunch:
		a, _ := argsAs[activities.RelaunchArgs](args)
		return b.relaunch(ctx, a)
	}

	if b.st.Released {
		return nil, sessionEnded(), nil
	}
	if f := b.ensure(ctx); f != nil {
		return nil, f, nil
	}
	call := activities.Call{Session: b.st.Session, Policy: b.st.Options.ActionPolicy}
	var (
		activity string
		class    = activities.ClassRead
		input    any
		out      any
	)
	switch name {
	case activities.ToolSnapshot:
		a, _ := argsAs[activities.SnapshotArgs](args)
		activity, input, out = activities.ActivitySnapshot, activities.SnapshotRequest{Call: call, Args: a}, &activities.SnapshotResult{}
	case activities.ToolRun:
		a, _ := argsAs[activities.RunArgs](args)
		activity, class, input, out = activities.ActivityRun, activities.ClassEffect, activities.RunRequest{Call: call, Args: a}, &activities.RunResult{}
	case activities.ToolScreenshot:
		a, _ := argsAs[activities.ScreenshotArgs](args)
		activity, input, out = activities.ActivityScreenshot, activities.ScreenshotRequest{Call: call, Args: a}, &activities.ScreenshotResult{}
	case activities.ToolRead:
		a, _ := argsAs[activities.ReadArgs](args)
		activity, input, out = activities.ActivityRead, activities.ReadRequest{Call: call, Args: a}, &activities.ReadResult{}
	case activities.ToolDownloads:
		activity, input, out = activities.ActivityDownloads, activities.DownloadsRequest{Call: call}, &activities.DownloadsResult{}
	case activities.ToolUpload:
		a, _ := argsAs[activities.UploadArgs](args)
		activity, class, input, out = activities.ActivityUpload, activities.ClassEffect, activities.UploadRequest{Call: call, Args: a}, &activities.UploadResult{}
	default:
		return nil, activities.Fail(activities.CodeRefused, "unknown tool %q: use one of %s", name, strings.Join(activities.ToolNames(), ", ")), nil
	}
	f, neverStarted, err := b.exec(ctx, activity, class, true, input, out)
	if err != nil {
		return nil, nil, err
	}
	if activity == activities.ActivityRun {
		b.settleHolds(ctx)
	}
	if neverStarted {
		// The call did nothing: its worker is gone, and the browser with it.
		b.st.Lost = true
		return nil, b.replace(ctx), nil
	}
	if f != nil {
		return nil, f, nil
	}
	return out, nil, nil
}

func orNil(out any, f *activities.Failure, err error) (any, *activities.Failure, error) {
	if err != nil || f != nil {
		return nil, f, err
	}
	return out, nil, nil
}

// exec runs one activity and reads its outcome. neverStarted reports a
// schedule-to-start timeout on a host queue; err is only for a cancelled workflow.
func (b *Browser) exec(ctx workflow.Context, activity string, class activities.ReplayClass, hosted bool, input, out any) (f *activities.Failure, neverStarted bool, err error) {
	queue := activities.SharedQueue
	if hosted {
		queue = b.st.Session.HostQueue
	}
	actx := workflow.WithActivityOptions(ctx, ActivityOptions(class, queue, hosted, b.t))
	aerr := workflow.ExecuteActivity(actx, activity, input).Get(ctx, out)
	if aerr == nil {
		return nil, false, nil
	}
	if ctx.Err() != nil {
		return nil, false, ctx.Err()
	}
	c := classify(aerr)
	if c.kind == kindNeverStarted && hosted {
		return nil, true, nil
	}
	return failureFor(class, c), false, nil
}

// ensure makes sure a usable session exists: it creates the first one, and
// replaces a lost one (answering session_replaced). The caller holds the lock.
func (b *Browser) ensure(ctx workflow.Context) *activities.Failure {
	switch {
	case b.st.Released:
		return sessionEnded()
	case !b.st.Created:
		return b.create(ctx, b.st.Seq+1, b.st.Options)
	case b.st.Lost:
		return b.replace(ctx)
	}
	return nil
}

// create opens (or finds) the session numbered seq.
func (b *Browser) create(ctx workflow.Context, seq int, opts activities.SessionOptions) *activities.Failure {
	tag := b.tagFor(seq)
	var res activities.CreateResult
	actx := workflow.WithActivityOptions(ctx, ActivityOptions(activities.ClassCustody, activities.SharedQueue, false, b.t))
	err := workflow.ExecuteActivity(actx, activities.ActivityCreate, activities.CreateRequest{Tag: tag, Options: opts}).Get(ctx, &res)
	if err != nil {
		if f, ok := activities.FailureFrom(err); ok {
			return f
		}
		return activities.Fail(activities.CodeBrowserUnavailable, "no browser could be opened for session %s; try again shortly, or check that a worker is running", tag)
	}
	if res.Session.Tag == "" {
		res.Session.Tag = tag
	}
	b.st.Session, b.st.Seq, b.st.Options = res.Session, seq, opts
	b.st.Created, b.st.Lost = true, false
	b.st.URL, b.st.Title = res.URL, res.Title
	b.changed(ctx)
	return nil
}

// releaseRemote asks any worker to release a remote session whose host was
// lost: unlike a local Chrome, a remote browser outlives its worker. Best
// effort; a local session is left to its machine's reaper.
func (b *Browser) releaseRemote(ctx workflow.Context, s activities.SessionRef) {
	if s.Tag == "" || s.Provider == "" || s.Provider == "local" {
		return
	}
	_, _, _ = b.exec(ctx, activities.ActivityRelease, activities.ClassCustody, false,
		activities.ReleaseRequest{Session: s}, &activities.ReleaseResult{})
}

// replace opens a new session after the old one was lost with its worker.
func (b *Browser) replace(ctx workflow.Context) *activities.Failure {
	old := b.st.Session.Tag
	b.releaseRemote(ctx, b.st.Session)
	if f := b.create(ctx, b.st.Seq+1, b.st.Options); f != nil {
		out := activities.Fail(activities.CodeBrowserUnavailable,
			"the browser %s was lost with its worker and a new one could not be opened; try again shortly", old)
		return out
	}
	b.st.URL, b.st.Title = "about:blank", ""
	return activities.Fail(activities.CodeSessionReplaced,
		"the browser %s was lost with its worker; a new one (%s) is open at about:blank with nothing loaded: navigate again with run, then take a snapshot",
		old, b.st.Session.Tag)
}

func (b *Browser) release(ctx workflow.Context) (any, *activities.Failure, error) {
	tag := b.st.Session.Tag
	if tag == "" {
		tag = b.tagFor(b.st.Seq + 1)
	}
	if !b.st.Created || b.st.Released || b.st.Lost {
		if b.st.Lost && !b.st.Released {
			b.releaseRemote(ctx, b.st.Session)
		}
		b.markReleased(ctx)
		return &activities.ReleaseResult{OK: true, Tag: tag}, nil, nil
	}
	out := &activities.ReleaseResult{}
	f, neverStarted, err := b.exec(ctx, activities.ActivityRelease, activities.ClassCustody, true,
		activities.ReleaseRequest{Session: b.st.Session}, out)
	if err != nil {
		return nil, nil, err
	}
	if neverStarted || (f != nil && f.Code == activities.CodeSessionEnded) {
		// The worker that held it is gone, and its browser with it.
		b.markReleased(ctx)
		return &activities.ReleaseResult{OK: true, Tag: tag}, nil, nil
	}
	if f != nil {
		return nil, f, nil
	}
	b.markReleased(ctx)
	out.OK = true
	if out.Tag == "" {
		out.Tag = tag
	}
	return out, nil, nil
}

func (b *Browser) markReleased(ctx workflow.Context) {
	b.st.Released = true
	b.changed(ctx)
}

func (b *Browser) relaunch(ctx workflow.Context, a activities.RelaunchArgs) (any, *activities.Failure, error) {
	if b.st.Released {
		return nil, sessionEnded(), nil
	}
	opts := b.st.Options
	if a.Stealth != nil {
		opts.Stealth = *a.Stealth
	}
	if a.Headed != nil {
		opts.Headed = *a.Headed
	}
	if a.Profile != nil {
		p := *a.Profile
		opts.Profile = &p
	}
	old, hadOld := b.st.Session, b.st.Created && !b.st.Lost
	if f := b.create(ctx, b.st.Seq+1, opts); f != nil {
		return nil, f, nil
	}
	if hadOld {
		var rr activities.ReleaseResult
		f, _, err := b.exec(ctx, activities.ActivityRelease, activities.ClassCustody, true, activities.ReleaseRequest{Session: old}, &rr)
		if err != nil {
			return nil, nil, err
		}
		if f != nil {
			workflow.GetLogger(ctx).Warn("releasing the relaunched session's old browser failed", "tag", old.Tag, "code", string(f.Code))
		}
	}
	return &RelaunchResult{OK: true, Session: b.st.Session, Previous: old.Tag, URL: b.st.URL, Title: b.st.Title}, nil, nil
}

func (b *Browser) changed(ctx workflow.Context) {
	if b.onChange != nil {
		b.onChange(ctx)
	}
}

func sessionEnded() *activities.Failure {
	return activities.Fail(activities.CodeSessionEnded, "this browser session was released; start a new session to keep browsing")
}

// tagFor names session seq: "<base>-<seq>", or the configured tag itself for the first.
func (b *Browser) tagFor(seq int) string {
	if b.cfg.Tag != "" && seq == 1 {
		return CleanTag(b.cfg.Tag, "")
	}
	return CleanTag(b.st.Base, "-"+strconv.Itoa(seq))
}

// CleanTag builds a session tag from base and suffix: characters outside
// [A-Za-z0-9_.-] become '-', and a result over MaxTagLen keeps a hash of the
// whole base, the tail of the base and the suffix, so tags stay unique.
func CleanTag(base, suffix string) string {
	return tags.Clean(base, suffix)
}

// argsAs reads typed arguments whether given as a value or a pointer.
func argsAs[T any](v any) (T, bool) {
	switch a := v.(type) {
	case T:
		return a, true
	case *T:
		if a != nil {
			return *a, true
		}
	}
	var zero T
	return zero, false
}

// pageOf finds the page a result left the browser on.
func pageOf(res any) *activities.Page {
	switch r := res.(type) {
	case *activities.SnapshotResult:
		return &r.Page
	case *activities.RunResult:
		return &r.Page
	case *activities.ScreenshotResult:
		return &r.Page
	case *activities.ReadResult:
		return &r.Page
	case *activities.UploadResult:
		return &r.Page
	case *HandoffResult:
		if r.Snapshot != nil {
			return &r.Snapshot.Page
		}
	}
	return nil
}
