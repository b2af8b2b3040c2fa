package worker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"
)

// The SDK ends an activity's context with a cause: the server's answer to a
// heartbeat (cancel requested, call not found), or a heartbeat RPC that
// failed for a moment. Only the server's word (or the worker's stop) ends
// the call; a heartbeat that did not get through leaves it running.
func TestJudgedByServer(t *testing.T) {
	cases := []struct {
		name  string
		cause error
		ends  bool
	}{
		{"heartbeat rpc timed out", serviceerror.NewDeadlineExceeded("context deadline exceeded"), false},
		{"server unavailable", serviceerror.NewUnavailable("connection refused"), false},
		{"server busy", serviceerror.NewResourceExhausted(0, "rps limit"), false},
		{"cancel requested", temporal.NewCanceledError(), true},
		{"call not found (timed out)", serviceerror.NewNotFound("activity not found"), true},
		{"paused", errors.New("activity paused"), true},
		{"plain cancel (worker stop)", nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			parent, cancel := context.WithCancelCause(context.WithValue(context.Background(), ctxKey{}, "v"))
			ctx, stop := judgedByServer(parent, zerolog.Nop())
			defer stop()
			cancel(c.cause)
			select {
			case <-ctx.Done():
				if !c.ends {
					t.Fatalf("the call's context ended on %v", c.cause)
				}
				if c.cause != nil && !errors.Is(context.Cause(ctx), c.cause) {
					t.Fatalf("cause = %v, want %v", context.Cause(ctx), c.cause)
				}
			case <-time.After(200 * time.Millisecond):
				if c.ends {
					t.Fatalf("the call's context did not end on %v", c.cause)
				}
			}
			if ctx.Value(ctxKey{}) != "v" {
				t.Fatal("the call's context lost the activity's values")
			}
		})
	}
}

// The deadline holds whatever else is ignored.
func TestJudgedByServerKeepsDeadline(t *testing.T) {
	parent, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	ctx, stop := judgedByServer(parent, zerolog.Nop())
	defer stop()
	select {
	case <-ctx.Done():
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Fatalf("err = %v, want deadline exceeded", ctx.Err())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the deadline did not end the call's context")
	}
}

type ctxKey struct{}
