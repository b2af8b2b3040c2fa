package test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"

	dbclient "github.com/durable-browser/durable-browser/client"
	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/admission"
	"github.com/durable-browser/durable-browser/test/harness"
	"github.com/durable-browser/durable-browser/worker"
)

// Back-pressure (docs/reliability.md, "Back-pressure"): a worker at its
// --max-browsers stops polling the create queue, so the next new session
// goes to another worker at its first attempt (nothing refused, nothing
// retried), while the session it holds goes on answering there.
func TestNewSessionGoesPastAWorkerAtMaxBrowsers(t *testing.T) {
	a := env.StartWorker(t, harness.WorkerOptions{MaxBrowsers: 1})
	s1 := openOn(t, a, "bp-max-"+time.Now().Format("150405.000"))
	harness.Eventually(t, 10*time.Second, func() bool { return !a.Admission().Status().Open },
		"worker A holds 1 of --max-browsers 1 and still takes new sessions: %+v", a.Admission().Status())
	b := env.StartWorker(t, harness.WorkerOptions{})
	s2 := leftToB(t, a, b, s1, 1)
	// Kept for replay: a session whose create went on the create queue.
	_ = env.Client.SignalWorkflow(context.Background(), s2, "", contract.SignalClose, nil)
	recordHistory(t, s2, "create-queue")
}

// A worker whose calls' p95 is past --latency-bound times its unloaded one
// does the same, but the one poll it had out when it went past may bring it
// the create: it refuses that one (retryable), and the retry goes to B. The
// gate is fed slow calls as a starved host's would be (a real starved
// host's latencies are not reproducible on demand).
func TestNewSessionGoesPastAWorkerPastLatencyBound(t *testing.T) {
	a := env.StartWorker(t, harness.WorkerOptions{LatencyBound: 2})
	s1 := openOn(t, a, "bp-lat-"+time.Now().Format("150405.000"))
	g := a.Admission()
	for i := 0; i < admission.MinSamples; i++ {
		g.Record(150 * time.Millisecond)
	}
	if st := g.Status(); !st.Open {
		t.Fatalf("unloaded, worker A stopped taking sessions: %+v", st)
	}
	for i := 0; i < 4*admission.MinSamples; i++ {
		g.Record(2 * time.Second)
	}
	if st := g.Status(); st.Open || !strings.Contains(st.Why, "--latency-bound") {
		t.Fatalf("p95 past 2x its baseline: want worker A closed to new sessions: %+v", st)
	}
	b := env.StartWorker(t, harness.WorkerOptions{})
	leftToB(t, a, b, s1, 2)
}

// openOn opens a session (its first call, a goto) with only w running and
// checks that w holds it.
func openOn(t *testing.T, w *worker.Worker, id string) string {
	t.Helper()
	t.Cleanup(func() { _ = env.Client.SignalWorkflow(context.Background(), id, "", contract.SignalClose, nil) })
	bpCall(t, id, "run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/"}))
	if got := hostOf(t, id); got != w.HostQueue() {
		t.Fatalf("%s opened on %q, want %q (the only worker)", id, got, w.HostQueue())
	}
	return id
}

// leftToB opens a second session with both workers running: B takes it
// within maxAttempts, and A's own session still answers on A.
func leftToB(t *testing.T, a, b *worker.Worker, s1 string, maxAttempts int) string {
	t.Helper()
	s2 := s1 + "-2"
	t.Cleanup(func() { _ = env.Client.SignalWorkflow(context.Background(), s2, "", contract.SignalClose, nil) })
	bpCall(t, s2, "run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/"}))
	if got := hostOf(t, s2); got != b.HostQueue() {
		t.Fatalf("the new session went to %q, want worker B %q: worker A, past its bound, still took it", got, b.HostQueue())
	}
	if n := createAttempts(t, s2); n > maxAttempts {
		t.Fatalf("the new session's create took %d attempts, want at most %d: worker A kept taking it and refusing it, instead of leaving it to B", n, maxAttempts)
	}
	for _, tag := range a.Activities().Sessions() {
		if strings.HasPrefix(tag, s2) {
			t.Fatalf("worker A holds the new session's browser %s", tag)
		}
	}
	for i := 0; i < 3; i++ {
		bpCall(t, s1, "snapshot", map[string]any{})
	}
	if got := hostOf(t, s1); got != a.HostQueue() {
		t.Fatalf("worker A's own session moved to %q", got)
	}
	return s2
}

func bpCall(t *testing.T, id, tool string, args any) {
	t.Helper()
	raw, _ := json.Marshal(args)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := dbclient.Call(ctx, env.Client, id, contract.ToolCall{Name: tool, Args: raw}, dbclient.CallOptions{})
	if err != nil {
		t.Fatalf("%s %s: %v", id, tool, err)
	}
	var head struct {
		OK bool `json:"ok"`
	}
	if json.Unmarshal(out, &head) != nil || !head.OK {
		t.Fatalf("%s %s answered %s", id, tool, out)
	}
}

func hostOf(t *testing.T, id string) string {
	t.Helper()
	st, err := dbclient.State(context.Background(), env.Client, id)
	if err != nil {
		t.Fatalf("%s: state: %v", id, err)
	}
	return st.HostQueue
}

// createAttempts is the attempt that completed the session's one
// browser.create, read from its history.
func createAttempts(t *testing.T, id string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	creates := map[int64]bool{}
	attempt := 0
	it := env.Client.GetWorkflowHistory(ctx, id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == contract.ActivityCreate {
			if q := a.GetTaskQueue().GetName(); q != contract.CreateQueue {
				t.Fatalf("create scheduled on %q, want the create queue", q)
			}
			creates[ev.GetEventId()] = true
		}
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil && creates[a.GetScheduledEventId()] {
			attempt = int(a.GetAttempt())
		}
	}
	if len(creates) != 1 {
		t.Fatalf("%d creates scheduled, want 1", len(creates))
	}
	if attempt == 0 {
		t.Fatalf("%s: no create started", id)
	}
	return attempt
}
