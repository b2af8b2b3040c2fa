package test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

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
	time.Sleep(time.Second)
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
