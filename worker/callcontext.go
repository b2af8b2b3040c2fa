package worker

import (
	"context"
	"errors"

	"github.com/rs/zerolog"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/interceptor"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/durable-browser/durable-browser/internal/actintercept"
)

// serverJudged gives every activity a context that the server, not one slow
// heartbeat, ends. The SDK (v1.50) cancels an activity's context when a
// single heartbeat RPC fails with a retryable error after retrying for only
// the heartbeat throttle interval (2 s here, heartbeatEvery), though the
// server still holds the call and would wait its 10 s heartbeat timeout.
// On a CPU-starved host that cut calls it had taken: creates answered
// browser_unavailable ("tab not ready: context canceled") and runs that had
// sent their POST answered as cancelled. The context given on keeps the
// deadline and every other end: the server's cancel, its "not found" (it
// already timed the call out), a pause or reset, the worker's stop.
func serverJudged(log zerolog.Logger) interceptor.WorkerInterceptor {
	return actintercept.Around(func(ctx context.Context, in *interceptor.ExecuteActivityInput, next actintercept.Next) (any, error) {
		cctx, stop := judgedByServer(ctx, log)
		defer stop()
		return next(cctx, in)
	})
}

// judgedByServer returns a context with ctx's values and deadline that ends
// when ctx ends, unless ctx ended only because a heartbeat could not reach
// the server in time.
func judgedByServer(ctx context.Context, log zerolog.Logger) (context.Context, func()) {
	base := context.WithoutCancel(ctx)
	cancelDeadline := func() {}
	if dl, ok := ctx.Deadline(); ok {
		base, cancelDeadline = context.WithDeadline(base, dl)
	}
	out, cancel := context.WithCancelCause(base)
	stopWatch := context.AfterFunc(ctx, func() {
		cause := context.Cause(ctx)
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return // base carries the same deadline and ends out with DeadlineExceeded
		}
		if errors.Is(ctx.Err(), context.Canceled) && heartbeatUnsent(cause) {
			log.Warn().AnErr("cause", cause).Msg("a heartbeat did not reach the server in time; the call goes on, the server judges whether it is lost")
			return
		}
		cancel(cause)
	})
	return out, func() { stopWatch(); cancel(nil); cancelDeadline() }
}

// heartbeatUnsent reports whether cause is a transient failure of the
// heartbeat RPC (the server busy or unreachable for a moment), as opposed
// to an answer from the server (cancel requested, call not found) or the
// worker's own stop. Only typed gRPC/service errors count.
func heartbeatUnsent(cause error) bool {
	if cause == nil || errors.Is(cause, context.Canceled) {
		return false
	}
	var st *status.Status
	var se serviceerror.ServiceError
	if errors.As(cause, &se) {
		st = se.Status()
	} else if s, ok := status.FromError(cause); ok {
		st = s
	} else if errors.Is(cause, context.DeadlineExceeded) {
		return true // the RPC's own bound
	}
	if st == nil {
		return false
	}
	switch st.Code() {
	case codes.DeadlineExceeded, codes.Unavailable, codes.ResourceExhausted, codes.Aborted, codes.Internal, codes.Unknown:
		return true
	}
	return false
}
