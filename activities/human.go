package activities

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/driver"
	"github.com/durable-browser/durable-browser/internal/handoff"
)

// Notify tells a person, through the worker's handoff port, that the session
// needs them. It adds the way to reach the browser here, on the worker, so
// that address (a full-control credential) never enters history.
func (a *Activities) Notify(ctx context.Context, req contract.NotifyRequest) (*contract.ReleaseResult, error) {
	s, f := a.session(req.Session)
	if f != nil {
		return nil, f
	}
	if a.o.Notifier == nil {
		return nil, contract.Fail(contract.CodeRefused, "no handoff port is configured on this worker; set --handoff-webhook or run with the log port")
	}
	// A webhook may take longer than the heartbeat timeout.
	defer a.heartbeat(ctx, nil)()
	n := handoff.Notice{
		WorkflowID:  req.WorkflowID,
		RequestID:   req.RequestID,
		SessionTag:  req.Session.Tag,
		Instruction: req.Instruction,
		Condition:   describeCondition(req.Condition),
		ExpiresAt:   req.ExpiresAt,
		Answer:      handoff.AnswerFor(req.WorkflowID, req.RequestID),
		ReachURL:    a.reachURL(ctx, s, req),
	}
	// From now on a person may work in the browser with no call touching
	// it: keep it from the orphan reaper until the handoff expires.
	until := req.ExpiresAt
	if until.IsZero() {
		until = a.o.Now().Add(contract.MaxHandoffExpiryS * time.Second)
	}
	s.heldUntil.Store(until.UnixNano())
	s.handedOff.Store(true)
	if err := a.o.Notifier.Notify(ctx, n); err != nil {
		f := contract.Fail(contract.CodeCommandFailed, "the person could not be notified; it will be retried").WithDetail(err.Error())
		f.Retryable = true
		return nil, f
	}
	return &contract.ReleaseResult{OK: true, Tag: req.Session.Tag}, nil
}

func describeCondition(c contract.Condition) string {
	switch {
	case c.Text != "":
		return fmt.Sprintf("the page shows %q", c.Text)
	case c.URL != "":
		return fmt.Sprintf("the address matches %q", c.URL)
	case c.Role != "":
		return fmt.Sprintf("the page has a %s named %q", c.Role, c.Name)
	}
	return ""
}

// reachURL is the provider's live view, else this worker's live view (with
// Take over granted to the person), else for a local Chrome the DevTools
// inspector of the active tab on this worker's host.
func (a *Activities) reachURL(ctx context.Context, s *liveSession, req contract.NotifyRequest) string {
	if s.sess.LiveViewURL != "" {
		return s.sess.LiveViewURL
	}
	if s.hands != nil {
		addr, ok, err := a.o.LiveView.Handoff(req.Session.Tag, req.WorkflowID, req.RequestID)
		if err != nil {
			log := a.logger(ctx, req.Session.Tag)
			log.Warn().Err(err).Msg("keeping the live view address for handoff list --show-url")
		}
		if ok {
			return addr
		}
	}
	u, err := url.Parse(s.sess.CDPURL)
	if err != nil || u.Host == "" {
		return ""
	}
	target, err := s.browser.ActiveTarget()
	if err != nil || target == "" {
		return ""
	}
	return fmt.Sprintf("http://%s/devtools/inspector.html?ws=%s/devtools/page/%s", u.Host, u.Host, target)
}

// MaxHolds bounds the requests one session may hold for a person at once.
// A page firing many POSTs under "ask" would otherwise start a poller and a
// signal per request: the ones past the bound are refused unasked (listed
// as blocked).
const MaxHolds = 4

// gate is the session's request gate: asked before every side-effecting
// request leaves the browser. It journals what it lets go and applies the
// action policy; under "ask" it holds the request until a person decides.
func (a *Activities) gate(ls *liveSession) func(ctx context.Context, r driver.GatedRequest) driver.GateDecision {
	return func(ctx context.Context, r driver.GatedRequest) driver.GateDecision {
		rs, _ := ctx.Value(runStateKey{}).(*runState)
		policy := ls.policy
		if rs != nil && rs.policy != "" {
			policy = rs.policy
		}
		req := a.o.Holds.Sent(r)
		switch policy {
		case contract.PolicyDeny:
			if rs != nil {
				rs.hold(contract.HeldRequest{Method: req.Method, Origin: req.Origin, Path: req.Path, Decision: "denied", By: "policy"})
			}
			return driver.GateDeny
		case contract.PolicyAsk:
			if rs == nil {
				return driver.GateDeny // nobody to ask outside a run
			}
			if n := ls.holds.Add(1); n > MaxHolds {
				ls.holds.Add(-1)
				log := a.logger(ctx, "")
				log.Warn().Str("method", req.Method).Str("origin", req.Origin).Int("holding", MaxHolds).
					Msg("request refused unasked: the session already holds as many requests as it may")
				rs.hold(contract.HeldRequest{Method: req.Method, Origin: req.Origin, Path: req.Path, Decision: heldBlocked, By: "policy"})
				return driver.GateDeny
			}
			decision, by := a.ask(ctx, rs, req, a.o.Holds.Facts(r))
			ls.holds.Add(-1)
			rs.hold(contract.HeldRequest{HoldID: decision.holdID, Method: req.Method, Origin: req.Origin, Path: req.Path, Decision: decision.word, By: by})
			if decision.word != "approved" {
				return driver.GateDeny
			}
		}
		if rs != nil {
			rs.mu.Lock()
			rs.sent.Add(req)
			rs.mu.Unlock()
		}
		return driver.GateAllow
	}
}

// heldBlocked is a HeldRequest decision: refused without anyone deciding.
const heldBlocked = "blocked"

func (r *runState) hold(h contract.HeldRequest) {
	r.mu.Lock()
	if h.HoldID != "" {
		r.held.Add(h)
	} else {
		r.unasked.Add(h)
	}
	r.recent = append(r.recent, h)
	if len(r.recent) > recentHolds {
		r.recent = append(r.recent[:0], r.recent[len(r.recent)-recentHolds:]...)
	}
	r.mu.Unlock()
}

type holdOutcome struct {
	holdID string
	word   string // approved, denied, expired, blocked, cancelled
}

// newHoldID is a hold id nobody can guess before the worker announces it:
// whoever may signal the session could otherwise announce a harmless hold
// under the id first and have it approved for this request.
func newHoldID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("activities: no randomness for a hold id: " + err.Error()) // crypto/rand never fails on Linux
	}
	return "h" + hex.EncodeToString(b[:])
}

// Polling a hold's decision starts quick (a person at the prompt answers in
// seconds) and slows down, so a hold left waiting costs few queries.
const (
	holdPollFirst = 250 * time.Millisecond
	holdPollMax   = 2 * time.Second
)

// ask holds a request: it tells the workflow, then polls the decision while
// the run's heartbeat keeps going, until a person answers or time runs out.
// An approval counts only when the request the session recorded for the
// hold (and the approver signed) is this one.
func (a *Activities) ask(ctx context.Context, rs *runState, req contract.SentRequest, facts contract.RequestFacts) (holdOutcome, string) {
	atomic.AddInt64(&rs.holds, 1)
	holdID := newHoldID()
	out := holdOutcome{holdID: holdID, word: "expired"}
	if a.o.Client == nil || rs.workflowID == "" {
		return out, ""
	}
	log := a.logger(ctx, "")
	// Never wait past the run's own deadline: a hold nobody answers must end
	// as a refusal, not as the run timing out (which reads as effect_unknown).
	wait := a.o.HoldTimeout
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl) - 15*time.Second; left < wait {
			wait = max(left, time.Second)
		}
	}
	err := a.o.Client.SignalWorkflow(ctx, rs.workflowID, rs.runID, contract.SignalHold, contract.HoldSignal{
		HoldSubject: contract.HoldSubject{HoldID: holdID, Method: req.Method, Origin: req.Origin, Path: req.Path, RequestFacts: facts, ActivityID: rs.activityID},
		ExpiresAt:   time.Now().Add(wait).UTC(),
	})
	if err != nil {
		log.Error().Err(err).Str("hold_id", holdID).Msg("telling the workflow about a hold")
		return out, ""
	}
	log.Info().Str("hold_id", holdID).Str("method", req.Method).Str("origin", req.Origin).Msg("request held for approval")
	a.holding.Add(1)
	defer a.holding.Add(-1)
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	every := holdPollFirst
	for {
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		v, err := a.o.Client.QueryWorkflow(qctx, rs.workflowID, rs.runID, contract.QueryHold, holdID)
		cancel()
		if err == nil {
			var d contract.HoldDecision
			if v.Get(&d) == nil && d.Decision != "" {
				if d.Method != req.Method || !d.RequestFacts.Same(facts) {
					// The session recorded another request under this id:
					// no decision on it can ever be for this one.
					log.Warn().Str("hold_id", holdID).Str("decision", d.Decision).
						Msg("hold refused: the session's record of it names another request than the one held")
					out.word = heldBlocked
					return out, ""
				}
				switch d.Decision {
				case contract.DecisionApprove:
					out.word = "approved"
					return out, d.By
				case contract.DecisionDeny:
					out.word = "denied"
					return out, d.By
				case contract.DecisionCancelled:
					out.word = contract.DecisionCancelled
					return out, ""
				}
			}
		}
		select {
		case <-ctx.Done():
			return out, ""
		case <-deadline.C:
			log.Info().Str("hold_id", holdID).Msg("hold expired unanswered; refused")
			return out, ""
		case <-time.After(every):
			every = min(every*2, holdPollMax)
		}
	}
}
