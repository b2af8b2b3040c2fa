package workflows

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/contract/validate"
	"github.com/durable-browser/durable-browser/internal/envelope"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Session defaults.
const (
	DefaultIdleTimeout = 3 * time.Minute
	DefaultMaxLifetime = 30 * time.Minute
)

// CarriedOf reads the state cfg carries from the session's previous run;
// nil when it is the first run.
func CarriedOf(cfg SessionConfig) (*Carried, error) {
	if len(cfg.Carry) == 0 || string(cfg.Carry) == "null" {
		return nil, nil
	}
	var c Carried
	if err := json.Unmarshal(cfg.Carry, &c); err != nil {
		return nil, fmt.Errorf("reading the state carried from the previous run: %w", err)
	}
	return &c, nil
}

// Carried is the state a BrowserSession hands to its next run.
type Carried struct {
	Browser    BrowserState `json:"browser"`
	StartedAt  time.Time    `json:"started_at"`
	LastActive time.Time    `json:"last_active"`
	// Answered is the ledger of recent effect calls by update id.
	Answered []contract.Answered `json:"answered,omitempty"`
}

type session struct {
	cfg        SessionConfig
	b          *Browser
	startedAt  time.Time
	lastActive time.Time
	inFlight   int
	version    int
	closing    bool // a close signal arrived
	ending     bool // no new calls
	lastSA     [3]string
	closeCh    workflow.ReceiveChannel
	answered   ledger
	runCalls   int // calls served by this run
	// seen maps each caller update id this run served to the Temporal
	// update id it came under (contract.UpdateIDFor): another call under a
	// seen id is a conflict.
	seen map[string]string
	// endReason is why the session is ending, once it is.
	endReason string
	// lastDetails are the current details last set (setDetails).
	lastDetails string
}

// BrowserSession is the custody workflow of one conversation's browser (the
// caller picks its id). It creates the browser on the first call, serves tool
// calls one at a time as UpdateTool, answers QueryState, and releases the
// browser after the idle window, at the maximum lifetime, on SignalClose or
// on browser_release. It continues as new when Temporal suggests it, once
// every handler has finished.
func BrowserSession(ctx workflow.Context, cfg SessionConfig) (*contract.SessionResult, error) {
	return browserSession(ctx, cfg, nil)
}

// browserSession is BrowserSession on a worker with these approvers
// (SessionWorkflow).
func browserSession(ctx workflow.Context, cfg SessionConfig, workerApprovers contract.Approvers) (*contract.SessionResult, error) {
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.MaxLifetime <= 0 {
		cfg.MaxLifetime = DefaultMaxLifetime
	}
	now := workflow.Now(ctx)
	s := &session{cfg: cfg, startedAt: now, lastActive: now, seen: map[string]string{}}
	bcfg := Config{Session: cfg.Session, Timeouts: cfg.Timeouts, Approvers: Narrow(workerApprovers, cfg.Approvers), Sites: cfg.Sites}
	carried, err := CarriedOf(cfg)
	if err != nil {
		// Only this workflow writes Carry: failing the task (retried)
		// keeps the session for a build that reads it.
		panic(err)
	}
	if carried != nil {
		st := carried.Browser
		bcfg.Resume = &st
		if !carried.StartedAt.IsZero() {
			s.startedAt = carried.StartedAt
		}
		if !carried.LastActive.IsZero() {
			s.lastActive = carried.LastActive
		}
		s.answered = carried.Answered
	}
	s.b = newBrowser(ctx, bcfg)
	if p := cfg.Previous; p != nil && carried == nil {
		// Started after an ended session on purpose: the next tag, under
		// the current scheme (this input exists only since that scheme).
		s.b.st.Seq = max(p.Seq, 0)
		s.b.st.TagScheme = tagSchemeInjective
	}
	s.b.onChange = s.sync
	if err := s.register(ctx); err != nil {
		return nil, err
	}
	s.sync(ctx)
	if carried != nil {
		s.b.reconcile(ctx)
	}

	reason, err := s.serve(ctx)
	if err != nil || reason == "" {
		s.releaseIfCancelled(ctx, err)
		return nil, err
	}
	res, err := s.end(ctx, reason)
	if err != nil {
		s.releaseIfCancelled(ctx, err)
	}
	return res, err
}

// releaseIfCancelled releases the browser of a session whose workflow was
// cancelled: ctx is done, so the release runs in a disconnected context.
// Sessions that started before the change end without it, as they did.
func (s *session) releaseIfCancelled(ctx workflow.Context, err error) {
	if ctx.Err() == nil || !temporal.IsCanceledError(err) {
		return
	}
	if workflow.GetVersion(ctx, changeReleaseOnCancel, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return
	}
	s.ending = true
	if f := s.b.releaseDisconnected(ctx); f != nil {
		workflow.GetLogger(ctx).Warn("releasing the cancelled session's browser failed", "tag", s.b.st.Session.Tag, "code", string(f.Code))
	}
	s.sync(ctx)
}

func (s *session) register(ctx workflow.Context) error {
	if err := s.b.listen(ctx); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, contract.QueryState, func() (contract.SessionState, error) {
		return s.state(ctx), nil
	}); err != nil {
		return err
	}
	closeCh := workflow.GetSignalChannel(ctx, contract.SignalClose)
	workflow.Go(ctx, func(ctx workflow.Context) {
		var ignored json.RawMessage
		if closeCh.Receive(ctx, &ignored) {
			s.closing = true
		}
	})
	s.closeCh = closeCh
	return workflow.SetUpdateHandlerWithOptions(ctx, contract.UpdateTool, s.tool, workflow.UpdateHandlerOptions{
		Validator: s.validate,
	})
}

// validate rejects calls that can never run: unknown tools, invalid
// arguments, calls after release. Rejected updates leave no history.
func (s *session) validate(ctx workflow.Context, call contract.ToolCall) error {
	if s.ending || s.b.st.Released {
		return envelope.Error(s.ended())
	}
	if info := workflow.GetCurrentUpdateInfo(ctx); info != nil {
		id := contract.CallerUpdateID(info.ID)
		if prev, ok := s.seen[id]; ok && prev != info.ID {
			return envelope.Error(contract.Fail(contract.CodeRefused,
				"update id %q was already used in this session for another call (other tool or arguments); an update id names one call: send this call with a new update id", clip(id, 80)))
		}
	}
	if call.Name == contract.ToolUseWebsite && len(s.cfg.Sites) > 0 {
		if _, f := validate.UseWebsite(call.Args, s.cfg.Sites); f != nil {
			return envelope.Error(f)
		}
		return nil
	}
	if _, f := validate.Call(call.Name, call.Args); f != nil {
		return envelope.Error(f)
	}
	if j := call.Join; j != nil {
		if diff := s.joinDiffers(*j); diff != "" {
			return envelope.Error(contract.Fail(contract.CodeRefused,
				"this session (%s) was started by someone else with other %s than this call asks for; a session's approvers and granted sites are fixed when it starts, and a call never joins a session made otherwise. Use another session id, or close this session and start it again with yours",
				s.tagOrNew(), diff))
		}
	}
	if e := call.Expect; e != nil {
		if diff := contract.OptionsDiffer(e.Options, s.b.st.Options, e.Fields, "session"); len(diff) > 0 {
			return envelope.Error(contract.Fail(contract.CodeRefused,
				"session options apply only when a session starts, and this session (%s) already runs with others: %s. Drop those options, release the session first (browser_release) and start it again with them, or use another session id",
				s.tagOrNew(), strings.Join(diff, "; ")))
		}
	}
	return nil
}

// ended is the answer to a call after the session ended or while it ends.
func (s *session) ended() *contract.Failure {
	reason := s.endReason
	if reason == "" {
		reason = contract.EndReleased
	}
	return contract.SessionEnded(s.b.st.Session.Tag, reason)
}

func (s *session) tagOrNew() string {
	if s.b.st.Session.Tag == "" {
		return "not yet created"
	}
	return s.b.st.Session.Tag
}

// tool serves one UpdateTool call.
func (s *session) tool(ctx workflow.Context, call contract.ToolCall) (json.RawMessage, error) {
	s.inFlight++
	s.version++
	defer func() {
		s.inFlight--
		s.lastActive = workflow.Now(ctx)
		s.version++
		s.sync(ctx)
	}()
	seed := ""
	if info := workflow.GetCurrentUpdateInfo(ctx); info != nil {
		seed = contract.CallerUpdateID(info.ID)
		if seed != info.ID {
			s.seen[seed] = info.ID
		}
	}
	// A resend of an effect call answered before a continue-as-new.
	if out, ok := s.answered.find(seed, call.Name, call.Args); ok {
		return out, nil
	}
	if s.ending || s.b.st.Released {
		return s.b.answer(ctx, call.Name, s.ended())
	}
	s.runCalls++
	if call.Name == contract.ToolRelease {
		s.b.cancelHolds(ctx)
	}
	args, f := s.b.validateCall(ctx, call.Name, call.Args)
	if f != nil {
		return s.b.answer(ctx, call.Name, f)
	}
	res, f, err := s.b.do(ctx, call.Name, args, call.Args, seed)
	if err != nil {
		return nil, err
	}
	var out json.RawMessage
	if f != nil {
		out, err = s.b.answer(ctx, call.Name, f)
	} else {
		out, err = s.b.answer(ctx, call.Name, res)
	}
	if err != nil {
		return nil, err
	}
	s.answered = s.answered.add(seed, call.Name, call.Args, out)
	return out, nil
}

// continueSuggested says the run should continue as new: Temporal suggests
// it, or this run served the configured number of calls.
func (s *session) continueSuggested(ctx workflow.Context) bool {
	if s.cfg.ContinueAsNewAfter > 0 && s.runCalls >= s.cfg.ContinueAsNewAfter {
		return true
	}
	return workflow.GetInfo(ctx).GetContinueAsNewSuggested()
}

// serve waits until the session should end (returning why) or continue as
// new (returning the continue-as-new error).
func (s *session) serve(ctx workflow.Context) (string, error) {
	for {
		now := workflow.Now(ctx)
		switch {
		case s.b.st.Released:
			return contract.EndReleased, nil
		case s.closing:
			return contract.EndClosed, nil
		case !now.Before(s.startedAt.Add(s.cfg.MaxLifetime)):
			return contract.EndMaxLifetime, nil
		case s.inFlight == 0 && !now.Before(s.lastActive.Add(s.cfg.IdleTimeout)):
			return contract.EndIdle, nil
		case s.inFlight == 0 && s.continueSuggested(ctx):
			if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
				return "", err
			}
			s.drain(ctx)
			if s.closing || s.inFlight > 0 {
				continue
			}
			return "", workflow.NewContinueAsNewError(ctx, contract.WorkflowBrowserSession, s.carry())
		}
		deadline := s.startedAt.Add(s.cfg.MaxLifetime)
		if idle := s.lastActive.Add(s.cfg.IdleTimeout); s.inFlight == 0 && idle.Before(deadline) {
			deadline = idle
		}
		// Calls do not wake this loop, so a call costs no timer: the idle
		// timer fires at the deadline the last quiet moment set, and the
		// loop then re-checks (activity since only moves the deadline
		// later). Only a loop that began during a call waits for it to end,
		// to start the idle window from there.
		busy := s.inFlight > 0
		if _, err := workflow.AwaitWithTimeout(ctx, deadline.Sub(now), func() bool {
			return s.closing || s.b.st.Released || (busy && s.inFlight == 0) ||
				(s.inFlight == 0 && s.continueSuggested(ctx))
		}); err != nil {
			return "", err
		}
	}
}

// end stops taking calls, lets the calls in flight finish (a pending
// handoff ends as cancelled), releases the browser and returns.
func (s *session) end(ctx workflow.Context, reason string) (*contract.SessionResult, error) {
	s.ending, s.endReason = true, reason
	s.b.interrupt()
	s.b.cancelHolds(ctx)
	if err := workflow.Await(ctx, func() bool { return s.inFlight == 0 }); err != nil {
		return nil, err
	}
	if !s.b.st.Released {
		if err := s.b.mu.Lock(ctx); err != nil {
			return nil, err
		}
		_, f, err := s.b.release(ctx)
		s.b.mu.Unlock()
		if err != nil {
			return nil, err
		}
		if f != nil {
			workflow.GetLogger(ctx).Warn("releasing the browser failed", "tag", s.b.st.Session.Tag, "code", string(f.Code))
		}
	}
	s.sync(ctx)
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
		return nil, err
	}
	return &contract.SessionResult{Tag: s.b.st.Session.Tag, Seq: s.b.st.Seq, Reason: reason, Calls: s.b.st.Calls, Answered: s.answered}, nil
}

// drain handles signals received but not yet read, before continue-as-new.
func (s *session) drain(ctx workflow.Context) {
	s.b.drainSignals(ctx)
	var ignored json.RawMessage
	if s.closeCh != nil && s.closeCh.ReceiveAsync(&ignored) {
		s.closing = true
	}
}

func (s *session) carry() SessionConfig {
	next := s.cfg
	st := s.b.State()
	// Hold ids are made from activity ids, which restart in the next run:
	// decided holds stay behind so a new hold can never read an old decision.
	undecided := st.Human.Holds[:0:0]
	for _, h := range st.Human.Holds {
		if h.Decision == "" {
			undecided = append(undecided, h)
		}
	}
	st.Human.Holds = undecided
	carry, err := json.Marshal(Carried{Browser: st, StartedAt: s.startedAt, LastActive: s.lastActive, Answered: s.answered})
	if err != nil {
		panic(fmt.Errorf("carrying the session's state: %w", err))
	}
	next.Carry = carry
	return next
}

func (s *session) state(ctx workflow.Context) contract.SessionState {
	st := s.b.st
	out := s.b.peopleState(ctx)
	out.StartedAt, out.Calls = s.startedAt, st.Calls
	if s.inFlight == 0 && !st.Released {
		d := s.lastActive.Add(s.cfg.IdleTimeout)
		out.IdleDeadline = &d
	}
	out.LastCall, out.LastActive = st.Last.Summary, s.lastActive
	if st.Last.Code != "" {
		out.LastCall += " → " + st.Last.Code
	}
	if len(st.Usage) > 0 {
		out.Usage = make(map[string]contract.ToolUsage, len(st.Usage))
	}
	for _, u := range st.Usage {
		out.Usage[u.Tool] = u.ToolUsage
		out.Total.Calls += u.Calls
		out.Total.Chars += u.Chars
		out.Total.Tokens += u.Tokens
	}
	return out
}

// sync keeps the current details and search attributes in step with the
// session.
func (s *session) sync(ctx workflow.Context) {
	s.setDetails(ctx)
	s.upsert(ctx)
}

// upsert keeps the search attributes in step with the session.
func (s *session) upsert(ctx workflow.Context) {
	if !s.cfg.SearchAttributes {
		return
	}
	provider := s.b.st.Session.Provider
	if provider == "" {
		provider = s.cfg.Session.Provider
	}
	if provider == "" {
		provider = "local"
	}
	vals := [3]string{s.b.st.Session.Tag, provider, s.b.stateName()}
	if vals == s.lastSA {
		return
	}
	ups := make([]temporal.SearchAttributeUpdate, 0, 3)
	for i, key := range []temporal.SearchAttributeKeyKeyword{saTag, saProvider, saState} {
		if vals[i] == "" {
			ups = append(ups, key.ValueUnset())
		} else {
			ups = append(ups, key.ValueSet(vals[i]))
		}
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, ups...); err != nil {
		workflow.GetLogger(ctx).Warn("upserting search attributes failed; register them on the namespace", "error", err.Error())
		return
	}
	s.lastSA = vals
}

// reconcile checks a carried session on its host: a host that no longer
// answers (schedule-to-start) or no longer holds it means the browser is
// lost, and the next call opens a new one and says so.
func (b *Browser) reconcile(ctx workflow.Context) {
	if !b.st.Created || b.st.Released || b.st.Lost {
		return
	}
	actx := workflow.WithActivityOptions(ctx, summarized(ActivityOptions(contract.ClassCustody, b.st.Session.HostQueue, true, b.t), "check browser "+b.st.Session.Tag+" is still held"))
	err := workflow.ExecuteActivity(actx, contract.ActivityReconcile, contract.ReleaseRequest{Session: b.st.Session}).Get(ctx, nil)
	if err == nil {
		return
	}
	c := classify(err)
	if c.kind == kindNeverStarted || (c.kind == kindFailure && c.failure.Code == contract.CodeSessionEnded) {
		b.st.Lost = true
		return
	}
	workflow.GetLogger(ctx).Warn("reconciling the carried session failed; keeping it", "tag", b.st.Session.Tag)
}

// Narrow is who may decide in a session: the worker's approvers, narrowed
// to those the session lists (same name and key) when it lists any. A list
// naming none of them leaves nobody (NobodyApproves); without worker
// approvers the session's list is used as it is, since unsigned mode let
// anyone decide.
func Narrow(worker, session contract.Approvers) contract.Approvers {
	if len(worker) == 0 {
		return session
	}
	if len(session) == 0 {
		return worker
	}
	var out contract.Approvers
	for _, w := range worker {
		if k, ok := session.Key(w.Name); ok && bytes.Equal(k, w.PublicKey) {
			out = append(out, w)
		}
	}
	if len(out) == 0 {
		out = contract.Approvers{NobodyApproves}
	}
	return out
}

// NobodyApproves is the approver list of a session that narrowed its
// worker's approvers to none: no key, and a name no signer can carry, so
// every decision is rejected.
var NobodyApproves = contract.Approver{Name: "(none of the worker's approvers)"}

// joinDiffers names what a joining call asks otherwise than the session
// was started with: its approvers or granted sites ("" when alike).
func (s *session) joinDiffers(j contract.Joined) string {
	var out []string
	if !sameApprovers(j.Approvers, s.cfg.Approvers) {
		out = append(out, "approvers")
	}
	a, _ := json.Marshal(j.Sites)
	b, _ := json.Marshal(s.cfg.Sites)
	if !bytes.Equal(a, b) && (len(j.Sites) > 0 || len(s.cfg.Sites) > 0) {
		out = append(out, "granted sites")
	}
	return strings.Join(out, " and ")
}

func sameApprovers(a, b contract.Approvers) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if k, ok := b.Key(x.Name); !ok || !bytes.Equal(k, x.PublicKey) {
			return false
		}
	}
	return true
}

// SessionConfig is BrowserSession's input (contract.SessionConfig: a
// client starts sessions without linking this package).
type SessionConfig = contract.SessionConfig

// Previous names the session a new one follows under the same workflow id.
type Previous = contract.Previous
