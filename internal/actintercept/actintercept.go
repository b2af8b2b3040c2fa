// Package actintercept makes a Temporal worker interceptor from the one part
// that differs between the worker's activity interceptors: what happens
// around a call. The SDK's WorkerInterceptor → ActivityInboundInterceptor
// wrapping is written once here instead of in each interceptor.
package actintercept

import (
	"context"

	"go.temporal.io/sdk/interceptor"
)

// Next runs the rest of the chain (the inner interceptors and the activity).
type Next func(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error)

// Options says what the interceptor does.
type Options struct {
	// Execute runs around every activity call; it must call next (or
	// decide not to) and return the call's answer. Nil passes calls through.
	Execute func(ctx context.Context, in *interceptor.ExecuteActivityInput, next Next) (any, error)
	// Outbound, if set, wraps the activity's outbound interceptor (what the
	// activity calls: heartbeats, logger, info).
	Outbound func(next interceptor.ActivityOutboundInterceptor) interceptor.ActivityOutboundInterceptor
}

// New returns a worker interceptor that applies o to every activity.
func New(o Options) interceptor.WorkerInterceptor { return &worker{o: o} }

// Around is New with only Execute set.
func Around(execute func(ctx context.Context, in *interceptor.ExecuteActivityInput, next Next) (any, error)) interceptor.WorkerInterceptor {
	return New(Options{Execute: execute})
}

type worker struct {
	interceptor.WorkerInterceptorBase
	o Options
}

func (w *worker) InterceptActivity(_ context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	i := &inbound{o: w.o}
	i.Next = next
	return i
}

type inbound struct {
	interceptor.ActivityInboundInterceptorBase
	o Options
}

func (i *inbound) Init(outbound interceptor.ActivityOutboundInterceptor) error {
	if i.o.Outbound != nil {
		outbound = i.o.Outbound(outbound)
	}
	return i.Next.Init(outbound)
}

func (i *inbound) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	if i.o.Execute == nil {
		return i.Next.ExecuteActivity(ctx, in)
	}
	return i.o.Execute(ctx, in, i.Next.ExecuteActivity)
}
