package test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	dbclient "github.com/durable-browser/durable-browser/client"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/test/harness"
	"github.com/durable-browser/durable-browser/workflows"
)

func slowSubmissions() int {
	n := 0
	for _, s := range env.Demo.Submissions() {
		if s.Path == "/slow-submit" {
			n++
		}
	}
	return n
}

// A worker killed with SIGKILL in the middle of a run that submits a form:
// the call answers effect_unknown, the identical call is refused once, and
// the site counts exactly the submissions that were really sent.
func TestWorkerKilledMidRun(t *testing.T) {
	p := env.StartWorkerProcess(t, harness.ProcessOptions{})
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

	// A second worker (in this process) keeps serving workflow tasks after the
	// kill, as the rest of a fleet would; the session stays on the process.
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
	p.Kill()

	var f contract.Failure
	select {
	case out := <-answer:
		if err := json.Unmarshal(out, &f); err != nil || f.Code != contract.CodeEffectUnknown {
			t.Fatalf("want effect_unknown, got %s", out)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the interrupted run never answered")
	}
	if f.Effect != contract.EffectPossiblyEffected || f.Retryable {
		t.Fatalf("effect_unknown should say possibly_effected and not retryable: %+v", f)
	}
	if f.LastURL == "" {
		t.Fatalf("effect_unknown should carry the last known URL: %+v", f)
	}

	// The identical call is refused once, without running.
	again := s.failure("run", batch)
	if again.Code != contract.CodeEffectUnknown {
		t.Fatalf("the identical call should be refused with effect_unknown, got %+v", again)
	}
	// The next identical call would run, but the browser died with its
	// worker, so it answers session_replaced instead of sending anything.
	third := s.failure("run", batch)
	if third.Code != contract.CodeSessionReplaced {
		t.Fatalf("after the host died the call should answer session_replaced, got %+v", third)
	}
	if n := slowSubmissions() - before; n != 1 {
		t.Fatalf("the site should count exactly the one order really sent, counted %d", n)
	}
	s.must("browser_release", map[string]any{}, nil)
	recordHistory(t, s.id, "worker-killed-mid-run")
	harness.KillUnder(p.ProfileRoot)
}

// Two worker processes share sessions by host queue; killing one ends only
// its sessions, and the survivor reaps the browsers the dead one left.
func TestTwoWorkersShareByHostQueue(t *testing.T) {
	root := filepath.Join(env.Dir, "shared-"+t.Name())
	a := env.StartWorkerProcess(t, harness.ProcessOptions{ProfileRoot: root, ReapInterval: 2 * time.Second})
	b := env.StartWorkerProcess(t, harness.ProcessOptions{ProfileRoot: root, ReapInterval: 2 * time.Second})
	onA, onB := map[*session]string{}, map[*session]string{}
	// The shared queue hands each create to either worker; twenty tries all
	// landing on one would be a one-in-half-a-million accident.
	for i := 0; i < 20 && (len(onA) == 0 || len(onB) == 0); i++ {
		s := newSession(t, workflows.SessionConfig{})
		s.must("run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/about.html"}), nil)
		st, err := dbclient.State(context.Background(), env.Client, s.id)
		if err != nil {
			t.Fatal(err)
		}
		switch st.HostQueue {
		case a.HostQueue():
			onA[s] = st.Tag
		case b.HostQueue():
			onB[s] = st.Tag
		default:
			t.Fatalf("session on unknown queue %q", st.HostQueue)
		}
	}
	if len(onA) == 0 || len(onB) == 0 {
		t.Fatalf("every session went to one worker (%d on A, %d on B); the shared queue should serve both", len(onA), len(onB))
	}
	// What the killed worker held, found while it runs: a Chrome each, or
	// contexts of its shared Chrome.
	held := map[*session]harness.SessionBrowser{}
	for s, tag := range onA {
		held[s] = harness.HeldSessionBrowser(t, root, tag)
	}
	a.Kill()
	for s := range onB {
		var snap contract.SnapshotResult
		s.must("snapshot", map[string]any{}, &snap)
		if snap.Title == "" {
			t.Fatalf("session on the live worker lost its page: %+v", snap)
		}
	}
	for s, tag := range onA {
		f := s.failure("snapshot", map[string]any{})
		if f.Code != contract.CodeSessionReplaced {
			t.Fatalf("a session of the killed worker should answer session_replaced, got %+v", f)
		}
		br := held[s]
		harness.Eventually(t, 60*time.Second, func() bool { return !br.Running() },
			"the killed worker's browser for %s was never reaped: %v", tag, br)
	}
}

// A browser whose workflow never releases it (here: a session workflow
// terminated by an operator) is released by its worker once no call has
// touched it for --orphan-after; no Chrome is left behind.
func TestOrphanedSessionReleased(t *testing.T) {
	root := t.TempDir()
	w := env.StartWorker(t, harness.WorkerOptions{ProfileRoot: root, OrphanAfter: 2 * time.Second, ReapInterval: 500 * time.Millisecond})
	s := newSession(t, workflows.SessionConfig{})
	s.must("run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/about.html"}), nil)
	st, err := dbclient.State(context.Background(), env.Client, s.id)
	if err != nil {
		t.Fatal(err)
	}
	br := harness.HeldSessionBrowser(t, root, st.Tag)
	if err := env.Client.TerminateWorkflow(context.Background(), s.id, "", "operator ended it"); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, func() bool { return len(w.Activities().Sessions()) == 0 },
		"the orphaned session %s was never released", st.Tag)
	harness.Eventually(t, 30*time.Second, func() bool { return !br.Running() },
		"the orphaned session's browser still runs: %v", br)
}

// A busy host (here: a worker process frozen with SIGSTOP) misses its
// schedule-to-start bound, so the session judges it lost and moves to a new
// browser on another worker. When the host comes back, its reaper sees that
// the session let go of the old browser and releases it, instead of leaving
// that Chrome running until the orphan bound.
func TestBusyHostGivesBackItsBrowser(t *testing.T) {
	root := filepath.Join(env.Dir, "busy-"+t.Name())
	p := env.StartWorkerProcess(t, harness.ProcessOptions{ProfileRoot: root, ReapInterval: time.Second})
	s := newSession(t, workflows.SessionConfig{Timeouts: workflows.Timeouts{ScheduleToStart: 3 * time.Second, Heartbeat: 4 * time.Second}})
	s.must("run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/about.html"}), nil)
	st, err := dbclient.State(context.Background(), env.Client, s.id)
	if err != nil || st.HostQueue != p.HostQueue() {
		t.Fatalf("session should live on the worker process: state %+v err %v", st, err)
	}
	oldTag := st.Tag
	old := harness.HeldSessionBrowser(t, root, oldTag)
	harness.CheckPlainBrowser(t, old)
	// The rest of the fleet: serves the session's workflow tasks and takes
	// the new browser while the host is frozen.
	env.StartWorker(t, harness.WorkerOptions{})

	pid := p.Cmd.Process.Pid
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	}
	t.Cleanup(resume)

	f := s.failure("snapshot", map[string]any{})
	if f.Code != contract.CodeSessionReplaced {
		t.Fatalf("a call to a frozen host should answer session_replaced, got %+v", f)
	}
	s.must("snapshot", map[string]any{}, nil)
	st, err = dbclient.State(context.Background(), env.Client, s.id)
	if err != nil || st.Tag == oldTag || st.HostQueue == p.HostQueue() {
		t.Fatalf("the session should have moved to a new browser elsewhere: %+v err %v", st, err)
	}
	// Frozen, the host still holds the old browser.
	if !old.Running() {
		t.Fatal("the old browser was gone before its host came back: the test proves nothing")
	}
	resume()
	harness.Eventually(t, 60*time.Second, func() bool { return !old.Running() },
		"the host came back and kept the browser its session let go of: %v", old)
	harness.Eventually(t, 10*time.Second, func() bool {
		return strings.Contains(p.Stderr.String(), "released a browser its workflow let go of")
	}, "the host released the browser without saying why")
}
