package workflows

import (
	"errors"
	"fmt"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/envelope"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
)

// outcomeKind says what typed fact an activity error carried.
type outcomeKind int

const (
	kindFailure      outcomeKind = iota // the activity answered with an envelope
	kindNeverStarted                    // SCHEDULE_TO_START: no worker took the call
	kindLostStarted                     // HEARTBEAT or START_TO_CLOSE: started, then went silent
	kindCanceled
	kindOther
)

// classified is an activity error read through typed facts only.
type classified struct {
	kind    outcomeKind
	failure *contract.Failure // for kindFailure
	timeout *temporal.TimeoutError
}

// classify reads an activity error. It never looks at message text.
func classify(err error) classified {
	if f, ok := envelope.From(err); ok {
		return classified{kind: kindFailure, failure: f}
	}
	var te *temporal.TimeoutError
	if errors.As(err, &te) {
		// A schedule-to-close timeout wraps the last attempt's cause; read that.
		inner := te
		for inner.TimeoutType() == enumspb.TIMEOUT_TYPE_SCHEDULE_TO_CLOSE {
			var next *temporal.TimeoutError
			if !errors.As(inner.Unwrap(), &next) {
				break
			}
			inner = next
		}
		switch inner.TimeoutType() {
		case enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START:
			return classified{kind: kindNeverStarted, timeout: inner}
		case enumspb.TIMEOUT_TYPE_HEARTBEAT, enumspb.TIMEOUT_TYPE_START_TO_CLOSE:
			return classified{kind: kindLostStarted, timeout: inner}
		}
		// A schedule-to-close with no attempt recorded: nothing is known to have started.
		return classified{kind: kindLostStarted, timeout: inner}
	}
	var ce *temporal.CanceledError
	if errors.As(err, &ce) {
		return classified{kind: kindCanceled}
	}
	return classified{kind: kindOther}
}

// effectUnknown builds the failure for an effect call that started and then
// lost its worker, with what its heartbeats said.
func effectUnknown(te *temporal.TimeoutError) *contract.Failure {
	f := contract.Fail(contract.CodeEffectUnknown,
		"the call started and then its worker was lost, so it may already have happened; take a snapshot to see the page before repeating it (the identical call is refused once)").Effected()
	if te != nil && te.HasLastHeartbeatDetails() {
		var p contract.RunProgress
		if te.LastHeartbeatDetails(&p) == nil {
			f.LastURL = p.URL
			f.Sent = p.Sent
			if p.PageCalls != nil {
				// A code cell: say how far it got.
				f.PageCalls = p.PageCalls
				f.Message = fmt.Sprintf("the code cell started and then its worker was lost after %d completed page call(s), so those may already have happened; take a snapshot to see the page before repeating it (the identical call is refused once)", p.PageCalls.Completed)
			}
		}
	}
	return f
}

// failureFor turns an activity error into the envelope a model sees, by class.
// Never-started calls are handled by the caller (they replace the session).
func failureFor(class contract.ReplayClass, c classified) *contract.Failure {
	switch c.kind {
	case kindFailure:
		return c.failure
	case kindCanceled:
		f := contract.Fail(contract.CodeAborted, "the call was cancelled before it finished; call again if it is still wanted")
		if class == contract.ClassEffect {
			f.Effected()
		}
		return f
	case kindLostStarted:
		if class == contract.ClassEffect {
			return effectUnknown(c.timeout)
		}
		return contract.Fail(contract.CodeTimeout, "the call timed out after its retries; try again, or take a snapshot to see whether the page is still answering")
	case kindNeverStarted:
		return noWorker()
	}
	f := contract.Fail(contract.CodeCommandFailed, "the call failed in the worker without a typed failure; take a snapshot to see the page's state before trying again")
	if class == contract.ClassEffect {
		f.Effected()
	}
	return f
}

// noWorkerTakesSessions is the failure for a create no worker took within
// its schedule-to-start bound: none runs, or every one is past its bounds.
func noWorkerTakesSessions() *contract.Failure {
	f := contract.Fail(contract.CodeBrowserUnavailable,
		"no durable-browser worker took the new session in time, so nothing ran: none polls task queue %q, or each one is past its --max-browsers or --latency-bound "+
			"(its log says \"not taking new sessions\"); start a durable-browser worker (`durable-browser worker`, or `durable-browser dev` on one machine), or try again shortly", contract.CreateQueue)
	f.Retryable = true
	return f
}

// noWorker is the failure for a call on the shared queue that no worker took
// within its schedule-to-start bound: nothing ran, and most likely no
// worker is running at all.
func noWorker() *contract.Failure {
	return contract.Fail(contract.CodeBrowserUnavailable,
		"no durable-browser worker took the call in time, so nothing ran; start a durable-browser worker (`durable-browser worker`, or `durable-browser dev` on one machine) polling task queue %q, then try again", contract.SharedQueue)
}
