package workflows

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/oneline"
	"go.temporal.io/sdk/workflow"
)

// HumanState is what a Browser knows of people: a pending handoff and the
// holds runs have reported. Slices, never maps, so it replays the same.
type HumanState struct {
	Pending *contract.PendingHandoff `json:"pending,omitempty"`
	// Finished lists recent request ids that were answered or expired, so a
	// late signal for one is recognised and ignored.
	Finished []string        `json:"finished,omitempty"`
	Holds    []contract.Hold `json:"holds,omitempty"`
	// HandoffSeq numbers handoffs asked outside an update.
	HandoffSeq int `json:"handoff_seq,omitempty"`
	// Nonce is drawn once per session (and carried across continue-as-new)
	// and goes into every handoff's request id, so a signed answer made for
	// an earlier session under the same workflow id names no request here.
	Nonce string `json:"nonce,omitempty"`
	// Rejected lists the latest decisions refused for want of a valid
	// signature (bounded by maxRejected).
	Rejected []contract.RejectedDecision `json:"rejected,omitempty"`
}

func (h HumanState) clone() HumanState {
	out := h
	if h.Pending != nil {
		p := *h.Pending
		out.Pending = &p
	}
	out.Finished = append([]string(nil), h.Finished...)
	out.Holds = append([]contract.Hold(nil), h.Holds...)
	out.Rejected = append([]contract.RejectedDecision(nil), h.Rejected...)
	return out
}

// waiting answers a call made while a person has the browser.
func (h *HumanState) waiting() *contract.Failure {
	if h.Pending == nil {
		return nil
	}
	return contract.Fail(contract.CodeWaitingForHuman,
		"a person has the browser for handoff %s (until %s at the latest); wait for the handoff to finish, then call again",
		h.Pending.RequestID, h.Pending.ExpiresAt.UTC().Format(time.RFC3339))
}

// heldCount is how many holds wait for a decision.
func (h *HumanState) heldCount() int {
	n := 0
	for _, x := range h.Holds {
		if x.Decision == "" {
			n++
		}
	}
	return n
}

func (b *Browser) human() *HumanState { return &b.st.Human }

// stateName is the browser's BrowserState: released, waiting for a
// person, holding a request, live or new.
func (b *Browser) stateName() string {
	h := b.human()
	switch {
	case b.st.Released:
		return contract.StateReleased
	case h.Pending != nil:
		return contract.StateWaitingForHuman
	case h.heldCount() > 0:
		return contract.StateHeld
	case b.st.Created:
		return contract.StateLive
	}
	return contract.StateNew
}

// peopleState is what people deciding need of the browser (QueryBrowserState):
// which session, where its page is, its pending handoff, its holds, who
// may decide and the decisions it refused.
func (b *Browser) peopleState(ctx workflow.Context) contract.SessionState {
	st := b.st
	h := st.Human.clone()
	return contract.SessionState{
		WorkflowID: workflow.GetInfo(ctx).WorkflowExecution.ID,
		Tag:        st.Session.Tag, Provider: st.Session.Provider, HostQueue: st.Session.HostQueue,
		URL: st.URL, Title: st.Title, State: b.stateName(),
		PendingHandoff: h.Pending, Holds: h.Holds, Approvers: b.approvers.Names(), Rejected: h.Rejected,
	}
}

// listen registers the hold query and starts the signal handlers of the
// handoff, hold and approval signals, after reading who may decide.
func (b *Browser) listen(ctx workflow.Context) error {
	if err := b.loadApprovers(ctx); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, contract.QueryHold, func(holdID string) (contract.HoldDecision, error) {
		for _, h := range b.st.Human.Holds {
			if h.HoldID == holdID {
				return contract.HoldDecision{Decision: h.Decision, By: h.By, Method: h.Method, RequestFacts: h.RequestFacts}, nil
			}
		}
		return contract.HoldDecision{}, nil
	}); err != nil {
		return err
	}
	// A query adds nothing to history: a running workflow answers it from
	// its next replay on this build.
	if err := workflow.SetQueryHandler(ctx, contract.QueryBrowserState, func() (contract.SessionState, error) {
		return b.peopleState(ctx), nil
	}); err != nil {
		return err
	}
	b.sigHandoff = workflow.GetSignalChannel(ctx, contract.SignalHandoff)
	b.sigHold = workflow.GetSignalChannel(ctx, contract.SignalHold)
	b.sigApproval = workflow.GetSignalChannel(ctx, contract.SignalApproval)
	b.serve(ctx, b.sigHandoff, b.onHandoffSignal)
	b.serve(ctx, b.sigHold, b.onHoldSignal)
	b.serve(ctx, b.sigApproval, b.onApprovalSignal)
	return nil
}

// serve handles one signal channel. Payloads are read as raw JSON and then
// decoded, so a malformed signal is logged and ignored instead of failing
// the workflow task.
func (b *Browser) serve(ctx workflow.Context, ch workflow.ReceiveChannel, handle func(workflow.Context, json.RawMessage)) {
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			var raw json.RawMessage
			if more := ch.Receive(ctx, &raw); !more {
				return
			}
			handle(ctx, raw)
		}
	})
}

// drainSignals handles signals that arrived but were not yet received, so
// none is lost at continue-as-new.
func (b *Browser) drainSignals(ctx workflow.Context) {
	b.draining = true
	defer func() { b.draining = false }()
	pairs := []struct {
		ch     workflow.ReceiveChannel
		handle func(workflow.Context, json.RawMessage)
	}{{b.sigHandoff, b.onHandoffSignal}, {b.sigHold, b.onHoldSignal}, {b.sigApproval, b.onApprovalSignal}}
	for _, p := range pairs {
		if p.ch == nil {
			continue
		}
		for {
			var raw json.RawMessage
			if !p.ch.ReceiveAsync(&raw) {
				break
			}
			p.handle(ctx, raw)
		}
	}
}

// signalOf decodes a signal's payload as a T that valid (when set)
// accepts; anything else is logged as ignored (why says what it is not).
func signalOf[T any](ctx workflow.Context, raw json.RawMessage, why string, valid func(T) bool) (T, bool) {
	var s T
	if err := json.Unmarshal(raw, &s); err != nil || valid != nil && !valid(s) {
		workflow.GetLogger(ctx).Warn(why)
		return s, false
	}
	return s, true
}

func (b *Browser) onHandoffSignal(ctx workflow.Context, raw json.RawMessage) {
	log := workflow.GetLogger(ctx)
	s, ok := signalOf[contract.HandoffSignal](ctx, raw, "ignoring a handoff signal that is not {request_id, outcome, note?, by?}", nil)
	if !ok {
		return
	}
	h := b.human()
	if s.Outcome != contract.OutcomeDone && s.Outcome != contract.OutcomeCancelled {
		log.Warn("ignoring a handoff signal whose outcome is neither done nor cancelled", "request_id", s.RequestID)
		if b.signed() {
			b.reject(ctx, contract.KindHandoff, s.RequestID, s.Outcome, s.By, contract.RejectBadVerdict)
		}
		return
	}
	if h.Pending == nil || h.Pending.RequestID != s.RequestID || h.Pending.Answer != nil {
		state := "unknown"
		for _, id := range h.Finished {
			if id == s.RequestID {
				state = "finished"
			}
		}
		if h.Pending != nil && h.Pending.RequestID == s.RequestID {
			state = "answered"
		}
		log.Warn("ignoring a handoff signal for a request that is not pending", "request_id", s.RequestID, "request", state)
		if b.signed() {
			reason := contract.RejectNotPending
			if state != "unknown" {
				reason = contract.RejectAlreadyDone
			}
			b.reject(ctx, contract.KindHandoff, s.RequestID, s.Outcome, s.By, reason)
		}
		return
	}
	if b.signed() {
		msg := contract.HandoffMessage(workflow.GetInfo(ctx).WorkflowExecution.ID, s.RequestID, s.Outcome, s.By, s.Note, s.ExpiresAt)
		if reason := b.verify(ctx, s.By, msg, s.Signature, s.ExpiresAt); reason != "" {
			b.reject(ctx, contract.KindHandoff, s.RequestID, s.Outcome, s.By, reason)
			return
		}
	}
	a := keptDecision(s)
	h.Pending.Answer = &a
}

// keptDecision is what a session keeps of a handoff answer and repeats in
// its state and in the model's answer: anyone who may signal can send one
// (signed ones are checked against what was sent first), so who and the
// note are bounded and cleaned of control and bidi/format characters, and
// the signature, checked already, is bounded.
func keptDecision(s contract.HandoffSignal) contract.HandoffSignal {
	s.By, s.Note, s.Signature = kept(s.By, contract.MaxDecisionBy), kept(s.Note, contract.MaxDecisionNote), kept(s.Signature, 128)
	return s
}

// kept bounds free text taken from a signal to n characters and replaces
// what would act on a terminal or reorder text (oneline.Safe). Pure: it
// changes state only, never a command.
func kept(s string, n int) string { return oneline.Cut(s, n) }

func (b *Browser) onHoldSignal(ctx workflow.Context, raw json.RawMessage) {
	s, ok := signalOf(ctx, raw, "ignoring a hold signal that is not {hold_id, method, origin, path, activity_id?}",
		func(s contract.HoldSignal) bool { return s.HoldID != "" })
	if !ok {
		return
	}
	h := b.human()
	for _, x := range h.Holds {
		if x.HoldID == s.HoldID {
			return // a retried signal
		}
	}
	// Anyone who may signal can send this: every field is bounded. What
	// keeps a forged hold from releasing a request is on the worker (ids it
	// alone knows until it announces them, and its own request compared
	// with the decision it reads back), not here.
	f := s.RequestFacts
	f.URL, f.Digest, f.Body = clip(f.URL, 2048), clip(f.Digest, 64), clip(f.Body, contract.MaxShownBody)
	now := workflow.Now(ctx)
	hold := contract.Hold{HoldSubject: contract.HoldSubject{HoldID: clip(s.HoldID, 80), Method: clip(s.Method, 16), Origin: clip(s.Origin, 300),
		Path: clip(s.Path, 300), RequestFacts: f, ActivityID: clip(s.ActivityID, 80)}, HeldAt: now}
	if s.ExpiresAt.After(now) {
		hold.ExpiresAt = minTime(s.ExpiresAt, now.Add(maxHoldWait))
	}
	h.Holds = append(h.Holds, hold)
	h.pruneHolds()
	b.changed(ctx)
	if !b.draining {
		b.nameHold(ctx, hold)
	}
}

// Bounds of a hold's named wait: a hold signal may come from anyone who can
// signal, and a worker that did not say when it gives up waits at most
// defaultHoldWait (the worker's default hold time-out).
const (
	maxHoldWait     = 24 * time.Hour
	defaultHoldWait = 5 * time.Minute
)

// nameHold starts a timer whose summary names the hold in the UI's
// timeline ("waiting for approval: POST https://shop.example/checkout
// (expires 14:32 UTC)"), for as long as nobody decides and its run goes on.
// Histories from before the change start none.
func (b *Browser) nameHold(ctx workflow.Context, hold contract.Hold) {
	if workflow.GetVersion(ctx, changeNamedHolds, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return
	}
	expires := hold.ExpiresAt
	if expires.IsZero() {
		expires = hold.HeldAt.Add(defaultHoldWait)
	}
	workflow.Go(ctx, func(ctx workflow.Context) {
		// Cancelled explicitly once decided (AwaitWithOptions leaves its
		// timer running under this SDK's defaults), so the timeline shows
		// when the wait ended.
		tctx, cancel := workflow.WithCancel(ctx)
		defer cancel()
		timer := workflow.NewTimerWithOptions(tctx, expires.Sub(workflow.Now(ctx)), workflow.TimerOptions{Summary: holdSummary(hold, expires)})
		_ = workflow.Await(ctx, func() bool { return timer.IsReady() || b.stopping || !b.human().undecided(hold.HoldID) })
	})
}

// undecided says whether the hold is still waiting for someone.
func (h *HumanState) undecided(holdID string) bool {
	for _, x := range h.Holds {
		if x.HoldID == holdID {
			return x.Decision == ""
		}
	}
	return false
}

// holdSummary names a hold's wait: "waiting for approval: POST
// https://shop.example/checkout (expires 14:32 UTC)". The origin and path
// were scrubbed by the worker before they reached the workflow.
func holdSummary(h contract.Hold, expires time.Time) string {
	return "waiting for approval: " + h.Method + " " + h.Origin + oneLineCut(h.Path, 80) +
		" (expires " + expires.UTC().Format("15:04 MST") + ")"
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func (b *Browser) onApprovalSignal(ctx workflow.Context, raw json.RawMessage) {
	log := workflow.GetLogger(ctx)
	s, ok := signalOf[contract.ApprovalSignal](ctx, raw, "ignoring an approval signal that is not {hold_id, decision, by?, note?}", nil)
	if !ok {
		return
	}
	if s.Decision != contract.DecisionApprove && s.Decision != contract.DecisionDeny {
		log.Warn("ignoring an approval signal whose decision is neither approve nor deny", "hold_id", s.HoldID)
		if b.signed() {
			b.reject(ctx, contract.KindApproval, s.HoldID, s.Decision, s.By, contract.RejectBadVerdict)
		}
		return
	}
	h := b.human()
	for i := range h.Holds {
		if h.Holds[i].HoldID != s.HoldID {
			continue
		}
		if h.Holds[i].Decision != "" {
			log.Warn("ignoring an approval signal for a hold already decided", "hold_id", s.HoldID)
			if b.signed() {
				b.reject(ctx, contract.KindApproval, s.HoldID, s.Decision, s.By, contract.RejectAlreadyDone)
			}
			return
		}
		if b.signed() {
			msg := contract.ApprovalMessage(workflow.GetInfo(ctx).WorkflowExecution.ID, h.Holds[i], s.Decision, s.By, s.Note, s.ExpiresAt)
			if reason := b.verify(ctx, s.By, msg, s.Signature, s.ExpiresAt); reason != "" {
				b.reject(ctx, contract.KindApproval, s.HoldID, s.Decision, s.By, reason)
				return
			}
		}
		h.Holds[i].Decision, h.Holds[i].By, h.Holds[i].Note = s.Decision, kept(s.By, contract.MaxDecisionBy), kept(s.Note, contract.MaxDecisionNote)
		b.changed(ctx)
		return
	}
	log.Warn("ignoring an approval signal for an unknown hold", "hold_id", s.HoldID)
	if b.signed() {
		b.reject(ctx, contract.KindApproval, s.HoldID, s.Decision, s.By, contract.RejectNotPending)
	}
}

// loadApprovers reads, once per run, who may decide. The list is recorded
// as a side effect, so a replay uses the list the run had even if the
// worker's configuration changed since. Runs from before the change
// signed-decisions read none and accept unsigned decisions, as they did.
func (b *Browser) loadApprovers(ctx workflow.Context) error {
	if workflow.GetVersion(ctx, changeSignedDecisions, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return nil
	}
	configured := b.cfg.Approvers
	var got contract.Approvers
	if err := workflow.SideEffect(ctx, func(workflow.Context) any { return configured }).Get(&got); err != nil {
		return err
	}
	b.approvers = got
	if len(got) == 0 {
		workflow.GetLogger(ctx).Info("no approvers configured: approvals and handoff answers are unsigned; anyone who can signal this workflow can decide")
	}
	return nil
}

// signed says whether decisions must be signed.
func (b *Browser) signed() bool { return len(b.approvers) > 0 }

// verify checks a decision's signature and expiry; it answers "" when the
// decision may be acted on, else the rejection reason. Pure computation on
// the signal and workflow.Now: it adds no command.
func (b *Browser) verify(ctx workflow.Context, by string, msg []byte, signature string, expires time.Time) string {
	if reason := b.approvers.Verify(by, msg, signature); reason != "" {
		return reason
	}
	return contract.CheckExpiry(expires, workflow.Now(ctx))
}

// maxRejected bounds the remembered rejected decisions; the oldest go first.
const maxRejected = 16

// reject records a decision that was refused, and changes nothing else.
func (b *Browser) reject(ctx workflow.Context, kind, id, decision, by, reason string) {
	workflow.GetLogger(ctx).Warn("rejected a decision: it is not validly signed by an approver",
		"kind", kind, "id", short(id), "by", short(by), "reason", reason)
	h := b.human()
	h.Rejected = appendBoundedN(h.Rejected, contract.RejectedDecision{Kind: kind, ID: short(id), Decision: short(decision),
		By: short(by), Reason: reason, At: workflow.Now(ctx)}, maxRejected)
}

// short bounds a string taken from a signal, which anyone may have sent.
func short(s string) string { return kept(s, 64) }

// settleHolds marks holds nobody decided before their run ended as
// expired: the run refused them, and no decision can reach them now. Runs
// are serialised, so every undecided hold belongs to the run that ended.
func (b *Browser) settleHolds(ctx workflow.Context) {
	h := b.human()
	n := 0
	for i := range h.Holds {
		if h.Holds[i].Decision == "" {
			h.Holds[i].Decision, h.Holds[i].Note = contract.DecisionExpired, "the run ended before anyone decided; it was refused"
			n++
		}
	}
	if n > 0 {
		b.changed(ctx)
	}
}

// cancelHolds decides every hold still waiting cancelled: the session is
// being released or ends, and no one's decision could matter now. The run
// holding them refuses their requests at its next poll and answers, so the
// release does not wait out the holds. Sessions from before the change
// (and those with nothing held) are left as they were.
func (b *Browser) cancelHolds(ctx workflow.Context) {
	h := b.human()
	if h.heldCount() == 0 || workflow.GetVersion(ctx, changeReleaseCancelsHolds, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return
	}
	for i := range h.Holds {
		if h.Holds[i].Decision == "" {
			h.Holds[i].Decision, h.Holds[i].Note = contract.DecisionCancelled, "the session was released while it waited; it was refused"
		}
	}
	b.changed(ctx)
}

// maxHolds bounds the remembered holds; decided ones are dropped first.
const maxHolds = 64

func (h *HumanState) pruneHolds() {
	for len(h.Holds) > maxHolds {
		dropped := false
		for i, x := range h.Holds {
			if x.Decision != "" {
				h.Holds = append(h.Holds[:i:i], h.Holds[i+1:]...)
				dropped = true
				break
			}
		}
		if !dropped {
			h.Holds = h.Holds[1:]
		}
	}
}

// requestID derives a handoff's id from seed (an update id) or, outside an
// update, from a counter kept in the Browser's state, and from the
// session's nonce (recorded, so a replay gives the same id). Sessions from
// before the change have no nonce: their ids restart with the workflow id.
func (b *Browser) requestID(ctx workflow.Context, seed string) string {
	if seed == "" {
		b.st.Human.HandoffSeq++
		seed = "call-" + strconv.Itoa(b.st.Human.HandoffSeq)
	}
	h := b.human()
	if h.Nonce == "" && workflow.GetVersion(ctx, changeSessionBoundHandoffs, workflow.DefaultVersion, 1) != workflow.DefaultVersion {
		var nonce string
		if err := workflow.SideEffect(ctx, func(workflow.Context) any {
			var r [16]byte
			_, _ = rand.Read(r[:]) // crypto/rand never fails on Linux
			return hex.EncodeToString(r[:])
		}).Get(&nonce); err == nil {
			h.Nonce = nonce
		}
	}
	if h.Nonce != "" {
		sum := sha256.Sum256([]byte(workflow.GetInfo(ctx).WorkflowExecution.ID + "\x00" + h.Nonce + "\x00" + seed))
		return "h-" + hex.EncodeToString(sum[:12])
	}
	sum := sha256.Sum256([]byte(workflow.GetInfo(ctx).WorkflowExecution.ID + "\x00" + seed))
	return "h-" + hex.EncodeToString(sum[:6])
}

// interrupt ends any handoff wait: the session is ending.
func (b *Browser) interrupt() { b.stopping = true }

func (b *Browser) handoff(ctx workflow.Context, a contract.HandoffArgs, seed string) (any, *contract.Failure, error) {
	id := b.requestID(ctx, seed)
	h := b.human()
	if h.Pending != nil && h.Pending.RequestID != id {
		return nil, h.waiting(), nil
	}
	if h.Pending == nil {
		if f, err := b.startHandoff(ctx, a, id); err != nil || f != nil {
			return nil, f, err
		}
	}
	p := h.Pending
	wait := p.ExpiresAt.Sub(workflow.Now(ctx))
	if wait > 0 {
		// The timer's summary names the wait in the UI's timeline.
		opts := workflow.AwaitOptions{Timeout: wait, TimerOptions: workflow.TimerOptions{Summary: waitSummary(p)}}
		if _, err := workflow.AwaitWithOptions(ctx, opts, func() bool { return p.Answer != nil || b.stopping }); err != nil {
			return nil, nil, err
		}
	}
	res := &contract.HandoffResult{OK: true, RequestID: id, Outcome: contract.OutcomeExpired}
	switch {
	case p.Answer != nil:
		res.Outcome, res.By, res.Note = p.Answer.Outcome, p.Answer.By, p.Answer.Note
	case b.stopping:
		res.Outcome, res.Note = contract.OutcomeCancelled, "the session ended before anyone answered"
	}
	res.WaitedS = workflow.Now(ctx).Sub(p.RequestedAt).Seconds()
	if h.Pending == p {
		h.Pending = nil
		h.Finished = appendBoundedN(h.Finished, id, 32)
		b.changed(ctx)
	}

	if err := b.mu.Lock(ctx); err != nil {
		return nil, nil, err
	}
	defer b.mu.Unlock()
	defer b.summarize("snapshot after the person's step (" + res.Outcome + ")")()
	snap := &contract.SnapshotResult{}
	f, neverStarted, err := b.exec(ctx, contract.ActivitySnapshot, contract.ClassRead, true,
		contract.SnapshotRequest{Call: contract.Call{Session: b.st.Session, Policy: b.st.Options.ActionPolicy}}, snap)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case neverStarted:
		b.st.Lost = true
		res.SnapshotFailure = b.replace(ctx)
	case f != nil:
		res.SnapshotFailure = f
	default:
		res.Snapshot = snap
		b.st.URL, b.st.Title = snap.URL, snap.Title
		b.st.Guard.record(contract.ToolSnapshot, "", nil) // the agent has looked again
		res.ConditionMet = ConditionMet(p.Condition, snap)
	}
	return res, nil, nil
}

// startHandoff notifies a person and marks the handoff pending.
func (b *Browser) startHandoff(ctx workflow.Context, a contract.HandoffArgs, id string) (*contract.Failure, error) {
	if err := b.mu.Lock(ctx); err != nil {
		return nil, err
	}
	defer b.mu.Unlock()
	h := b.human()
	if h.Pending != nil {
		return h.waiting(), nil
	}
	if f := b.ensure(ctx); f != nil {
		return f, nil
	}
	b.st.Calls++
	expires := a.ExpiresInS
	if expires <= 0 {
		expires = contract.DefaultHandoffExpiryS
	}
	expires = min(expires, contract.MaxHandoffExpiryS)
	now := workflow.Now(ctx)
	p := &contract.PendingHandoff{RequestID: id, Instruction: a.Instruction, Condition: a.CompletionCondition,
		RequestedAt: now, ExpiresAt: now.Add(time.Duration(expires) * time.Second)}
	defer b.summarize(contract.Summary(contract.ToolRequestHandoff, a))()
	f, neverStarted, err := b.exec(ctx, contract.ActivityNotify, contract.ClassHuman, true, contract.NotifyRequest{
		Session: b.st.Session, RequestID: id, WorkflowID: workflow.GetInfo(ctx).WorkflowExecution.ID,
		Instruction: a.Instruction, Condition: a.CompletionCondition, ExpiresAt: p.ExpiresAt,
	}, nil)
	if err != nil {
		return nil, err
	}
	if neverStarted {
		b.st.Lost = true
		return b.replace(ctx), nil
	}
	if f != nil {
		return f, nil
	}
	h.Pending = p
	b.changed(ctx)
	return nil, nil
}

// waitSummary names a handoff's wait: "waiting for a person: sign in with
// 2FA (expires 14:32 UTC)".
func waitSummary(p *contract.PendingHandoff) string {
	s := contract.Summary(contract.ToolRequestHandoff, contract.HandoffArgs{Instruction: p.Instruction})
	s = "waiting for a person: " + strings.TrimPrefix(s, "ask a person: ")
	return s + " (expires " + p.ExpiresAt.UTC().Format("15:04 MST") + ")"
}

func appendBoundedN[T any](s []T, v T, n int) []T {
	s = append(s, v)
	if len(s) > n {
		s = append(s[:0:0], s[len(s)-n:]...)
	}
	return s
}

// ConditionMet checks a completion condition against a snapshot. Every field
// given must hold: Text appears in the snapshot text; URL matches the page URL
// as a glob when it has '*', else as a substring; Role (and Name, when given)
// match a snapshot line's role and quoted name, ignoring case. An empty
// condition never holds.
func ConditionMet(c contract.Condition, snap *contract.SnapshotResult) bool {
	if snap == nil || (c.Text == "" && c.URL == "" && c.Role == "") {
		return false
	}
	if c.Text != "" && !strings.Contains(snap.Text, c.Text) {
		return false
	}
	if c.URL != "" {
		if strings.Contains(c.URL, "*") {
			if !globMatch(c.URL, snap.URL) {
				return false
			}
		} else if !strings.Contains(snap.URL, c.URL) {
			return false
		}
	}
	if c.Role != "" && !hasElement(snap.Text, c.Role, c.Name) {
		return false
	}
	return true
}

// globMatch matches s against pattern, where '*' matches any run of characters.
func globMatch(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := len(parts) - 1
	for i := 1; i < last; i++ {
		j := strings.Index(s, parts[i])
		if j < 0 {
			return false
		}
		s = s[j+len(parts[i]):]
	}
	return strings.HasSuffix(s, parts[last])
}

// hasElement finds a snapshot line `[id] role "name" ...` with the role and name.
func hasElement(text, role, name string) bool {
	for _, line := range strings.Split(text, "\n") {
		l := strings.TrimSpace(line)
		l = strings.TrimPrefix(l, "- ")
		if strings.HasPrefix(l, "[") {
			if end := strings.Index(l, "] "); end > 0 {
				l = l[end+2:]
			}
		}
		r, rest, _ := strings.Cut(l, " ")
		if !strings.EqualFold(r, role) {
			continue
		}
		if name == "" {
			return true
		}
		q, err := strconv.QuotedPrefix(rest)
		if err != nil {
			continue
		}
		if n, err := strconv.Unquote(q); err == nil && strings.EqualFold(strings.TrimSpace(n), strings.TrimSpace(name)) {
			return true
		}
	}
	return false
}
