package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"go.temporal.io/sdk/activity"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/contract/validate"
	"github.com/durable-browser/durable-browser/internal/capture"
	"github.com/durable-browser/durable-browser/internal/driver"
	"github.com/durable-browser/durable-browser/internal/listed"
	"github.com/durable-browser/durable-browser/internal/liveview"
	"github.com/durable-browser/durable-browser/internal/redact"
	"github.com/durable-browser/durable-browser/internal/scrub"
)

// Snapshot answers the snapshot tool.
func (a *Activities) Snapshot(ctx context.Context, req contract.SnapshotRequest) (*contract.SnapshotResult, error) {
	s, done, err := a.begin(ctx, req.Session, nil)
	if err != nil {
		return nil, err
	}
	defer done()
	res, f := a.snapshot(ctx, s, req.Args)
	if f != nil {
		return nil, f
	}
	s.stamp(&res.Page)
	markBuild(res)
	return res, nil
}

// snapshot takes a snapshot as the snapshot tool and a code cell's
// page.snapshot answer it, its URL scrubbed.
func (a *Activities) snapshot(ctx context.Context, s *liveSession, args contract.SnapshotArgs) (*contract.SnapshotResult, *contract.Failure) {
	res, err := s.browser.Snapshot(ctx, driver.SnapshotOptions{Mode: args.Mode, Scope: args.Scope, Offset: args.Offset, Since: args.Since,
		Budget: args.Budget, Find: args.Find, Role: args.Role})
	if err != nil {
		return nil, driverFailure(err)
	}
	res.URL = scrub.URL(res.URL)
	return res, nil
}

// Run answers the run tool: a batch of actions, sent one at a time. It runs
// at most once; while it works it heartbeats its progress and the
// side-effecting requests it let go, so a lost worker can say what was sent.
func (a *Activities) Run(ctx context.Context, req contract.RunRequest) (*contract.RunResult, error) {
	if _, f := a.session(req.Session); f != nil {
		return nil, f
	}
	// The run schema is the one definition of the ops and their fields: the
	// batch is held to it here, whoever built the request, and the driver
	// checks only what a schema cannot say.
	rawArgs, err := json.Marshal(req.Args)
	if err != nil {
		return nil, contract.Fail(contract.CodeRefused, "run.actions: not valid JSON; send an array of action objects such as [{\"op\":\"click\",\"id\":\"5\"}]")
	}
	if _, f := validate.Call(contract.ToolRun, rawArgs); f != nil {
		return nil, f
	}
	if req.Args.Code != "" {
		return a.runCell(ctx, req)
	}
	actions, err := driver.ParseActions(req.Args.Actions)
	if err != nil {
		return nil, contract.Fail(contract.CodeRefused, "%v", err)
	}
	if f := a.expandSecrets(actions, 0); f != nil {
		return nil, f
	}
	ctx, cancelStop := a.untilStopped(ctx)
	defer cancelStop()
	ctx, rs := a.startRun(ctx, req.Policy)
	s, done, err := a.begin(ctx, req.Session, func(s *liveSession) any {
		return rs.progress(s.browser.URL(ctx), s.browser.SentSoFar())
	})
	if err != nil {
		return nil, err
	}
	defer done()
	defer s.holdSecretFrames(actions)()

	out, err := s.browser.Run(ctx, actions, driver.RunOptions{Observe: string(req.Args.Observe)})
	if err != nil && ctx.Err() != nil {
		// The call's context ended (its worker stopping, a cancel, its
		// deadline): whatever ended it, a begun batch may have acted.
		if out == nil {
			// Refused before any action: nothing was sent.
			return nil, contract.Fail(contract.CodeAborted, "the call ended before it ran, so nothing was sent; call again")
		}
		l := rs.lists(a.redactSent(out.Sent), out.NotListed)
		f := a.cutMidCall(ctx, s, out.URL, l.sent)
		f.Held, f.NotListed = l.held, l.failureCounts()
		f.Completed = &out.Completed
		return nil, f
	}
	if out == nil {
		return nil, driverFailure(err)
	}
	res := a.redactRun(out)
	res.OK = err == nil
	// The request gate's journal, when it kept one, is what the run sent.
	l := rs.lists(res.Sent, res.NotListed)
	res.Sent, res.Held, res.NotListed = l.sent, l.held, l.notListed
	if err != nil {
		// A batch stopped partway is a result the model can act on: it says
		// how many actions completed and which failed. It goes back as a
		// failure envelope whose detail carries the partial result.
		f := driverFailure(err)
		var refused *driver.RefusedError
		if errors.As(err, &refused) {
			f.Message = refusalMessage(out.Failed, rs.policy, refused, rs.decisions())
		}
		var ae *driver.ActionError
		if len(res.Sent) > 0 || out.Completed > 0 || (errors.As(err, &ae) && ae.MayHaveActed) {
			f.Effected()
		}
		f.LastURL = res.URL
		f.Sent = res.Sent
		f.Held = res.Held
		f.NotListed = l.failureCounts()
		f.Completed = &res.Completed
		where := res.URL
		if where == "" {
			// A failed navigation leaves the browser's own error page,
			// whose address is no page's.
			where = "the browser's error page"
		}
		f.WithDetail(fmt.Sprintf("completed %d of %d actions; now at %s (%s)", res.Completed, res.Total, where, res.Title))
		if out.Completed > 0 {
			a.saveAfterEffect(ctx, s)
		}
		return nil, f
	}
	a.saveAfterEffect(ctx, s)
	s.stamp(&res.Page)
	return res, nil
}

// expandSecrets resolves {{secret:NAME}} on the worker: the value goes to
// the page and into the worker's redactor (the Secrets know it), never into
// history. first numbers the
// actions in messages.
func (a *Activities) expandSecrets(actions []driver.Action, first int) *contract.Failure {
	for i := range actions {
		for _, field := range []*string{&actions[i].Value, &actions[i].Text} {
			if !redact.HasSecrets(*field) {
				continue
			}
			v, used, err := a.o.Secrets.Expand(*field)
			if err != nil {
				return contract.Fail(contract.CodeRefused, "action %d: %v", first+i+1, err)
			}
			*field = v
			// The driver types them only into frames of their origins
			// and keeps them from leaving toward any other.
			actions[i].Secrets = append(actions[i].Secrets, used...)
		}
	}
	return nil
}

// Screenshot captures the page, files it and returns a claim check.
func (a *Activities) Screenshot(ctx context.Context, req contract.ScreenshotRequest) (*contract.ScreenshotResult, error) {
	s, done, err := a.beginPage(ctx, req.Session)
	if err != nil {
		return nil, err
	}
	defer done()
	res, f := a.screenshot(ctx, s, req.Args, "")
	if f != nil {
		return nil, f
	}
	return res, nil
}

// screenshot captures and files one screenshot; suffix separates several
// filed by one call (a code cell's).
func (a *Activities) screenshot(ctx context.Context, s *liveSession, args contract.ScreenshotArgs, suffix string) (*contract.ScreenshotResult, *contract.Failure) {
	if f := args.Check(); f != nil {
		// Also for a caller that schedules the activity by name, unchecked.
		return nil, f
	}
	req := struct{ Args contract.ScreenshotArgs }{args}
	o := driver.ScreenshotOptions{FullPage: req.Args.FullPage, ID: strings.TrimSpace(req.Args.ID), Selector: strings.TrimSpace(req.Args.Selector), Type: req.Args.Type, Quality: req.Args.Quality,
		Locator: req.Args.Locator}
	if c := req.Args.Clip; c != nil && c.Width > 0 && c.Height > 0 {
		r := contract.Rect(*c)
		o.Clip = &r
	}
	shot, err := s.browser.Screenshot(ctx, o)
	if err != nil {
		return nil, driverFailure(err)
	}
	url, title := scrub.URL(s.browser.URL(ctx)), s.browser.Title(ctx)
	ct := "image/" + shot.Type
	cc, err := a.file(ctx, filing{
		tool: contract.ToolScreenshot, args: req.Args, session: s.ref.Tag, ext: shot.Type, contentType: ct,
		body: shot.Bytes, finalURL: url, title: title, extractor: "screenshot", callSuffix: suffix,
	})
	if err != nil {
		return nil, evidenceFailure(err)
	}
	res := &contract.ScreenshotResult{
		OK: true, Page: contract.Page{URL: url, Title: title}, Evidence: cc, Type: shot.Type,
		Width: shot.Width, Height: shot.Height, DPR: shot.DPR,
		Region: shot.Region,
	}
	res.Cut = shot.CutReport()
	s.stamp(&res.Page)
	return res, nil
}

// Read answers browser_read and files what was read.
func (a *Activities) Read(ctx context.Context, req contract.ReadRequest) (*contract.ReadResult, error) {
	s, done, err := a.beginPage(ctx, req.Session)
	if err != nil {
		return nil, err
	}
	defer done()
	r, err := s.browser.Read(ctx, driver.ReadOptions{What: req.Args.What})
	if err != nil {
		return nil, driverFailure(err)
	}
	body := r.Raw
	ct := r.RawType
	if ct == "" {
		ct = "text/plain; charset=utf-8"
	}
	ext := "txt"
	switch {
	case strings.Contains(ct, "html"):
		ext = "html"
	case strings.Contains(ct, "markdown"):
		ext = "md"
	}
	url := scrub.URL(r.URL)
	var cut string
	if r.RawCut {
		cut = receiptCut(r)
	}
	cc, err := a.file(ctx, filing{
		tool: contract.ToolRead, args: req.Args, session: s.ref.Tag, ext: ext, contentType: ct, body: body,
		finalURL: url, title: r.Title, extractor: r.Extractor, cut: cut,
	})
	if err != nil {
		return nil, evidenceFailure(err)
	}
	res := &contract.ReadResult{
		OK: true, Page: contract.Page{URL: url, Title: r.Title}, What: r.What, Status: r.Status, Content: r.Content,
		Extractor: r.Extractor, Truncated: r.Truncated, FullLength: r.FullLength, Evidence: cc,
	}
	if r.RawCut {
		res.FiledCut, res.Note = capture.MaxRawBytes, filedCutNote(r, cc.Size)
	}
	s.stamp(&res.Page)
	return res, nil
}

// receiptCut is the cut a read's receipt records: the body filed is the
// first part of what the read saw.
func receiptCut(r *driver.ReadResult) string {
	if r.SourceCut {
		return fmt.Sprintf("the markdown of the first %d bytes of the page's HTML, which is over the read cap", capture.MaxRawBytes)
	}
	return fmt.Sprintf("the first part, at most %d bytes (the read cap), of the page's %s of %d characters", capture.MaxRawBytes, r.What, r.FullLength)
}

// filedCutNote says how a read's evidence was cut at the read cap
// (capture.MaxRawBytes), so no answer claims a whole it did not file.
func filedCutNote(r *driver.ReadResult, filed int64) string {
	const limit = "the %d-byte (8 MiB) cap on what a read converts and files"
	if r.SourceCut {
		return fmt.Sprintf("the page's HTML is over "+limit+": only its first %d bytes were converted to markdown, "+
			"so the markdown, full_length and the evidence (%d bytes) cover that part only, not the whole page",
			capture.MaxRawBytes, capture.MaxRawBytes, filed)
	}
	what := r.What
	switch what {
	case capture.ReadHTML:
		what = "HTML"
	case capture.ReadMarkdown:
		what = "markdown"
	}
	return fmt.Sprintf("the page's %s is %d characters (full_length), over "+limit+": the evidence holds its first %d bytes only, not the whole",
		what, r.FullLength, capture.MaxRawBytes, filed)
}

// Upload sets a local file on a file input. It runs at most once.
// Upload sets a file from the host's upload directory on a file input. It
// runs at most once. The model names the file relative to --upload-dir;
// without one, every upload is refused.
func (a *Activities) Upload(ctx context.Context, req contract.UploadRequest) (*contract.UploadResult, error) {
	if _, f := a.session(req.Session); f != nil {
		return nil, f
	}
	if a.o.UploadDir == "" {
		return nil, contract.Fail(contract.CodeRefused, "uploads are off on this worker: the host allows them by naming a directory of files with --upload-dir (DURABLE_BROWSER_UPLOAD_DIR); a model cannot")
	}
	file, err := vetUpload(a.o.UploadDir, req.Args.Path)
	if err != nil {
		return nil, a.uploadRefusal(req.Args.Path, err)
	}
	ctx, cancelStop := a.untilStopped(ctx)
	defer cancelStop()
	s, done, err := a.begin(ctx, req.Session, nil)
	if err != nil {
		return nil, err
	}
	defer done()
	if err := s.browser.Upload(ctx, uploadTarget(req.Args), file.Path); err != nil {
		if ctx.Err() != nil {
			return nil, a.cutMidCall(ctx, s, "", nil)
		}
		return nil, driverFailure(err)
	}
	a.saveAfterEffect(ctx, s)
	res := &contract.UploadResult{OK: true, Page: contract.Page{URL: scrub.URL(s.browser.URL(ctx)), Title: s.browser.Title(ctx)}, Name: file.Name, Bytes: file.Size}
	s.stamp(&res.Page)
	return res, nil
}

// begin opens a call on a session this process holds: it heartbeats (with
// details, when given) from the start, waits for the session's turn, and
// returns done to end the call.
func (a *Activities) begin(ctx context.Context, ref contract.SessionRef, details func(*liveSession) any) (*liveSession, func(), error) {
	s, f := a.session(ref)
	if f != nil {
		return nil, nil, f
	}
	var beat func() any
	if details != nil {
		beat = func() any { return details(s) }
	}
	stop := a.heartbeat(ctx, beat)
	if f := s.lock(ctx); f != nil {
		stop()
		return nil, nil, f
	}
	if f := a.crashed(ctx, s); f != nil {
		s.unlock()
		stop()
		return nil, nil, f
	}
	if f := s.agentTurn(); f != nil {
		s.unlock()
		stop()
		return nil, nil, f
	}
	return s, func() {
		s.followActiveTab(ctx)
		// What a person did in the browser is saved as a run's effects
		// are, by the first call after their handoff.
		if s.handedOff.Swap(false) {
			a.saveAfterEffect(ctx, s)
		}
		s.unlock()
		stop()
	}, nil
}

// refusalMessage says why the request gate refused a request: the
// session's policy (deny), or a person's decision or its absence (ask),
// the newest of held (the run's last decisions) for the request.
func refusalMessage(failed *contract.ActionFailure, policy string, r *driver.RefusedError, held []contract.HeldRequest) string {
	at := ""
	if failed != nil {
		at = fmt.Sprintf("action %d (%s): ", failed.Index+1, failed.Op)
	}
	req := fmt.Sprintf("request %s %s%s", r.Method, r.Origin, r.Path)
	if policy == contract.PolicyDeny {
		return at + req + " was refused: this session's action policy is deny, which refuses every request with side effects (no one is asked). Send it from a session whose policy is allow or ask, or do without it"
	}
	for i := len(held) - 1; i >= 0; i-- {
		h := held[i]
		if h.Method != r.Method || h.Origin != r.Origin || h.Path != r.Path {
			continue
		}
		switch h.Decision {
		case contract.DecisionExpired:
			return at + req + " was refused: it was held for a person's approval and no one decided in time. Ask again later, or ask a person to watch `durable-browser approvals list`"
		case contract.DecisionCancelled:
			return at + req + " was refused unsent: the session was released while it waited for a person's approval"
		case heldBlocked:
			return fmt.Sprintf("%s%s was refused unasked: the session already held %d requests waiting for a person, the most it may. Wait for those to be decided, then send it again", at, req, MaxHolds)
		case "denied", contract.DecisionDeny:
			by := ""
			if h.By != "" {
				by = " (" + h.By + ")"
			}
			return at + req + " was refused: a person" + by + " denied it. Do not send it again unchanged"
		}
	}
	return at + req + " was refused by the session's action policy; change the action, or ask a person to approve it under policy ask"
}

// beginPage is begin for calls that work on the active tab's page. The
// driver checks the active tab itself, under its own lock.
func (a *Activities) beginPage(ctx context.Context, ref contract.SessionRef) (*liveSession, func(), error) {
	return a.begin(ctx, ref, nil)
}

// driverFailure maps the driver's and capture's typed errors to codes.
func driverFailure(err error) *contract.Failure {
	var stale *driver.StaleError
	var actErr *driver.ActionError
	var refused *driver.RefusedError
	var blocked *driver.BlockedError
	var parse *driver.ParseError
	var capRefused *capture.RefusedError
	switch {
	case err == nil:
		return contract.Fail(contract.CodeCommandFailed, "the browser gave no result; take a snapshot and try again")
	case errors.Is(err, driver.ErrNoTab):
		// The driver could not even open a tab in place of the last one:
		// trying again finds the same browser; only a new one helps.
		f := contract.Fail(contract.CodeCommandFailed, "%v", err)
		f.Retryable = false
		return f
	case errors.Is(err, liveview.ErrPersonDriving):
		// Before ActionError: the take-over gate refused it, never sent.
		var de *liveview.DrivingError
		if errors.As(err, &de) {
			return personDriving(de)
		}
		return personDriving(err)
	case errors.As(err, &blocked):
		// A policy refusal, whichever action's navigation met it: blocked,
		// as web_fetch answers the same decision, so no caller retries it.
		return contract.Fail(contract.CodeBlocked, "%v", err)
	case errors.Is(err, driver.ErrBusy):
		// The page's own script held it past the action timeout: stopped,
		// a later call may find it well (timeout, retryable); not stopped,
		// only a new browser helps.
		var be *driver.BusyError
		if errors.As(err, &be) && !be.Stopped {
			return contract.Fail(contract.CodeCommandFailed, "%v", err)
		}
		return contract.Fail(contract.CodeTimeout, "%v", err)
	case errors.As(err, &actErr) && !errors.Is(err, context.Canceled):
		// Before the bare timeout: an action that ran out of time says
		// which action and what it waited for.
		switch actErr.Kind {
		case driver.KindTimeout:
			return contract.Fail(contract.CodeTimeout, "%v", err)
		case driver.KindStale:
			return contract.Fail(contract.CodeStaleSnapshot, "%v", err)
		case driver.KindRefused, driver.KindLocator:
			return contract.Fail(contract.CodeRefused, "%v", err)
		case driver.KindBrowser:
			return contract.Fail(contract.CodeBrowserUnavailable, "%v", err)
		}
		return contract.Fail(contract.CodeCommandFailed, "%v", err)
	case errors.Is(err, context.Canceled):
		return contract.Fail(contract.CodeAborted, "the call was cancelled")
	case errors.Is(err, context.DeadlineExceeded):
		return contract.Fail(contract.CodeTimeout, "the call ran out of time; take a snapshot to see where the page is")
	case errors.As(err, &stale), errors.Is(err, driver.ErrNoSnapshot):
		return contract.Fail(contract.CodeStaleSnapshot, "%v", err)
	case errors.Is(err, driver.ErrPending):
		// The page waits on a server; nothing was done, and a later call
		// may succeed.
		return contract.Fail(contract.CodeTimeout, "%v", err)
	case errors.As(err, &refused):
		return contract.Fail(contract.CodeRefused, "%v", err)
	case errors.As(err, &parse):
		return contract.Fail(contract.CodeRefused, "%v", err)
	case errors.As(err, new(*driver.FindError)):
		return contract.Fail(contract.CodeRefused, "%v", err)
	case errors.As(err, &capRefused):
		return contract.Fail(contract.CodeRefused, "%v", err)
	}
	return contract.Fail(contract.CodeBrowserUnavailable, "the browser did not answer; try again, or relaunch it with browser_relaunch").WithDetail(err.Error())
}

// runStateKey carries a run's state to the session's request gate.
type runStateKey struct{}

// runState is one run's journal: what it let go and what it held.
type runState struct {
	a                             *Activities
	policy                        string
	workflowID, runID, activityID string

	holds int64 // atomic: numbers hold ids

	mu   sync.Mutex
	sent listed.List[contract.SentRequest]
	// held are the requests a person was asked about (they have a hold
	// id), apart from those refused unasked (policy deny, too many
	// holds), so a page's many refusals cannot crowd a person's
	// decisions out of the answer.
	held, unasked listed.List[contract.HeldRequest]
	// recent are the last decisions, newest last, whatever held kept: the
	// refusal of an action's own request is among them even after a page's
	// many other requests filled held.
	recent []contract.HeldRequest
}

// recentHolds is how many of the last decisions a run keeps apart.
const recentHolds = 16

// runLists are the lists a run's answer carries from its journal.
type runLists struct {
	sent      []contract.SentRequest
	held      []contract.HeldRequest
	notListed *contract.NotListed
}

// lists is what the run's request gate kept, the requests it let go (when
// it kept any: else sent, the driver's list) and those it held or
// refused, with the counts past each list's bound merged into nl, the
// counts of the driver's own lists.
func (r *runState) lists(sent []contract.SentRequest, nl *contract.NotListed) runLists {
	r.mu.Lock()
	defer r.mu.Unlock()
	var n contract.NotListed
	if nl != nil {
		n = *nl
	}
	if r.sent.Count() > 0 {
		sent, n.Sent = r.sent.Items(), r.sent.More()
	}
	// The asked first, then the unasked as room allows.
	held := r.held.Items()
	room := max(listed.Max-len(held), 0)
	unasked := r.unasked.Items()
	if len(unasked) > room {
		unasked = unasked[:room]
	}
	held = append(held, unasked...)
	n.Held = r.held.Count() + r.unasked.Count() - len(held)
	return runLists{sent: sent, held: held, notListed: n.OrNil()}
}

// failureCounts is what a failure, which carries only sent and held of a
// run's lists, counts past them.
func (l runLists) failureCounts() *contract.NotListed {
	if l.notListed == nil {
		return nil
	}
	return contract.NotListed{Sent: l.notListed.Sent, Held: l.notListed.Held}.OrNil()
}

// decisions are the run's last decisions, newest last.
func (r *runState) decisions() []contract.HeldRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]contract.HeldRequest(nil), r.recent...)
}

func (r *runState) progress(url string, sent []contract.SentRequest) contract.RunProgress {
	p := contract.RunProgress{URL: scrub.URL(url), Sent: r.sentList()}
	if len(p.Sent) == 0 {
		p.Sent = r.a.redactSent(sent)
	}
	return p
}

// startRun opens a run's journal (a batch's or a code cell's) and puts it
// in ctx, where the session's request gate finds it.
func (a *Activities) startRun(ctx context.Context, policy string) (context.Context, *runState) {
	rs := &runState{a: a, policy: policy}
	if activity.IsActivity(ctx) {
		info := activity.GetInfo(ctx)
		rs.workflowID, rs.runID, rs.activityID = info.WorkflowExecution.ID, info.WorkflowExecution.RunID, info.ActivityID
	}
	return context.WithValue(ctx, runStateKey{}, rs), rs
}

// redactRun scrubs the addresses a driver's run result carries, in place
// (the rest of it is redacted as every result is, whole): its page's,
// its requests' and its new tabs'.
func (a *Activities) redactRun(res *contract.RunResult) *contract.RunResult {
	res.URL = scrub.URL(res.URL)
	res.Sent = a.redactSent(res.Sent)
	for i := range res.Blocked {
		res.Blocked[i].Origin = scrub.URL(res.Blocked[i].Origin)
	}
	for i := range res.TabsOpened {
		res.TabsOpened[i].URL = scrub.URL(res.TabsOpened[i].URL)
	}
	return res
}

// redactSent scrubs the driver's journal of requests in place: no query
// values or userinfo in an origin (the redaction gate finds secrets in
// the rest).
func (a *Activities) redactSent(sent []contract.SentRequest) []contract.SentRequest {
	for i := range sent {
		sent[i].Origin = scrub.URL(sent[i].Origin)
	}
	return sent
}

func (r *runState) sentList() []contract.SentRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sent.Items()
}

// uploadTarget is the file input an upload names, by id or by locator.
func uploadTarget(a contract.UploadArgs) driver.Target {
	return driver.Target{ID: a.ID, Locator: a.Locator}
}
