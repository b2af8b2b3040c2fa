package test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	dbclient "github.com/durable-browser/durable-browser/client"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/test/harness"
	"github.com/durable-browser/durable-browser/workflows"
)

// A worker told to stop (SIGTERM) in the middle of a run that submits a form
// whose answer never comes: it stops taking calls, gives the run its stop
// grace, then the run answers effect_unknown as for a lost worker, the
// identical call is refused once, the site counts exactly the one order
// sent, and the worker releases its browser before it exits.
func TestWorkerStoppedMidRun(t *testing.T) {
	p := env.StartWorkerProcess(t, harness.ProcessOptions{Env: []string{"DURABLE_BROWSER_STOP_GRACE=3s"}})
	s := newSession(t, workflows.SessionConfig{})
	s.must("run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/slow-form.html"}), nil)
	var snap contract.SnapshotResult
	s.must("snapshot", map[string]any{}, &snap)
	item := refFor(t, snap.Text, `textbox "Item"`)
	button := refFor(t, snap.Text, `button "Place order"`)
	st, err := dbclient.State(context.Background(), env.Client, s.id)
	if err != nil || st.HostQueue != p.HostQueue() {
		t.Fatalf("session should live on the worker process: state %+v err %v, process queue %s", st, err, p.HostQueue())
	}
	chrome := harness.PIDsUnder(p.ProfileRoot)
	if len(chrome) == 0 {
		t.Fatal("no browser process found under the worker's profile root")
	}

	// The rest of the fleet keeps serving workflow tasks while this worker stops.
	env.StartWorker(t, harness.WorkerOptions{})

	before := slowSubmissions()
	batch := actions(
		map[string]any{"op": "fill", "id": item, "value": "one lamp"},
		map[string]any{"op": "click", "id": button},
		map[string]any{"op": "wait", "text": "Order placed"},
	)
	raw, _ := json.Marshal(batch)
	answer := make(chan json.RawMessage, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		out, err := dbclient.Call(ctx, env.Client, s.id, contract.ToolCall{Name: "run", Args: raw}, dbclient.CallOptions{Config: s.cfg})
		if err != nil {
			out, _ = json.Marshal(map[string]string{"error": err.Error()})
		}
		answer <- out
	}()
	harness.Eventually(t, 60*time.Second, func() bool { return slowSubmissions() == before+1 }, "the order never arrived")
	stopAt := time.Now()
	exited := p.Terminate()

	// The order's answer never comes, so the run cannot finish within the
	// grace: it is cut short and must say its effect is unknown.
	var f contract.Failure
	select {
	case out := <-answer:
		if err := json.Unmarshal(out, &f); err != nil || f.Code != contract.CodeEffectUnknown {
			t.Fatalf("want effect_unknown, got %s\nworker log:\n%s", out, p.Stderr)
		}
		t.Logf("measured: the cut-short run answered %v after SIGTERM", time.Since(stopAt).Round(time.Millisecond))
	case <-time.After(2 * time.Minute):
		t.Fatal("the run cut short by the stop never answered")
	}
	if f.Effect != contract.EffectPossiblyEffected || f.Retryable {
		t.Fatalf("effect_unknown should say possibly_effected and not retryable: %+v", f)
	}
	if !strings.Contains(f.LastURL, "/slow-") {
		t.Fatalf("effect_unknown should carry the page's URL: %+v", f)
	}
	posted := false
	for _, r := range f.Sent {
		posted = posted || (r.Method == "POST" && r.Path == "/slow-submit")
	}
	if !posted {
		t.Fatalf("effect_unknown should list the POST it sent: %+v", f.Sent)
	}

	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("the worker should exit cleanly after SIGTERM: %v\n%s", err, p.Stderr)
		}
		t.Logf("measured: the worker exited %v after SIGTERM, its browsers released", time.Since(stopAt).Round(time.Millisecond))
	case <-time.After(time.Minute):
		t.Fatalf("the worker did not exit after SIGTERM:\n%s", p.Stderr)
	}
	// It released its browser itself: none of its Chrome processes is left.
	for _, pid := range chrome {
		if alive(pid) {
			t.Fatalf("Chrome pid %d outlived its stopped worker", pid)
		}
	}
	if left := harness.PIDsUnder(p.ProfileRoot); len(left) > 0 {
		t.Fatalf("processes left under the stopped worker's profile root: %v", left)
	}

	// The identical call is refused once, without running.
	again := s.failure("run", batch)
	if again.Code != contract.CodeEffectUnknown {
		t.Fatalf("the identical call should be refused with effect_unknown, got %+v", again)
	}
	// The next identical call would run, but its worker is gone, so it
	// answers session_replaced instead of sending anything.
	third := s.failure("run", batch)
	if third.Code != contract.CodeSessionReplaced {
		t.Fatalf("after the worker stopped the call should answer session_replaced, got %+v", third)
	}
	if n := slowSubmissions() - before; n != 1 {
		t.Fatalf("the site should count exactly the one order really sent, counted %d", n)
	}
	s.must("browser_release", map[string]any{}, nil)
}

// A BrowserSession cancelled by an operator releases its browser before it
// ends: its worker lets go of the session and no Chrome of it is left.
func TestCancelledSessionReleasesBrowser(t *testing.T) {
	root := t.TempDir()
	w := env.StartWorker(t, harness.WorkerOptions{ProfileRoot: root})
	s := newSession(t, workflows.SessionConfig{})
	s.must("run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/about.html"}), nil)
	st, err := dbclient.State(context.Background(), env.Client, s.id)
	if err != nil {
		t.Fatal(err)
	}
	br := harness.HeldSessionBrowser(t, root, st.Tag)
	harness.CheckPlainBrowser(t, br)
	if err := env.Client.CancelWorkflow(context.Background(), s.id, ""); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := env.Client.GetWorkflow(ctx, s.id, "").Get(ctx, nil); !temporal.IsCanceledError(err) {
		t.Fatalf("the session should end cancelled, got %v", err)
	}
	for _, tag := range w.Activities().Sessions() {
		if tag == st.Tag {
			t.Fatalf("the cancelled session's browser %s is still held", tag)
		}
	}
	if br.Running() {
		t.Fatalf("the cancelled session's browser still runs: %v", br)
	}
}
