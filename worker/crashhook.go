//go:build crashhooks

package worker

import (
	"context"
	"os"

	"github.com/rs/zerolog"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
)

// The crash matrix (test/crash) builds the worker with -tags crashhooks to
// place a cut where nothing outside the process can: after an activity has
// returned on the worker and before the server has recorded its result.
// With DURABLE_BROWSER_CRASH_HOLD_AFTER naming an activity type and
// DURABLE_BROWSER_CRASH_HOLD_FILE a path, the first successful return of
// that activity once the test created <path>.armed is held here for good:
// <path> is created and the result is never handed to the SDK, so the test
// cuts the process with the work done and unrecorded. Production builds
// hold no such hook (crashhook_off.go).
func crashHooks(log zerolog.Logger) []interceptor.WorkerInterceptor {
	act, file := os.Getenv("DURABLE_BROWSER_CRASH_HOLD_AFTER"), os.Getenv("DURABLE_BROWSER_CRASH_HOLD_FILE")
	if act == "" || file == "" {
		return nil
	}
	return []interceptor.WorkerInterceptor{&holdAfter{activity: act, file: file, log: log}}
}

type holdAfter struct {
	interceptor.WorkerInterceptorBase
	activity, file string
	log            zerolog.Logger
}

func (h *holdAfter) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	i := &holdAfterActivity{h: h}
	i.Next = next
	return i
}

type holdAfterActivity struct {
	interceptor.ActivityInboundInterceptorBase
	h *holdAfter
}

func (a *holdAfterActivity) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	out, err := a.Next.ExecuteActivity(ctx, in)
	if err != nil || activity.GetInfo(ctx).ActivityType.Name != a.h.activity {
		return out, err
	}
	if _, serr := os.Stat(a.h.file + ".armed"); serr != nil {
		return out, err
	}
	// Only the first: O_EXCL makes a later one pass through.
	f, ferr := os.OpenFile(a.h.file, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if ferr != nil {
		return out, err
	}
	_ = f.Close()
	a.h.log.Warn().Str("activity", a.h.activity).Msg("crash hook: holding the result until the process is cut")
	select {}
}
