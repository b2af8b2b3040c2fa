package metrics

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/actintercept"
	"github.com/durable-browser/durable-browser/internal/envelope"
)

// Interceptor records every activity execution of the worker it is given
// to (tool_calls_total, tool_duration_seconds).
func (m *Metrics) Interceptor() interceptor.WorkerInterceptor {
	return actintercept.Around(func(ctx context.Context, in *interceptor.ExecuteActivityInput, next actintercept.Next) (any, error) {
		start := time.Now()
		out, err := next(ctx, in)
		m.Observe(toolFor(activity.GetInfo(ctx).ActivityType.Name), codeFor(ctx, err), time.Since(start))
		return out, err
	})
}

// tools maps an activity name to the tool it serves.
var tools = func() map[string]string {
	out := map[string]string{}
	for _, t := range contract.Definitions() {
		if _, ok := out[t.Activity]; !ok {
			out[t.Activity] = t.Name
		}
	}
	return out
}()

func toolFor(activityName string) string {
	if t, ok := tools[activityName]; ok {
		return t
	}
	return activityName
}

// codeFor is "ok", the failure envelope's code, or "aborted" for a
// cancelled call; anything else is "error".
func codeFor(ctx context.Context, err error) string {
	if err == nil {
		return "ok"
	}
	if f, ok := envelope.From(err); ok {
		return string(f.Code)
	}
	if errors.Is(err, context.Canceled) || ctx.Err() != nil {
		return string(contract.CodeAborted)
	}
	return "error"
}
