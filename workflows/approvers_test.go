package workflows

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-browser/durable-browser/contract"
)

func approverKey(seed byte) (ed25519.PublicKey, ed25519.PrivateKey) {
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))
	return priv.Public().(ed25519.PublicKey), priv
}

var (
	anaPub, anaKey = approverKey(1)
	_, eveKey      = approverKey(9)
	testApprovers  = contract.Approvers{{Name: "ana", PublicKey: anaPub}}
)

// newSignedHarness runs the session as a worker configured with approvers does.
func newSignedHarness(t *testing.T, approvers contract.Approvers) *harness {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	f := newFakeWorker()
	f.register(env)
	env.RegisterWorkflowWithOptions(SessionWorkflow(approvers), workflow.RegisterOptions{Name: contract.WorkflowBrowserSession})
	env.SetStartWorkflowOptions(startOptions("sess-1"))
	return &harness{t: t, env: env, f: f, results: map[string]map[string]any{}, rejected: map[string]error{}}
}

func reasons(st contract.SessionState) []string {
	var out []string
	for _, r := range st.Rejected {
		out = append(out, r.Reason)
	}
	return out
}

// With approvers, a decision counts only when an approver signed it for
// this session's pending hold, before its expiry; every other one is
// recorded as rejected and the hold stays pending.
func TestSignedApprovals(t *testing.T) {
	for _, via := range []string{"worker", "session config"} {
		t.Run(via, func(t *testing.T) {
			h := newSignedHarness(t, testApprovers)
			cfg := SessionConfig{}
			if via == "session config" {
				h = newHarness(t)
				cfg.Approvers = testApprovers
			}
			var held, refused, decided contract.SessionState
			var pending, approved contract.HoldDecision
			h.call(time.Second, "c0", contract.ToolSnapshot, `{}`)
			h.signal(2*time.Second, contract.SignalHold, func() any {
				return contract.HoldSignal{HoldSubject: contract.HoldSubject{HoldID: "x1", Method: "POST", Origin: "https://shop.example", Path: "/order", ActivityID: "7"}}
			})
			h.query(3*time.Second, contract.QueryState, &held)
			signed := func(key ed25519.PrivateKey, wf string, mod func(*contract.ApprovalSignal), validFor time.Duration) func() any {
				return func() any {
					s := contract.ApprovalSignal{HoldID: "x1", Decision: contract.DecisionApprove, By: "ana", Note: "ok"}
					if mod != nil {
						mod(&s)
					}
					hold := held.Holds[0]
					hold.HoldID = s.HoldID
					if err := s.Sign(key, wf, hold, h.env.Now().Add(validFor)); err != nil {
						t.Fatal(err)
					}
					return s
				}
			}
			wants := []string{}
			bad := func(at time.Duration, reason string, v func() any) {
				h.signal(at, contract.SignalApproval, v)
				wants = append(wants, reason)
			}
			bad(4*time.Second, contract.RejectUnsigned, func() any {
				return contract.ApprovalSignal{HoldID: "x1", Decision: contract.DecisionApprove, By: "ana"}
			})
			bad(5*time.Second, contract.RejectBadSignature, signed(eveKey, "sess-1", nil, 5*time.Minute))
			bad(6*time.Second, contract.RejectUnknownSigner, signed(eveKey, "sess-1", func(s *contract.ApprovalSignal) { s.By = "eve" }, 5*time.Minute))
			bad(7*time.Second, contract.RejectNotPending, signed(anaKey, "sess-1", func(s *contract.ApprovalSignal) { s.HoldID = "zz" }, 5*time.Minute))
			bad(8*time.Second, contract.RejectBadSignature, signed(anaKey, "other-session", nil, 5*time.Minute))
			bad(9*time.Second, contract.RejectExpired, signed(anaKey, "sess-1", nil, -time.Second))
			bad(10*time.Second, contract.RejectExpiryTooFar, signed(anaKey, "sess-1", nil, 3*time.Hour))
			bad(11*time.Second, contract.RejectBadSignature, func() any {
				s := signed(anaKey, "sess-1", nil, 5*time.Minute)().(contract.ApprovalSignal)
				s.Decision = contract.DecisionDeny // tampered after signing
				return s
			})
			bad(12*time.Second, contract.RejectBadVerdict, signed(anaKey, "sess-1", func(s *contract.ApprovalSignal) { s.Decision = "maybe" }, 5*time.Minute))
			h.query(13*time.Second, contract.QueryState, &refused)
			h.query(13*time.Second, contract.QueryHold, &pending, "x1")
			h.signal(14*time.Second, contract.SignalApproval, signed(anaKey, "sess-1", nil, 5*time.Minute))
			bad(15*time.Second, contract.RejectAlreadyDone, signed(anaKey, "sess-1", func(s *contract.ApprovalSignal) { s.Decision = contract.DecisionDeny }, 5*time.Minute))
			h.query(16*time.Second, contract.QueryHold, &approved, "x1")
			h.query(16*time.Second, contract.QueryState, &decided)
			h.run(cfg)

			if len(held.Approvers) != 1 || held.Approvers[0] != "ana" {
				t.Fatalf("state names approvers %v", held.Approvers)
			}
			if pending.Decision != "" || refused.State != contract.StateHeld || refused.Holds[0].Decision != "" {
				t.Fatalf("a rejected decision changed the hold: %+v, state %+v", pending, refused)
			}
			if got := reasons(refused); len(got) != len(wants)-1 {
				t.Fatalf("rejected %v, want %v", got, wants[:len(wants)-1])
			}
			if approved.Decision != contract.DecisionApprove || approved.By != "ana" {
				t.Fatalf("the signed approval: %+v", approved)
			}
			got := reasons(decided)
			if len(got) != len(wants) {
				t.Fatalf("rejected %v, want %v", got, wants)
			}
			for i := range wants {
				if got[i] != wants[i] {
					t.Errorf("rejection %d: %s, want %s", i, got[i], wants[i])
				}
			}
			if r := decided.Rejected[0]; r.Kind != contract.KindApproval || r.ID != "x1" || r.By != "ana" || r.At.IsZero() {
				t.Errorf("rejection record %+v", r)
			}
		})
	}
}

func TestSignedHandoff(t *testing.T) {
	h := newSignedHarness(t, testApprovers)
	var during, refused contract.SessionState
	h.call(time.Second, "h1", contract.ToolRequestHandoff,
		`{"instruction":"Solve the puzzle","completion_condition":{"text":"Pay now"},"expires_in_s":60}`)
	h.query(2*time.Second, contract.QueryState, &during)
	answer := func(key ed25519.PrivateKey, by string, validFor time.Duration) func() any {
		return func() any {
			s := contract.HandoffSignal{RequestID: during.PendingHandoff.RequestID, Outcome: contract.OutcomeDone, By: by, Note: "solved"}
			if key != nil {
				if err := s.Sign(key, "sess-1", h.env.Now().Add(validFor)); err != nil {
					t.Fatal(err)
				}
			}
			return s
		}
	}
	h.signal(3*time.Second, contract.SignalHandoff, answer(nil, "ana", 0))
	h.signal(4*time.Second, contract.SignalHandoff, answer(eveKey, "ana", time.Minute))
	h.signal(5*time.Second, contract.SignalHandoff, answer(anaKey, "ana", -time.Minute))
	h.signal(6*time.Second, contract.SignalHandoff, func() any {
		s := answer(anaKey, "ana", time.Minute)().(contract.HandoffSignal)
		s.RequestID = "h-other"
		return s
	})
	h.query(7*time.Second, contract.QueryState, &refused)
	h.signal(8*time.Second, contract.SignalHandoff, answer(anaKey, "ana", time.Minute))
	h.run(SessionConfig{})

	if refused.State != contract.StateWaitingForHuman || refused.PendingHandoff == nil || refused.PendingHandoff.Answer != nil {
		t.Fatalf("a rejected answer changed the handoff: %+v", refused)
	}
	want := []string{contract.RejectUnsigned, contract.RejectBadSignature, contract.RejectExpired, contract.RejectNotPending}
	got := reasons(refused)
	if len(got) != len(want) {
		t.Fatalf("rejected %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] || refused.Rejected[i].Kind != contract.KindHandoff {
			t.Errorf("rejection %d: %+v, want %s", i, refused.Rejected[i], want[i])
		}
	}
	r := h.results["h1"]
	if r["outcome"] != contract.OutcomeDone || r["by"] != "ana" || r["waited_s"] != float64(7) {
		t.Fatalf("handoff result %v", r)
	}
}

// A signed handoff answer is bound to one session: a session started again
// under the same workflow id (whose first handoff comes from the same
// update id) names its request otherwise, so an answer signed for the
// earlier session, replayed, is refused and the handoff stays pending.
func TestSignedHandoffAnswerFromAnEarlierSessionIsRefused(t *testing.T) {
	ask := `{"instruction":"Solve the puzzle","completion_condition":{"text":"Pay now"},"expires_in_s":60}`
	first := newSignedHarness(t, testApprovers)
	var earlier contract.SessionState
	first.call(time.Second, "h1", contract.ToolRequestHandoff, ask)
	first.query(2*time.Second, contract.QueryState, &earlier)
	var old contract.HandoffSignal
	first.signal(3*time.Second, contract.SignalHandoff, func() any {
		old = contract.HandoffSignal{RequestID: earlier.PendingHandoff.RequestID, Outcome: contract.OutcomeDone, By: "ana", Note: "solved"}
		if err := old.Sign(anaKey, "sess-1", first.env.Now().Add(30*time.Minute)); err != nil {
			t.Fatal(err)
		}
		return old
	})
	first.run(SessionConfig{})
	if first.results["h1"]["outcome"] != contract.OutcomeDone {
		t.Fatalf("the first session's answer: %v", first.results["h1"])
	}

	second := newSignedHarness(t, testApprovers)
	var after contract.SessionState
	second.call(time.Second, "h1", contract.ToolRequestHandoff, ask)
	second.signal(2*time.Second, contract.SignalHandoff, func() any { return old })
	second.query(3*time.Second, contract.QueryState, &after)
	second.run(SessionConfig{})
	if after.PendingHandoff == nil || after.PendingHandoff.RequestID == old.RequestID || after.PendingHandoff.Answer != nil {
		t.Fatalf("the earlier session's answer was taken: %+v", after.PendingHandoff)
	}
	if got := reasons(after); len(got) != 1 || got[0] != contract.RejectNotPending {
		t.Fatalf("rejected %v, want the replayed answer refused as not pending", got)
	}
	if r := second.results["h1"]; r["outcome"] != contract.OutcomeExpired {
		t.Fatalf("the second handoff: %v", r)
	}
}

// Without approvers nothing changes: unsigned decisions count (unsigned
// mode), and nothing is recorded as rejected.
func TestUnsignedModeRecordsNoRejections(t *testing.T) {
	h := newSignedHarness(t, nil)
	var st contract.SessionState
	h.call(time.Second, "c0", contract.ToolSnapshot, `{}`)
	h.signal(2*time.Second, contract.SignalHold, func() any {
		return contract.HoldSignal{HoldSubject: contract.HoldSubject{HoldID: "x1", Method: "POST"}}
	})
	h.signal(3*time.Second, contract.SignalApproval, func() any { return contract.ApprovalSignal{HoldID: "zz", Decision: contract.DecisionApprove} })
	h.signal(4*time.Second, contract.SignalApproval, func() any { return contract.ApprovalSignal{HoldID: "x1", Decision: contract.DecisionDeny, By: "x"} })
	h.query(5*time.Second, contract.QueryState, &st)
	h.run(SessionConfig{})
	if len(st.Rejected) != 0 || len(st.Approvers) != 0 || st.Holds[0].Decision != contract.DecisionDeny {
		t.Fatalf("state %+v", st)
	}
}

// The rejected list is bounded and keeps the latest.
func TestRejectedDecisionsAreBounded(t *testing.T) {
	h := newSignedHarness(t, testApprovers)
	var st contract.SessionState
	for i := range maxRejected + 5 {
		h.signal(time.Duration(i+1)*time.Second, contract.SignalApproval, func() any {
			return json.RawMessage(`{"hold_id":"h` + string(rune('a'+i)) + `","decision":"approve","by":"` + string(bytes.Repeat([]byte("x"), 200)) + `"}`)
		})
	}
	h.query(time.Minute, contract.QueryState, &st)
	h.run(SessionConfig{})
	if len(st.Rejected) != maxRejected || st.Rejected[maxRejected-1].ID != "h"+string(rune('a'+maxRejected+4)) {
		t.Fatalf("rejected %+v", st.Rejected)
	}
	if len(st.Rejected[0].By) > 70 {
		t.Fatalf("by kept at %d bytes", len(st.Rejected[0].By))
	}
}

// A history with signed decisions replays whatever approvers the replaying
// worker has (none, or others): the list the run read is recorded.
func TestSignedHistoryReplaysUnderOtherApprovers(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(historiesDir, "*", "history-approval-signed.json"))
	if len(files) == 0 {
		t.Fatal("no recorded history of signed approvals")
	}
	otherPub, _ := approverKey(7)
	for _, f := range files {
		for _, approvers := range []contract.Approvers{nil, {{Name: "zed", PublicKey: otherPub}}} {
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(SessionWorkflow(approvers), workflow.RegisterOptions{Name: contract.WorkflowBrowserSession})
			raw, err := os.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			h, err := client.HistoryFromJSON(raw, client.HistoryJSONOptions{})
			raw.Close()
			if err != nil {
				t.Fatal(err)
			}
			id, err := os.ReadFile(strings.TrimSuffix(f, ".json") + ".id")
			if err != nil {
				t.Fatal(err)
			}
			opts := worker.ReplayWorkflowHistoryOptions{OriginalExecution: workflow.Execution{ID: strings.TrimSpace(string(id))}}
			if err := r.ReplayWorkflowHistoryWithOptions(nil, h, opts); err != nil {
				t.Errorf("%s under approvers %v: %v", f, approvers.Names(), err)
			}
		}
	}
}

// The worker's approvers win: a session's own list only narrows them (same
// name and key), never replaces or extends them.
func TestNarrow(t *testing.T) {
	evePub, _ := approverKey(9)
	bobPub, _ := approverKey(2)
	worker := contract.Approvers{{Name: "ana", PublicKey: anaPub}, {Name: "bob", PublicKey: bobPub}}
	for _, c := range []struct {
		name            string
		worker, session contract.Approvers
		want            []string
	}{
		{"no session list", worker, nil, []string{"ana", "bob"}},
		{"a subset", worker, contract.Approvers{{Name: "bob", PublicKey: bobPub}}, []string{"bob"}},
		{"a stranger", worker, contract.Approvers{{Name: "eve", PublicKey: evePub}}, []string{NobodyApproves.Name}},
		{"a known name with another key", worker, contract.Approvers{{Name: "ana", PublicKey: evePub}}, []string{NobodyApproves.Name}},
		{"extending", worker, contract.Approvers{{Name: "ana", PublicKey: anaPub}, {Name: "eve", PublicKey: evePub}}, []string{"ana"}},
		{"a worker without approvers", nil, contract.Approvers{{Name: "eve", PublicKey: evePub}}, []string{"eve"}},
	} {
		got := Narrow(c.worker, c.session).Names()
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// Whoever starts a session first cannot make themselves its approver: on a
// worker with approvers, a session started with a stranger's key keeps
// only the worker's (here none of them, so nobody), and the stranger's
// signed approval is rejected.
func TestSessionCannotReplaceWorkerApprovers(t *testing.T) {
	evePub, eveKey := approverKey(9)
	h := newSignedHarness(t, testApprovers)
	var held, after contract.SessionState
	var decision contract.HoldDecision
	h.call(time.Second, "c0", contract.ToolSnapshot, `{}`)
	h.signal(2*time.Second, contract.SignalHold, func() any {
		return contract.HoldSignal{HoldSubject: contract.HoldSubject{HoldID: "x1", Method: "POST", Origin: "https://shop.example", Path: "/order"}}
	})
	h.query(3*time.Second, contract.QueryState, &held)
	h.signal(4*time.Second, contract.SignalApproval, func() any {
		s := contract.ApprovalSignal{Decision: contract.DecisionApprove, By: "eve"}
		if err := s.Sign(eveKey, "sess-1", held.Holds[0], h.env.Now().Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		return s
	})
	h.query(5*time.Second, contract.QueryHold, &decision, "x1")
	h.query(5*time.Second, contract.QueryState, &after)
	h.run(SessionConfig{Approvers: contract.Approvers{{Name: "eve", PublicKey: evePub}}})
	if decision.Decision != "" {
		t.Fatalf("the session's starter approved a hold with their own key: %+v", decision)
	}
	if got := reasons(after); len(got) != 1 || got[0] != contract.RejectUnknownSigner {
		t.Fatalf("rejected %v", got)
	}
	if strings.Contains(strings.Join(after.Approvers, ","), "eve") {
		t.Fatalf("approvers %v", after.Approvers)
	}
}

// A call joining a running session refuses one started with other
// approvers or granted sites than the caller's; a call asking the same
// is served.
func TestJoinRefusesOtherApproversOrSites(t *testing.T) {
	evePub, _ := approverKey(9)
	sites := []contract.SiteGrant{{Site: "shop.example", Workflow: "ShopAgent"}}
	h := newSignedHarness(t, testApprovers)
	snap := func(j *contract.Joined) contract.ToolCall {
		return contract.ToolCall{Name: contract.ToolSnapshot, Args: json.RawMessage(`{}`), Join: j}
	}
	h.callWith(time.Second, "same", snap(&contract.Joined{Approvers: contract.Approvers{{Name: "eve", PublicKey: evePub}}, Sites: sites}))
	h.callWith(2*time.Second, "no-approvers", snap(&contract.Joined{Sites: sites}))
	h.callWith(3*time.Second, "no-sites", snap(&contract.Joined{Approvers: contract.Approvers{{Name: "eve", PublicKey: evePub}}}))
	h.callWith(4*time.Second, "other-key", snap(&contract.Joined{Approvers: contract.Approvers{{Name: "eve", PublicKey: anaPub}}, Sites: sites}))
	h.run(SessionConfig{Approvers: contract.Approvers{{Name: "eve", PublicKey: evePub}}, Sites: sites})
	if h.results["same"] == nil || h.rejected["same"] != nil {
		t.Fatalf("a join asking the same was refused: %v", h.rejected["same"])
	}
	for id, what := range map[string]string{"no-approvers": "approvers", "no-sites": "granted sites", "other-key": "approvers"} {
		err := h.rejected[id]
		if err == nil || !strings.Contains(err.Error(), what) {
			t.Errorf("%s: %v, want a refusal naming %s", id, err, what)
		}
	}
}
