package workflows

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/envelope"
	"github.com/durable-browser/durable-browser/internal/tags"
	"go.temporal.io/sdk/workflow"
)

// MaxTagLen bounds a session tag.
const MaxTagLen = 60

// Config opens a Browser.
type Config struct {
	// Session describes the browser wanted.
	Session contract.SessionOptions `json:"session"`
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
	// Approvers are the people whose signed decisions (approvals of holds,
	// answers to handoffs) this Browser acts on. They are read once per run
	// and recorded in history, so they may come from anywhere (workflow
	// input, the worker's configuration). Empty: unsigned decisions are
	// accepted from anyone who can signal the workflow.
	Approvers contract.Approvers `json:"approvers,omitempty"`
	// Sites are the sites the host grants use_website on, each with its
	// agent workflow; none: the tool is not offered and refused.
	Sites []contract.SiteGrant `json:"sites,omitempty"`
}

// BrowserState is everything a Browser remembers. It is plain,
// JSON-serialisable data, so it can be carried across continue-as-new.
type BrowserState struct {
	Base    string                  `json:"base"`
	Seq     int                     `json:"seq"`
	Session contract.SessionRef     `json:"session"`
	Options contract.SessionOptions `json:"options"`
	// Grants are the saved profiles the host granted (from the options it
	// opened the Browser with); a model's relaunch may use only these, or
	// those the worker grants.
	Grants   []contract.Profile `json:"grants,omitempty"`
	Created  bool               `json:"created,omitempty"`
	Lost     bool               `json:"lost,omitempty"`
	Released bool               `json:"released,omitempty"`
	URL      string             `json:"url,omitempty"`
	Title    string             `json:"title,omitempty"`
	Calls    int                `json:"calls,omitempty"`
	Guard    GuardState         `json:"guard"`
	Human    HumanState         `json:"human"`
	// TagScheme is how this session chain names its tags (tagScheme*).
	TagScheme int `json:"tag_scheme,omitempty"`
	// Usage sums the size of the answers given, per tool (see answer).
	Usage Usage `json:"usage,omitempty"`
	// Fence is the code page text is fenced with in answers (fenceNonce).
	Fence string `json:"fence,omitempty"`
	// Last is what the session's current details say of the calls served.
	Last LastCall `json:"last,omitempty"`
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
	// draining is set while signals are drained before continue-as-new:
	// a hold reported then is carried to the next run unnamed.
	draining bool
	// approvers, when set, are the only people whose decisions count.
	approvers contract.Approvers
	// reattaching is set while a call runs again after its lost worker's
	// browser was taken over, so a second loss is not taken over again.
	reattaching bool
	// summary is the line the Temporal UI shows for the activities of the
	// call being served (contract.Summary); metadata, not a command, so
	// changing its text never breaks replay.
	summary string
}

// newBrowser builds a Browser without creating anything.
func newBrowser(ctx workflow.Context, cfg Config) *Browser {
	b := &Browser{cfg: cfg, t: withDefaults(cfg.Timeouts), mu: workflow.NewMutex(ctx)}
	if cfg.Resume != nil {
		b.st = *cfg.Resume
		b.st.Grants = append(append([]contract.Profile(nil), b.st.Grants...), cfg.Session.HostGrants()...)
	} else {
		b.st.Grants = cfg.Session.HostGrants()
		b.st.Options = cfg.Session
		b.st.Base = cfg.Tag
		if b.st.Base == "" {
			b.st.Base = workflow.GetInfo(ctx).WorkflowExecution.ID
		}
	}
	return b
}

// Open creates (or finds, by tag) the browser right away and returns its
// handle. A failure to create is an *contract.Failure (browser_unavailable
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
	st.Usage = append(Usage(nil), st.Usage...)
	st.Guard.Unknown = append([]UnknownCall(nil), st.Guard.Unknown...)
	st.Guard.Repeats = append([]RepeatCount(nil), st.Guard.Repeats...)
	st.Human = b.st.Human.clone()
	return st
}

// Session returns the current session's reference (zero before creation).
func (b *Browser) Session() contract.SessionRef { return b.st.Session }

// validateCall checks a model's call: use_website against the sites
// granted, every other tool against its schema.
func (b *Browser) validateCall(ctx workflow.Context, name string, raw json.RawMessage) (any, *contract.Failure) {
	if name == contract.ToolUseWebsite && len(b.cfg.Sites) > 0 {
		return b.validateUseWebsite(ctx, raw)
	}
	return validateCall(ctx, name, raw)
}

// Tools lists the tools this Browser serves, for the model: every tool,
// and use_website when the host granted sites.
func (b *Browser) Tools() []contract.Tool { return contract.DefinitionsFor(b.cfg.Sites) }

// UseWebsite hands a task on a granted site to the host's agent for it.
func (b *Browser) UseWebsite(ctx workflow.Context, args contract.UseWebsiteArgs) (*contract.UseWebsiteResult, error) {
	return typed[contract.UseWebsiteResult](ctx, b, contract.ToolUseWebsite, args)
}

// Snapshot runs the snapshot tool.
func (b *Browser) Snapshot(ctx workflow.Context, args contract.SnapshotArgs) (*contract.SnapshotResult, error) {
	return typed[contract.SnapshotResult](ctx, b, contract.ToolSnapshot, args)
}

// Run runs a batch of actions. It runs at most once.
func (b *Browser) Run(ctx workflow.Context, args contract.RunArgs) (*contract.RunResult, error) {
	return typed[contract.RunResult](ctx, b, contract.ToolRun, args)
}

// Screenshot captures and files a screenshot.
func (b *Browser) Screenshot(ctx workflow.Context, args contract.ScreenshotArgs) (*contract.ScreenshotResult, error) {
	return typed[contract.ScreenshotResult](ctx, b, contract.ToolScreenshot, args)
}

// Read reads and files the page's content.
func (b *Browser) Read(ctx workflow.Context, args contract.ReadArgs) (*contract.ReadResult, error) {
	return typed[contract.ReadResult](ctx, b, contract.ToolRead, args)
}

// Check tests expectations on the page and files the verdict.
func (b *Browser) Check(ctx workflow.Context, args contract.CheckArgs) (*contract.CheckResult, error) {
	return typed[contract.CheckResult](ctx, b, contract.ToolCheck, args)
}

// Downloads lists and files the session's downloads.
func (b *Browser) Downloads(ctx workflow.Context, args contract.DownloadsArgs) (*contract.DownloadsResult, error) {
	return typed[contract.DownloadsResult](ctx, b, contract.ToolDownloads, args)
}

// Upload chooses a file in a file input. It runs at most once.
func (b *Browser) Upload(ctx workflow.Context, args contract.UploadArgs) (*contract.UploadResult, error) {
	return typed[contract.UploadResult](ctx, b, contract.ToolUpload, args)
}

// Release releases the browser. It is idempotent.
func (b *Browser) Release(ctx workflow.Context, args contract.ReleaseArgs) (*contract.ReleaseResult, error) {
	return typed[contract.ReleaseResult](ctx, b, contract.ToolRelease, args)
}

// Relaunch opens a new browser under a new tag, then releases the old one.
func (b *Browser) Relaunch(ctx workflow.Context, args contract.RelaunchArgs) (*contract.RelaunchResult, error) {
	return typed[contract.RelaunchResult](ctx, b, contract.ToolRelaunch, args)
}

// RequestHandoff asks a person for a step and waits for the answer or expiry.
func (b *Browser) RequestHandoff(ctx workflow.Context, args contract.HandoffArgs) (*contract.HandoffResult, error) {
	return typed[contract.HandoffResult](ctx, b, contract.ToolRequestHandoff, args)
}

// WebFetch fetches a public page without the browser.
func (b *Browser) WebFetch(ctx workflow.Context, args contract.WebFetchArgs) (*contract.WebFetchResult, error) {
	return typed[contract.WebFetchResult](ctx, b, contract.ToolWebFetch, args)
}

// WebSearch searches the web.
func (b *Browser) WebSearch(ctx workflow.Context, args contract.WebSearchArgs) (*contract.WebSearchResult, error) {
	return typed[contract.WebSearchResult](ctx, b, contract.ToolWebSearch, args)
}

// Close releases the browser; a failure to release is an *contract.Failure.
// Called with a cancelled ctx (`defer b.Close(ctx)` in a cancelled workflow)
// it still releases, in a disconnected context, ending a pending handoff.
func (b *Browser) Close(ctx workflow.Context) error {
	if ctx.Err() != nil && workflow.GetVersion(ctx, changeReleaseOnCancel, workflow.DefaultVersion, 1) != workflow.DefaultVersion {
		if f := b.releaseDisconnected(ctx); f != nil {
			return f
		}
		return nil
	}
	_, err := b.Release(ctx, contract.ReleaseArgs{})
	return err
}

// releaseDisconnected releases the browser from a workflow whose ctx is
// cancelled: it ends handoff waits, waits its turn (calls in flight give up
// with their cancelled contexts) and releases in a disconnected context.
func (b *Browser) releaseDisconnected(ctx workflow.Context) *contract.Failure {
	if b.st.Released {
		return nil
	}
	b.interrupt()
	dctx, cancel := workflow.NewDisconnectedContext(ctx)
	defer cancel()
	if err := b.mu.Lock(dctx); err != nil {
		return contract.Fail(contract.CodeAborted, "the release could not wait its turn: %v", err)
	}
	defer b.mu.Unlock()
	_, f, err := b.release(dctx)
	if err != nil {
		return contract.Fail(contract.CodeAborted, "the release was interrupted: %v", err)
	}
	return f
}

// CallTool serves a model's tool call by name: it validates the arguments,
// runs the tool and returns either the result JSON or the failure envelope
// JSON ({"ok":false,"code":...}). The error is only for what is not the
// model's to handle, such as the workflow being cancelled.
func (b *Browser) CallTool(ctx workflow.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	typedArgs, f := b.validateCall(ctx, name, args)
	if f != nil {
		return b.answer(ctx, name, f)
	}
	res, f, err := b.do(ctx, name, typedArgs, args, "")
	if err != nil {
		return nil, err
	}
	if f != nil {
		return b.answer(ctx, name, f)
	}
	return b.answer(ctx, name, res)
}

func typed[T any](ctx workflow.Context, b *Browser, name string, args any) (*T, error) {
	res, f, err := b.do(ctx, name, args, nil, "")
	if err != nil {
		return nil, err
	}
	if f != nil {
		_, _ = b.answer(ctx, name, f) // counted; the caller gets the typed failure
		return nil, f
	}
	_, _ = b.answer(ctx, name, res)
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
func (b *Browser) do(ctx workflow.Context, name string, args any, raw json.RawMessage, seed string) (any, *contract.Failure, error) {
	if raw == nil {
		var err error
		if raw, err = json.Marshal(args); err != nil {
			return nil, nil, err
		}
	}
	if name == contract.ToolUseWebsite {
		// The agent has a browser of its own: this one's lock is not held.
		a, ok := contract.ArgsOf[contract.UseWebsiteArgs](args)
		if !ok {
			return nil, contract.Fail(contract.CodeRefused, "use_website: arguments have the wrong type"), nil
		}
		return b.useWebsite(ctx, a)
	}
	if name == contract.ToolRequestHandoff {
		a, ok := contract.ArgsOf[contract.HandoffArgs](args)
		if !ok {
			return nil, contract.Fail(contract.CodeRefused, "browser_request_handoff: arguments have the wrong type"), nil
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
	b.summary = contract.Summary(name, args)
	defer func() { b.summary = "" }()
	hash := contract.CallHash(name, raw)
	if f := b.st.Guard.check(name, hash); f != nil {
		return nil, f, nil
	}
	res, f, err := b.dispatch(ctx, name, args)
	if err != nil {
		return nil, nil, err
	}
	if f != nil && f.Code == contract.CodeEffectUnknown && f.LastURL == "" {
		// The worker died before its first heartbeat: the page the call
		// started on is the last URL anyone knows.
		f.LastURL = b.st.URL
	}
	if f == nil || (f.Code != contract.CodeSessionReplaced && f.Code != contract.CodeSessionRestored && f.Code != contract.CodeBrowserUnavailable) {
		b.st.Guard.record(name, hash, f)
	}
	if f != nil && f.Code == contract.CodeSessionEnded && b.st.Created && !b.st.Released {
		// The worker no longer holds the browser: the next call opens a new one.
		b.st.Lost = true
	}
	if p := pageOf(res); p != nil && p.URL != "" {
		b.st.URL, b.st.Title = p.URL, p.Title
	}
	if f == nil {
		if jf := b.judgePage(ctx, args, res); jf != nil {
			res, f = nil, jf
		}
	}
	b.st.Last.note(b.summary, res, f)
	return res, f, nil
}

// dispatch runs one tool; the caller holds the lock. What activity serves
// it, on which queue, under which class, is read from the contract's
// registry (contract.SpecOf); only the custody tools have steps of their own.
func (b *Browser) dispatch(ctx workflow.Context, name string, args any) (any, *contract.Failure, error) {
	switch name {
	case contract.ToolRelease:
		return b.release(ctx)
	case contract.ToolRelaunch:
		a, _ := contract.ArgsOf[contract.RelaunchArgs](args)
		return b.relaunch(ctx, a)
	}
	spec, known := contract.SpecOf(name)
	known = known && spec.Request != nil
	if known && spec.Queue == contract.QueueShared {
		// Needs no browser: any worker serves it, and no session is made for it.
		out := spec.NewResult()
		f, _, err := b.exec(ctx, spec.Activity, spec.Class, false,
			spec.Request(contract.Call{Session: contract.SessionRef{Tag: b.st.Session.Tag}}, args), out)
		return orNil(out, f, err)
	}

	if b.st.Released {
		return nil, sessionEnded(), nil
	}
	if f := b.ensure(ctx); f != nil {
		return nil, f, nil
	}
	if !known {
		return nil, contract.Fail(contract.CodeRefused, "unknown tool %q: use one of %s", name, strings.Join(contract.ToolNames(), ", ")), nil
	}
	call := contract.Call{Session: b.st.Session, Policy: b.st.Options.ActionPolicy}
	activity, out := spec.Activity, spec.NewResult()
	f, neverStarted, err := b.exec(ctx, activity, spec.Class, true, spec.Request(call, args), out)
	if err != nil {
		return nil, nil, err
	}
	if activity == contract.ActivityRun {
		b.settleHolds(ctx)
	}
	if neverStarted {
		// The call did nothing: its worker is gone. A browser on that
		// worker went with it; one that runs elsewhere (a rented or an
		// attached browser) did not, and another worker attaches to it.
		if remote(b.st.Session) && !b.reattaching &&
			workflow.GetVersion(ctx, changeRemoteReattach, workflow.DefaultVersion, 1) != workflow.DefaultVersion {
			return b.reattach(ctx, name, args)
		}
		b.st.Lost = true
		return nil, b.replace(ctx), nil
	}
	if f != nil && f.Code == contract.CodeSessionEnded && !remote(b.st.Session) && b.restores(ctx) {
		// The host answered but no longer holds the browser (it crashed,
		// or the worker restarted under the same queue): nothing ran, and
		// the session is made again from its checkpoint now.
		b.st.Lost = true
		return nil, b.replace(ctx), nil
	}
	if f != nil {
		return nil, f, nil
	}
	return out, nil, nil
}

// restores says whether a lost host's session is made again from its
// checkpoint (change restore, and the session did not ask restore false).
func (b *Browser) restores(ctx workflow.Context) bool {
	return b.st.Options.Restores() &&
		workflow.GetVersion(ctx, changeRestore, workflow.DefaultVersion, 1) != workflow.DefaultVersion
}

func orNil(out any, f *contract.Failure, err error) (any, *contract.Failure, error) {
	if err != nil || f != nil {
		return nil, f, err
	}
	return out, nil, nil
}

// exec runs one activity and reads its outcome. neverStarted reports a
// schedule-to-start timeout on a host queue; err is only for a cancelled workflow.
func (b *Browser) exec(ctx workflow.Context, activity string, class contract.ReplayClass, hosted bool, input, out any) (f *contract.Failure, neverStarted bool, err error) {
	queue := contract.SharedQueue
	if hosted {
		queue = b.st.Session.HostQueue
	}
	actx := workflow.WithActivityOptions(ctx, summarized(ActivityOptions(class, queue, hosted, b.t), b.summary))
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
func (b *Browser) ensure(ctx workflow.Context) *contract.Failure {
	switch {
	case b.st.Released:
		return sessionEnded()
	case !b.st.Created:
		return b.create(ctx, b.st.Seq+1, b.st.Options, "")
	case b.st.Lost:
		return b.replace(ctx)
	}
	return nil
}

// create opens (or finds) the session numbered seq.
// replaces names the session it takes over from (a relaunch or a lost
// worker), which may hand over its profile.
func (b *Browser) create(ctx workflow.Context, seq int, opts contract.SessionOptions, replaces string) *contract.Failure {
	_, f := b.createFrom(ctx, seq, opts, replaces, false)
	return f
}

// createFrom is create; restore asks the new browser to be made from the
// last checkpoint of replaces.
func (b *Browser) createFrom(ctx workflow.Context, seq int, opts contract.SessionOptions, replaces string, restore bool) (*contract.CreateResult, *contract.Failure) {
	tag := b.tagFor(ctx, seq)
	var res contract.CreateResult
	queue := contract.SharedQueue
	if workflow.GetVersion(ctx, changeCreateQueue, workflow.DefaultVersion, 1) != workflow.DefaultVersion {
		queue = contract.CreateQueue
	}
	actx := workflow.WithActivityOptions(ctx, summarized(ActivityOptions(contract.ClassCustody, queue, false, b.t), openSummary(opts, replaces)))
	req := contract.CreateRequest{Tag: tag, Options: opts, Grants: b.st.Grants, Replaces: replaces, Restore: restore}
	err := workflow.ExecuteActivity(actx, contract.ActivityCreate, req).Get(ctx, &res)
	if err != nil {
		if f, ok := envelope.From(err); ok {
			return nil, f
		}
		if ctx.Err() == nil && classify(err).kind == kindNeverStarted {
			if queue == contract.CreateQueue {
				return nil, noWorkerTakesSessions()
			}
			return nil, noWorker()
		}
		return nil, contract.Fail(contract.CodeBrowserUnavailable, "no browser could be opened for session %s; try again shortly, or check that a durable-browser worker is running", tag)
	}
	if res.Session.Tag == "" {
		res.Session.Tag = tag
	}
	b.st.Session, b.st.Seq, b.st.Options = res.Session, seq, opts
	b.st.Created, b.st.Lost = true, false
	b.st.URL, b.st.Title = res.URL, res.Title
	b.changed(ctx)
	return &res, nil
}

// remote says the session's browser runs outside its worker (any provider
// but local), so it outlives that worker.
func remote(s contract.SessionRef) bool {
	return s.Tag != "" && s.Provider != "" && s.Provider != "local"
}

// reattach serves a call whose worker was lost, on a session whose browser
// outlives workers: any worker finds the browser by the session's tag and
// takes it over (browser.create of the same tag), and the call runs there,
// on the page the last call left. If the browser had ended meanwhile (its
// provider's timeout), the create opened a new one under the tag, and the
// call answers session_replaced as for a lost local browser.
func (b *Browser) reattach(ctx workflow.Context, name string, args any) (any, *contract.Failure, error) {
	tag := b.st.Session.Tag
	var res contract.CreateResult
	actx := workflow.WithActivityOptions(ctx, summarized(ActivityOptions(contract.ClassCustody, contract.SharedQueue, false, b.t), "take over browser "+tag+" (its worker was lost)"))
	req := contract.CreateRequest{Tag: tag, Options: b.st.Options, Grants: b.st.Grants}
	if err := workflow.ExecuteActivity(actx, contract.ActivityCreate, req).Get(ctx, &res); err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		b.st.Lost = true
		if f, ok := envelope.From(err); ok {
			return nil, f, nil
		}
		return nil, contract.Fail(contract.CodeBrowserUnavailable,
			"the worker holding browser %s was lost and no other worker could take the browser over; try again shortly", tag), nil
	}
	if res.Session.Tag == "" {
		res.Session.Tag = tag
	}
	b.st.Session, b.st.Lost = res.Session, false
	b.st.URL, b.st.Title = res.URL, res.Title
	b.changed(ctx)
	if !res.Found {
		return nil, contract.Fail(contract.CodeSessionReplaced,
			"the browser %s had ended with its worker gone; a new one is open under the same session at about:blank with nothing loaded: navigate again with run, then take a snapshot", tag), nil
	}
	// Once: a second lost worker in a row is answered as lost.
	b.reattaching = true
	defer func() { b.reattaching = false }()
	return b.dispatch(ctx, name, args)
}

// releaseRemote asks any worker to release a remote session whose host was
// lost: unlike a local Chrome, a remote browser outlives its worker. Best
// effort; a local session is left to its machine's reaper.
func (b *Browser) releaseRemote(ctx workflow.Context, s contract.SessionRef) {
	if s.Tag == "" || s.Provider == "" || s.Provider == "local" {
		return
	}
	defer b.summarize("release browser " + s.Tag + " (its worker was lost)")()
	_, _, _ = b.exec(ctx, contract.ActivityRelease, contract.ClassCustody, false,
		contract.ReleaseRequest{Session: s}, &contract.ReleaseResult{})
}

// replace opens a new session after the old one was lost with its worker.
func (b *Browser) replace(ctx workflow.Context) *contract.Failure {
	old := b.st.Session.Tag
	b.releaseRemote(ctx, b.st.Session)
	restore := b.restores(ctx)
	res, f := b.createFrom(ctx, b.st.Seq+1, b.st.Options, old, restore)
	if f != nil {
		out := contract.Fail(contract.CodeBrowserUnavailable,
			"the browser %s was lost with its worker and a new one could not be opened; try again shortly", old)
		return out
	}
	if restore && res.Restored != nil {
		afterRestore(ctx)
		return restoredFailure(old, b.st.Session.Tag, b.st.URL, res.Restored)
	}
	b.st.URL, b.st.Title = "about:blank", ""
	return contract.Fail(contract.CodeSessionReplaced,
		"the browser %s was lost with its worker; a new one (%s) is open at about:blank with nothing loaded: navigate again with run, then take a snapshot",
		old, b.st.Session.Tag)
}

func (b *Browser) release(ctx workflow.Context) (any, *contract.Failure, error) {
	tag := b.st.Session.Tag
	if tag == "" {
		tag = b.tagFor(ctx, b.st.Seq+1)
	}
	if !b.st.Created || b.st.Released || b.st.Lost {
		if b.st.Lost && !b.st.Released {
			b.releaseRemote(ctx, b.st.Session)
		}
		b.markReleased(ctx)
		return &contract.ReleaseResult{OK: true, Tag: tag}, nil, nil
	}
	out := &contract.ReleaseResult{}
	f, neverStarted, err := b.exec(ctx, contract.ActivityRelease, contract.ClassCustody, true,
		contract.ReleaseRequest{Session: b.st.Session}, out)
	if err != nil {
		return nil, nil, err
	}
	if neverStarted || (f != nil && f.Code == contract.CodeSessionEnded) {
		// The worker that held it is gone, and its browser with it, unless
		// the browser runs elsewhere: then any worker releases it.
		if neverStarted && remote(b.st.Session) &&
			workflow.GetVersion(ctx, changeRemoteReattach, workflow.DefaultVersion, 1) != workflow.DefaultVersion {
			b.releaseRemote(ctx, b.st.Session)
		}
		b.markReleased(ctx)
		return &contract.ReleaseResult{OK: true, Tag: tag}, nil, nil
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

func (b *Browser) relaunch(ctx workflow.Context, a contract.RelaunchArgs) (any, *contract.Failure, error) {
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
	if f := b.create(ctx, b.st.Seq+1, opts, old.Tag); f != nil {
		return nil, f, nil
	}
	if hadOld {
		defer b.summarize("release browser " + old.Tag + " (relaunched)")()
		var rr contract.ReleaseResult
		f, _, err := b.exec(ctx, contract.ActivityRelease, contract.ClassCustody, true, contract.ReleaseRequest{Session: old}, &rr)
		if err != nil {
			return nil, nil, err
		}
		if f != nil {
			workflow.GetLogger(ctx).Warn("releasing the relaunched session's old browser failed", "tag", old.Tag, "code", string(f.Code))
		}
	}
	return &contract.RelaunchResult{OK: true, Session: b.st.Session, Previous: old.Tag, URL: b.st.URL, Title: b.st.Title}, nil, nil
}

func (b *Browser) changed(ctx workflow.Context) {
	if b.onChange != nil {
		b.onChange(ctx)
	}
}

func sessionEnded() *contract.Failure {
	return contract.Fail(contract.CodeSessionEnded, "this browser session was released; start a new session to keep browsing")
}

// Tag schemes, kept in BrowserState.TagScheme so a session chain never
// switches scheme midway.
const (
	tagSchemeUnset     = 0
	tagSchemeLegacy    = 1 // tags.Clean: look-alike ids could share a tag
	tagSchemeInjective = 2 // tags.Encode
)

// tagFor names session seq: "<base>-<seq>", or the configured tag itself for
// the first. A session that made its first tag before the injective scheme
// keeps the legacy one (for replay, and so its tags stay recognisable).
func (b *Browser) tagFor(ctx workflow.Context, seq int) string {
	if b.st.TagScheme == tagSchemeUnset {
		b.st.TagScheme = tagSchemeLegacy
		if b.st.Seq == 0 && workflow.GetVersion(ctx, changeInjectiveTags, workflow.DefaultVersion, 1) != workflow.DefaultVersion {
			b.st.TagScheme = tagSchemeInjective
		}
	}
	mapping := tags.Encode
	if b.st.TagScheme == tagSchemeLegacy {
		mapping = tags.Clean
	}
	if b.cfg.Tag != "" && seq == 1 {
		return mapping(b.cfg.Tag, "")
	}
	return mapping(b.st.Base, "-"+strconv.Itoa(seq))
}

// SessionTag is the tag of session seq of a workflow (or Config.Tag) under
// the current scheme, for callers that look a session's evidence up by tag.
func SessionTag(base string, seq int) string {
	return tags.Encode(base, "-"+strconv.Itoa(seq))
}

// pageOf finds the page a result left the browser on: the Page it embeds,
// or a handoff's snapshot's.
func pageOf(res any) *contract.Page {
	switch r := res.(type) {
	case interface{ PageOf() *contract.Page }:
		return r.PageOf()
	case *contract.HandoffResult:
		if r.Snapshot != nil {
			return &r.Snapshot.Page
		}
	}
	return nil
}

// restoredFailure is the answer of a call whose host was lost and whose
// session was made again from its last checkpoint: the call did nothing.
func restoredFailure(old, tag, url string, r *contract.Restored) *contract.Failure {
	back := 0
	for _, t := range r.Tabs {
		if t.Reason == "" {
			back++
		}
	}
	f := contract.Fail(contract.CodeSessionRestored,
		"the browser %s was lost (its worker or the browser itself) and this call did nothing; a new one (%s) was made from its last checkpoint: %d cookies, %d of %d tabs loaded again by GET, the active one at %s. Form fields typed but not submitted, IndexedDB and any open dialog did not come back, and a page reached by POST was not sent again. Snapshot ids are stale: take a snapshot, then go on",
		old, tag, r.Cookies, back, len(r.Tabs), url)
	f.Restored = r
	return f
}
