package activities

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/durable-browser/durable-browser/contract"
)

// errWorkerStopping is the cause of a call's context that its worker's stop
// grace ended.
var errWorkerStopping = errors.New("the worker is stopping")

// untilStopped returns ctx, ended also StopGrace after the worker starts
// stopping (Ctrl-C, SIGTERM). A call that finishes within the grace answers
// as usual; one cut short can still answer, and be reported, before the
// SDK cancels it at the worker's stop timeout.
func (a *Activities) untilStopped(ctx context.Context) (context.Context, context.CancelFunc) {
	cctx, cancel := context.WithCancelCause(ctx)
	if !activity.IsActivity(ctx) {
		return cctx, func() { cancel(nil) }
	}
	stopCh := activity.GetWorkerStopChannel(ctx)
	go func() {
		select {
		case <-cctx.Done():
			return
		case <-stopCh:
		}
		t := time.NewTimer(a.o.StopGrace)
		defer t.Stop()
		select {
		case <-cctx.Done():
		case <-t.C:
			cancel(errWorkerStopping)
		}
	}()
	return cctx, func() { cancel(nil) }
}

// cutMidCall is the answer of an effect call whose context ended after it
// may have acted, whatever ended it (its stopping worker's grace, a cancel,
// its deadline): effect_unknown, as for a lost worker, with the page it was
// on and what it sent, so the workflow's guard holds back the identical
// call once. Never aborted: a request that left cannot be called back.
func (a *Activities) cutMidCall(ctx context.Context, s *liveSession, url string, sent []contract.SentRequest) *contract.Failure {
	why := "was cut short"
	if errors.Is(context.Cause(ctx), errWorkerStopping) {
		why = "its worker stopped"
	}
	f := contract.Fail(contract.CodeEffectUnknown,
		"the call started and then %s before it finished, so it may already have happened; take a snapshot to see the page before repeating it (the identical call is refused once)", why).Effected()
	// The call's context is over; ask the page where it is on a short one.
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if u := s.browser.URL(uctx); u != "" {
		url = u
	}
	f.LastURL = url
	f.Sent = sent
	log := a.logger(ctx, s.ref.Tag)
	log.Warn().Int("sent", len(sent)).AnErr("cause", context.Cause(ctx)).Msg("call cut short after it began; answering effect_unknown")
	return f
}
