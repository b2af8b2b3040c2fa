package worker

import (
	"context"

	"github.com/rs/zerolog"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"

	"github.com/durable-browser/durable-browser/internal/actintercept"
	"github.com/durable-browser/durable-browser/internal/envelope"
)

// failureLog logs each activity failure once, at the level it deserves: a
// failure the model's call caused (a stale id, a refused argument) at info
// with its code; one an operator must act on (no browser, evidence not
// filed, a lost worker) at warn here, besides the SDK's own error line.
// The SDK logs the first kind at debug only (envelope.Error marks it benign).
func failureLog(log zerolog.Logger) interceptor.WorkerInterceptor {
	return actintercept.Around(func(ctx context.Context, in *interceptor.ExecuteActivityInput, next actintercept.Next) (any, error) {
		out, err := next(ctx, in)
		if err != nil {
			logFailure(log, activity.GetInfo(ctx), err)
		}
		return out, err
	})
}

func logFailure(log zerolog.Logger, info activity.Info, err error) {
	f, ok := envelope.From(err)
	if !ok {
		return // not an envelope: the SDK logs it as an error
	}
	ev := log.Info()
	msg := "tool call failed"
	if f.Code.OperatorMustAct() {
		ev, msg = log.Warn(), "tool call failed; an operator may need to act"
	}
	ev.Str("code", string(f.Code)).Bool("retryable", f.Retryable).Str("activity", info.ActivityType.Name).
		Str("workflow_id", info.WorkflowExecution.ID).Str("activity_id", info.ActivityID).Int32("attempt", info.Attempt).
		Str("message", f.Message).Msg(msg)
}
