package activities

import (
	"context"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/driver"
	"github.com/durable-browser/durable-browser/internal/redactgate"
)

// stallingRun makes a run click, announce itself on started and then wait
// for its settle until ctx ends or finish is closed. A run nobody ends
// finishes by itself after a long bound, so a missing cut fails rather than
// hangs.
func stallingRun(started chan<- struct{}, finish <-chan struct{}) func(*fakeBrowser) {
	return func(b *fakeBrowser) {
		b.url = "https://shop.example/checkout"
		b.runFn = func(ctx context.Context, actions []driver.Action) (*contract.RunResult, error) {
			sent := []contract.SentRequest{{Method: "POST", Origin: "https://shop.example", Path: "/order"}}
			started <- struct{}{}
			select {
			case <-ctx.Done():
				return &contract.RunResult{Completed: 0, Total: len(actions), Sent: sent},
					&driver.ActionError{Index: 0, Op: "click", Kind: driver.KindBrowser, Reason: ctx.Err().Error(), Err: ctx.Err()}
			case <-finish:
			case <-time.After(10 * time.Second):
			}
			return &contract.RunResult{Page: contract.Page{URL: b.url}, Completed: len(actions), Total: len(actions), Sent: sent}, nil
		}
	}
}

// A run cut short by its worker stopping, after its grace, answers
// effect_unknown with the page and what was sent, like a lost worker.
func TestRunCutShortByStoppingWorker(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.StopGrace = 200 * time.Millisecond })
	stop := make(chan struct{})
	h.env.SetWorkerStopChannel(stop)
	started, finish := make(chan struct{}, 1), make(chan struct{})
	defer close(finish)
	h.setup = stallingRun(started, finish)
	ref := h.create("t-1", contract.SessionOptions{})

	errc := make(chan error, 1)
	go func() {
		_, err := call[contract.RunResult](h, contract.ActivityRun, runReq(ref, []byte(`[{"op":"click","id":"3"}]`)))
		errc <- err
	}()
	<-started
	close(stop)
	var err error
	select {
	case err = <-errc:
	case <-time.After(8 * time.Second):
		t.Fatal("the run was not cut short after the stop grace")
	}
	f := wantCode(t, err, contract.CodeEffectUnknown, false)
	if f.Effect != contract.EffectPossiblyEffected {
		t.Fatalf("effect = %s, want possibly_effected", f.Effect)
	}
	if f.LastURL != "https://shop.example/checkout" {
		t.Fatalf("last url = %q", f.LastURL)
	}
	if len(f.Sent) != 1 || f.Sent[0].Method != "POST" || f.Sent[0].Path != "/order" {
		t.Fatalf("sent = %+v", f.Sent)
	}
}

// A run that finishes within the grace answers as usual.
func TestRunFinishesWithinStopGrace(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.StopGrace = time.Minute })
	stop := make(chan struct{})
	h.env.SetWorkerStopChannel(stop)
	started, finish := make(chan struct{}, 1), make(chan struct{})
	h.setup = stallingRun(started, finish)
	ref := h.create("t-1", contract.SessionOptions{})

	type answer struct {
		res *contract.RunResult
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := call[contract.RunResult](h, contract.ActivityRun, runReq(ref, []byte(`[{"op":"click","id":"3"}]`)))
		done <- answer{res, err}
	}()
	<-started
	close(stop)
	close(finish)
	a := <-done
	if a.err != nil || !a.res.OK || a.res.Completed != 1 {
		t.Fatalf("run = %+v, %v; want the finished result", a.res, a.err)
	}
}

// A run whose request left and whose context then ended, whatever ended it
// (a cancel, its deadline), answers effect_unknown with what was sent, so
// the guard records it: never aborted, which says nothing ran.
func TestRunCutAfterSendIsEffectUnknown(t *testing.T) {
	for name, end := range map[string]func(context.Context) (context.Context, func()){
		"cancelled": func(ctx context.Context) (context.Context, func()) {
			ctx, cancel := context.WithCancel(ctx)
			return ctx, cancel
		},
		"deadline": func(ctx context.Context) (context.Context, func()) {
			ctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			return ctx, cancel
		},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, nil)
			started, finish := make(chan struct{}, 1), make(chan struct{})
			defer close(finish)
			h.setup = stallingRun(started, finish)
			ref := h.create("t-1", contract.SessionOptions{})
			ctx, stop := end(context.Background())
			errc := make(chan error, 1)
			go func() {
				_, err := h.a.Run(ctx, runReq(ref, []byte(`[{"op":"click","id":"3"}]`)))
				// Called directly, not through a worker: the gate makes
				// the error what the worker would send.
				errc <- redactgate.Error(h.red, err)
			}()
			<-started
			stop()
			var err error
			select {
			case err = <-errc:
			case <-time.After(8 * time.Second):
				t.Fatal("the run did not end with its context")
			}
			f := wantCode(t, err, contract.CodeEffectUnknown, false)
			if f.Effect != contract.EffectPossiblyEffected {
				t.Fatalf("effect = %s, want possibly_effected", f.Effect)
			}
			if len(f.Sent) != 1 || f.Sent[0].Method != "POST" || f.Sent[0].Path != "/order" {
				t.Fatalf("sent = %+v", f.Sent)
			}
		})
	}
}
