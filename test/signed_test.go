package test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/test/harness"
	"github.com/durable-browser/durable-browser/workflows"
)

// A worker with approver keys acts only on signed decisions: an unsigned
// approval (sent as anyone who can signal the namespace would) is recorded
// as rejected and the form stays held; the CLI refuses to send one; the
// approval signed with the approver's key (approvals approve --key) lets
// the form go.
func TestApprovalsSigned(t *testing.T) {
	key := filepath.Join(t.TempDir(), "dee.key")
	line := cliOK(t, "approvals", "keygen", "--name", "dee", "--out", key)
	approvers, err := contract.ParseApprovers(strings.NewReader(line))
	if err != nil || len(approvers) != 1 {
		t.Fatalf("keygen printed %q: %v", line, err)
	}
	env.StartWorker(t, harness.WorkerOptions{Approvers: approvers})
	s := newSession(t, workflows.SessionConfig{Session: contract.SessionOptions{ActionPolicy: contract.PolicyAsk}})
	var run contract.RunResult
	s.must("run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/"}), &run)
	var snap contract.SnapshotResult
	s.must("snapshot", map[string]any{"mode": "interactive"}, &snap)
	email := "signed-" + uuid.NewString()[:8] + "@example.com"
	arrived := func() int {
		n := 0
		for _, sub := range env.Demo.Submissions() {
			if sub.Fields["email"] == email {
				n++
			}
		}
		return n
	}
	call := s.callAsync("run", actions(
		map[string]any{"op": "fill", "id": refFor(t, snap.Text, `textbox "Email"`), "value": email},
		map[string]any{"op": "click", "id": refFor(t, snap.Text, `button "Create account"`)},
	))
	var hold contract.Hold
	harness.Eventually(t, 60*time.Second, func() bool {
		for _, h := range state(t, s.id).Holds {
			if h.Decision == "" {
				hold = h
				return true
			}
		}
		return false
	}, "no hold appeared; worker log:\n%s", tail(env.Log.String(), 40))
	if st := state(t, s.id); len(st.Approvers) != 1 || st.Approvers[0] != "dee" {
		t.Fatalf("state names approvers %v", st.Approvers)
	}

	// Unsigned, straight to the namespace: rejected, recorded, nothing sent.
	signal(t, s.id, contract.SignalApproval, contract.ApprovalSignal{HoldID: hold.HoldID, Decision: contract.DecisionApprove, By: "dee"})
	var st *contract.SessionState
	harness.Eventually(t, 30*time.Second, func() bool {
		st = state(t, s.id)
		return len(st.Rejected) > 0
	}, "the unsigned approval was not recorded as rejected")
	if r := st.Rejected[0]; r.Kind != contract.KindApproval || r.ID != hold.HoldID || r.Reason != contract.RejectUnsigned || r.By != "dee" {
		t.Fatalf("rejection %+v", r)
	}
	if st.State != contract.StateHeld || st.Holds[0].Decision != "" {
		t.Fatalf("an unsigned approval changed the hold: %+v", st)
	}
	// Signed with a key that is not the approver's: rejected too.
	stranger := filepath.Join(t.TempDir(), "eve.key")
	cliOK(t, "approvals", "keygen", "--name", "dee", "--out", stranger)
	if r := cli(t, "approvals", "approve", s.id, hold.HoldID, "--key", stranger); r.code != 1 || !strings.Contains(r.stderr, contract.RejectBadSignature) {
		t.Fatalf("approve with another key: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// The CLI refuses to send an unsigned one.
	if r := cli(t, "approvals", "approve", s.id, hold.HoldID, "--by", "dee"); r.code != 1 || !strings.Contains(r.stderr, "--key") {
		t.Fatalf("unsigned approve: exit %d\n%s", r.code, r.stderr)
	}
	// The request waits at the worker's gate, so nothing can have arrived:
	// the session still holds it undecided.
	if st := state(t, s.id); st.State != contract.StateHeld || st.Holds[0].Decision != "" {
		t.Fatalf("after the refused approvals: %+v", st)
	}
	if n := arrived(); n != 0 {
		t.Fatalf("the form arrived %d times before a signed approval", n)
	}

	cliOK(t, "approvals", "approve", s.id, hold.HoldID, "--key", key, "--note", "checked")
	a := receive(t, call)
	if a.err != nil {
		t.Fatal(a.err)
	}
	harness.Eventually(t, 30*time.Second, func() bool { return arrived() == 1 }, "the approved form never arrived: %s", a.raw)
	var res contract.RunResult
	if err := json.Unmarshal(a.raw, &res); err != nil || !res.OK {
		t.Fatalf("run answer: %s", a.raw)
	}
	st = state(t, s.id)
	if h := st.Holds[0]; h.Decision != contract.DecisionApprove || h.By != "dee" || h.Note != "checked" {
		t.Fatalf("hold %+v", h)
	}
	if len(st.Rejected) != 2 || st.Rejected[1].Reason != contract.RejectBadSignature {
		t.Fatalf("rejected %+v", st.Rejected)
	}
	s.must("browser_release", map[string]any{}, nil)
	recordHistory(t, s.id, "approval-signed")
}

// inlineSigner is an orchestrator's workflow that opens its browser inline
// under policy ask with approvers, and submits the demo's form with email.
func inlineSigner(approvers contract.Approvers) func(workflow.Context, string) (*contract.RunResult, error) {
	return func(ctx workflow.Context, email string) (*contract.RunResult, error) {
		// The orchestrator's own "state" query, which people's commands
		// must not take for the browser's.
		if err := workflow.SetQueryHandler(ctx, contract.QueryState, func() (string, error) { return "thinking", nil }); err != nil {
			return nil, err
		}
		b, err := workflows.Open(ctx, workflows.Config{Session: contract.SessionOptions{ActionPolicy: contract.PolicyAsk}, Approvers: approvers})
		if err != nil {
			return nil, err
		}
		defer func() { _ = b.Close(ctx) }()
		if _, err := b.Run(ctx, contract.RunArgs{Actions: []byte(`[{"op":"goto","url":"` + env.Demo.URL() + `/"}]`)}); err != nil {
			return nil, err
		}
		return b.Run(ctx, contract.RunArgs{Actions: []byte(`[{"op":"fill","locator":{"label":"Email"},"value":"` + email + `"},` +
			`{"op":"click","locator":{"role":"button","name":"Create account"}}]`)})
	}
}

// A browser opened inline in an orchestrator's workflow is decided for as a
// session is: approvals list --workflow finds its hold, and a signed
// approval (which needs the hold from the workflow's state) lets the form go,
// though the orchestrator answers a "state" query of its own.
func TestInlineApprovalsSigned(t *testing.T) {
	key := filepath.Join(t.TempDir(), "dee.key")
	approvers, err := contract.ParseApprovers(strings.NewReader(cliOK(t, "approvals", "keygen", "--name", "dee", "--out", key)))
	if err != nil {
		t.Fatal(err)
	}
	env.StartWorker(t, harness.WorkerOptions{Approvers: approvers})
	queue := "inline-" + uuid.NewString()[:8]
	w := sdkworker.New(env.Client, queue, sdkworker.Options{})
	w.RegisterWorkflowWithOptions(inlineSigner(approvers), workflow.RegisterOptions{Name: "InlineSigner"})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	email := "inline-" + uuid.NewString()[:8] + "@example.com"
	id := "orchestrator-" + uuid.NewString()[:8]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run, err := env.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, "InlineSigner", email)
	if err != nil {
		t.Fatal(err)
	}

	// Not found by list, found by list --workflow.
	type row struct {
		WorkflowID string `json:"workflow_id"`
		HoldID     string `json:"hold_id"`
		Path       string `json:"path"`
	}
	var rows []row
	harness.Eventually(t, 60*time.Second, func() bool {
		rows = nil
		out := cliOK(t, "approvals", "list", "--workflow", id, "--json")
		return json.Unmarshal([]byte(out), &rows) == nil && len(rows) == 1
	}, "approvals list --workflow %s never showed the hold; worker log:\n%s", id, tail(env.Log.String(), 40))
	if rows[0].WorkflowID != id || rows[0].HoldID == "" {
		t.Fatalf("rows %+v", rows)
	}
	if out := cliOK(t, "approvals", "list", "--json"); strings.Contains(out, id) {
		t.Fatalf("list without --workflow found the inline browser; the docs say it does not: %s", out)
	}
	if r := cli(t, "approvals", "list", "--workflow", "no-such-"+id); r.code != 1 || !strings.Contains(r.stderr, "no workflow") {
		t.Fatalf("list --workflow of no workflow: exit %d\n%s", r.code, r.stderr)
	}

	cliOK(t, "approvals", "approve", id, rows[0].HoldID, "--key", key)
	var res contract.RunResult
	if err := run.Get(ctx, &res); err != nil || !res.OK {
		t.Fatalf("the orchestrator's run: %v %+v", err, res)
	}
	if len(res.Held) != 1 || res.Held[0].Decision != "approved" || res.Held[0].By != "dee" {
		t.Fatalf("held %+v", res.Held)
	}
	harness.Eventually(t, 30*time.Second, func() bool {
		for _, sub := range env.Demo.Submissions() {
			if sub.Fields["email"] == email {
				return true
			}
		}
		return false
	}, "the approved form never arrived")
}
