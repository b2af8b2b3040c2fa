package crash

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/test/harness"
	"github.com/durable-browser/durable-browser/workflows"
)

// TestCrashMatrix cuts a worker with SIGKILL and with SIGTERM at each cut
// point it can reach deterministically; see docs/reliability.md.
func TestCrashMatrix(t *testing.T) {
	start := time.Now()
	for _, c := range []struct {
		name string
		run  func(t *testing.T, sig string)
	}{
		{"create", cutDuringCreate},
		{"read", cutDuringRead},
		{"run-before-send", cutRunBeforeSend},
		{"run-after-post", cutRunAfterPost},
		{"release", cutDuringRelease},
		{"handoff", cutDuringHandoff},
		{"approval-hold", cutDuringHold},
		{"continue-as-new", cutAroundContinueAsNew},
		{"after-create", cutAfterCreate},
		{"after-run", cutAfterRun},
		{"cdp-run", cutCDPRun},
	} {
		for _, sig := range []string{sigKill, sigTerm} {
			t.Run(c.name+"/"+sig, func(t *testing.T) { c.run(t, sig) })
		}
	}
	t.Run("temporal-restart", cutTemporalRestart)
	t.Logf("measured: the matrix ran in %v", time.Since(start).Round(time.Second))
}

// During create: the victim took browser.create and is launching Chrome
// (held at a gate in front of the binary) when it is cut. The create is
// custody class: it is retried, and a survivor creates the browser.
func cutDuringCreate(t *testing.T, sig string) {
	r := newRig(t, sig, true, workflows.SessionConfig{})
	id := r.uid()
	args := actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/about.html"})
	ch := r.async(id, "run", args)
	harness.Eventually(t, 60*time.Second, func() bool { _, err := os.Stat(r.gate + ".started"); return err == nil },
		"the victim never began launching Chrome; log:\n%s", r.p.Stderr)
	if !r.started(contract.ActivityCreate) {
		t.Fatal("browser.create is not under way while Chrome launches")
	}
	r.chrome = r.browserPIDs() // the launcher, held at the gate
	r.survivor()
	r.cut()
	a := r.receive(ch)
	if a.code() != "ok" {
		t.Errorf("the first call should succeed on the survivor, answered %s %s", a.code(), a.raw)
	}
	r.finish(row{Cut: "during create", Hook: "Chromium launch held at a gate (wrapper script) while browser.create runs on the victim"}, a, id, "run", args)
}

// During a read: the S3 server is frozen (SIGSTOP) so browser_read cannot
// finish filing its evidence; the victim is cut while the read is started.
func cutDuringRead(t *testing.T, sig string) {
	r := newRig(t, sig, false, workflows.SessionConfig{})
	r.open("/about.html")
	r.survivor()
	id := r.uid()
	args := map[string]any{}
	a := r.cutWhileS3Frozen(id, "browser_read", args, contract.ActivityRead)
	want := map[string]string{sigKill: string(contract.CodeSessionReplaced), sigTerm: "ok"}[sig]
	if a.code() != want {
		t.Errorf("read answered %s %s, want %s", a.code(), a.raw, want)
	}
	r.finish(row{Cut: "during a read", Hook: "browser_read started on the victim while S3 is frozen (SIGSTOP), so it cannot finish filing; for SIGTERM S3 is thawed right after the signal"}, a, id, "browser_read", args)
}

// In a run before anything is sent: the batch waits 10 s before it fills
// and submits the form; the victim is cut during the wait.
func cutRunBeforeSend(t *testing.T, sig string) {
	r := newRig(t, sig, false, workflows.SessionConfig{})
	r.open("/")
	var snap contract.SnapshotResult
	r.must("snapshot", map[string]any{"mode": "interactive"}, &snap)
	email := "before-" + uuid.NewString()[:8] + "@example.com"
	args := actions(
		map[string]any{"op": "wait", "ms": 10000},
		map[string]any{"op": "fill", "id": refFor(t, snap.Text, `textbox "Email"`), "value": email},
		map[string]any{"op": "click", "id": refFor(t, snap.Text, `button "Create account"`)},
	)
	r.survivor()
	id := r.uid()
	ch := r.async(id, "run", args)
	r.waitStarted(contract.ActivityRun)
	r.cut()
	a := r.receive(ch)
	f := a.failure()
	if a.code() != string(contract.CodeEffectUnknown) && a.code() != string(contract.CodeAborted) {
		t.Errorf("run answered %s %s, want effect_unknown or aborted", a.code(), a.raw)
	}
	if len(f.Sent) != 0 {
		t.Errorf("the answer lists requests sent: %+v", f.Sent)
	}
	r.finish(row{Cut: "in a run, before anything is sent", Hook: "batch [wait 10 s, fill, click]; cut once browser.run started, during the wait",
		Posts: posts("/submit", "email", email), WantPosts: 0, Note: "effect " + string(f.Effect)}, a, id, "run", args)
}

// After the POST left: the slow checkout counts the order on arrival and
// never answers; the victim is cut while the browser waits for it.
func cutRunAfterPost(t *testing.T, sig string) {
	r := newRig(t, sig, false, workflows.SessionConfig{})
	r.open("/slow-form.html")
	var snap contract.SnapshotResult
	r.must("snapshot", map[string]any{}, &snap)
	item := "lamp-" + uuid.NewString()[:8]
	args := actions(
		map[string]any{"op": "fill", "id": refFor(t, snap.Text, `textbox "Item"`), "value": item},
		map[string]any{"op": "click", "id": refFor(t, snap.Text, `button "Place order"`)},
		map[string]any{"op": "wait", "text": "Order placed"},
	)
	r.survivor()
	id := r.uid()
	ch := r.async(id, "run", args)
	harness.Eventually(t, 60*time.Second, func() bool { return posts("/slow-submit", "item", item) == 1 }, "the order never arrived")
	r.cut()
	a := r.receive(ch)
	f := a.failure()
	if a.code() != string(contract.CodeEffectUnknown) || f.Effect != contract.EffectPossiblyEffected {
		t.Errorf("run answered %s, want effect_unknown, possibly_effected", a.raw)
	}
	r.finish(row{Cut: "after the POST left", Hook: "slow checkout: counted on arrival, never answered; cut once the site counted it",
		Posts: posts("/slow-submit", "item", item), WantPosts: 1, Note: "effect " + string(f.Effect)}, a, id, "run", args)
}

// During release: the victim keeps checkpoints and S3 is frozen (SIGSTOP),
// so browser.release, started on the victim, cannot finish deleting the
// session's checkpoint; the victim is cut while it waits. (A frozen victim
// no longer holds a release: the server drops a stalled worker's polls
// within seconds, so the release is never handed to it.)
func cutDuringRelease(t *testing.T, sig string) {
	r := newRigWith(t, sig, false, workflows.SessionConfig{}, []string{stateKeyEnv()}, nil)
	r.open("/about.html")
	r.survivor()
	id := r.uid()
	args := map[string]any{}
	a := r.cutWhileS3Frozen(id, "browser_release", args, contract.ActivityRelease)
	if a.code() != "ok" {
		t.Errorf("release answered %s %s, want ok", a.code(), a.raw)
	}
	r.finish(row{Cut: "during release", Hook: "browser.release started on the victim while S3 is frozen (SIGSTOP), so it cannot finish deleting the session's checkpoint; for SIGTERM S3 is thawed right after the signal"}, a, id, "browser_release", args)
}

// During a handoff wait: the victim is cut while the session waits for a
// person; the person then answers "done".
func cutDuringHandoff(t *testing.T, sig string) {
	r := newRig(t, sig, false, workflows.SessionConfig{})
	r.open("/about.html")
	r.survivor()
	id := r.uid()
	args := map[string]any{"instruction": "Look at the page", "completion_condition": map[string]any{"text": "About"}}
	ch := r.async(id, "browser_request_handoff", args)
	var req string
	harness.Eventually(t, 60*time.Second, func() bool {
		st := r.state()
		if st.PendingHandoff != nil && !r.started(contract.ActivityNotify) {
			req = st.PendingHandoff.RequestID
		}
		return req != ""
	}, "no handoff pending")
	r.cut()
	if err := env.Client.SignalWorkflow(t.Context(), r.id, "", contract.SignalHandoff,
		contract.HandoffSignal{RequestID: req, Outcome: contract.OutcomeDone, By: "crash-matrix"}); err != nil {
		t.Fatal(err)
	}
	a := r.receive(ch)
	var res contract.HandoffResult
	_ = json.Unmarshal(a.raw, &res)
	note := fmt.Sprintf("outcome %s, condition_met %v", res.Outcome, res.ConditionMet)
	if res.SnapshotFailure != nil {
		note += ", snapshot_failure " + string(res.SnapshotFailure.Code)
	}
	// The browser the person was to work in went with its worker: "done"
	// must not be taken as the condition met.
	if a.code() != "ok" || res.Outcome != contract.OutcomeDone || res.ConditionMet {
		t.Errorf("handoff answered %s", a.raw)
	}
	r.finish(row{Cut: "during a handoff wait", Hook: "handoff pending (notice sent), victim cut, then the person signals done", Note: note}, a, id, "browser_request_handoff", args)
}

// During an approval hold: the run holds the form's POST for a person
// (action_policy ask) when the victim is cut; nothing reaches the site.
func cutDuringHold(t *testing.T, sig string) {
	r := newRig(t, sig, false, workflows.SessionConfig{Session: contract.SessionOptions{ActionPolicy: contract.PolicyAsk}})
	r.open("/")
	var snap contract.SnapshotResult
	r.must("snapshot", map[string]any{"mode": "interactive"}, &snap)
	email := "hold-" + uuid.NewString()[:8] + "@example.com"
	args := actions(
		map[string]any{"op": "fill", "id": refFor(t, snap.Text, `textbox "Email"`), "value": email},
		map[string]any{"op": "click", "id": refFor(t, snap.Text, `button "Create account"`)},
	)
	r.survivor()
	id := r.uid()
	ch := r.async(id, "run", args)
	harness.Eventually(t, 60*time.Second, func() bool {
		for _, h := range r.state().Holds {
			if h.Decision == "" {
				return true
			}
		}
		return false
	}, "no hold appeared")
	r.cut()
	a := r.receive(ch)
	f := a.failure()
	if a.code() == "ok" {
		t.Errorf("a run cut during its hold answered ok: %s", a.raw)
	}
	r.finish(row{Cut: "during an approval hold", Hook: "action_policy ask: cut while the form's POST is held for a decision",
		Posts: posts("/submit", "email", email), WantPosts: 0, Note: "effect " + string(f.Effect)}, a, id, "run", args)
}

// Around continue-as-new: every call ends a run (ContinueAsNewAfter: 1);
// the victim is cut as soon as a submit is answered, while the session
// hands over to its next run and reconciles the browser.
func cutAroundContinueAsNew(t *testing.T, sig string) {
	r := newRig(t, sig, false, workflows.SessionConfig{ContinueAsNewAfter: 1})
	r.open("/")
	var snap contract.SnapshotResult
	r.must("snapshot", map[string]any{"mode": "interactive"}, &snap)
	email := "can-" + uuid.NewString()[:8] + "@example.com"
	args := actions(
		map[string]any{"op": "fill", "id": refFor(t, snap.Text, `textbox "Email"`), "value": email},
		map[string]any{"op": "click", "id": refFor(t, snap.Text, `button "Create account"`)},
		map[string]any{"op": "wait", "text": "Thanks"},
	)
	r.survivor()
	id := r.uid()
	a := r.call(id, "run", args)
	r.cut()
	if a.code() != "ok" {
		t.Errorf("the submit answered %s", a.raw)
	}
	r.finish(row{Cut: "around continue-as-new", Hook: "ContinueAsNewAfter 1; cut the moment the submit is answered, as the run continues as new",
		Posts: posts("/submit", "email", email), WantPosts: 1}, a, id, "run", args)
}

// A restart of the Temporal server itself mid-call: the worker lives on;
// the server stops and starts again on its SQLite file while a submit runs.
func cutTemporalRestart(t *testing.T) {
	r := newRig(t, "", false, workflows.SessionConfig{})
	// The server is down for seconds: a heartbeat bound that outlasts it.
	r.cfg.Timeouts.Heartbeat = 30 * time.Second
	r.open("/")
	var snap contract.SnapshotResult
	r.must("snapshot", map[string]any{"mode": "interactive"}, &snap)
	email := "restart-" + uuid.NewString()[:8] + "@example.com"
	args := actions(
		map[string]any{"op": "wait", "ms": 3000},
		map[string]any{"op": "fill", "id": refFor(t, snap.Text, `textbox "Email"`), "value": email},
		map[string]any{"op": "click", "id": refFor(t, snap.Text, `button "Create account"`)},
		map[string]any{"op": "wait", "text": "Thanks"},
	)
	id := r.uid()
	ch := r.async(id, "run", args)
	r.waitStarted(contract.ActivityRun)
	began := time.Now()
	if err := env.RestartTemporal(context.Background()); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	t.Logf("measured: the server was restarted in %v", back.Sub(began).Round(time.Millisecond))
	a := r.receive(ch)
	took := time.Since(back).Round(100 * time.Millisecond)
	t.Logf("measured: the call answered %v after the server was back", took)
	// The batch itself runs on for a few seconds after the restart; a wait
	// near a minute is tasks routed to the server's members from before the
	// restart (devstack keeps its internal ports so there are none).
	if took > 30*time.Second {
		t.Errorf("the call answered %v after the server was back: tasks waited for the old cluster members to leave the ring", took)
	}
	r.sig = "server restart"
	r.finish(row{Cut: "Temporal server restart mid-call", Hook: "batch [wait 3 s, fill, click, wait]; the embedded server (SQLite file) is stopped and started once browser.run started; the worker lives",
		Posts: posts("/submit", "email", email), WantPosts: 1, Note: fmt.Sprintf("answered %v after the server was back", took)}, a, id, "run", args)
}
