package workflows

import (
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-browser/durable-browser/contract"
)

func TestHandoff(t *testing.T) {
	cases := []struct {
		name      string
		condition string
		answer    string // "" leaves it to expire
		outcome   string
		met       bool
		waited    float64
	}{
		{"done, condition met", `{"text":"Pay now"}`, contract.OutcomeDone, contract.OutcomeDone, true, 10},
		{"cancelled", `{"text":"Pay now"}`, contract.OutcomeCancelled, contract.OutcomeCancelled, true, 10},
		{"expired", `{"url":"https://shop.example/*"}`, "", contract.OutcomeExpired, true, 60},
		{"done, condition not met", `{"role":"button","name":"Thank you"}`, contract.OutcomeDone, contract.OutcomeDone, false, 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			var during, after contract.SessionState
			h.call(time.Second, "h1", contract.ToolRequestHandoff,
				`{"instruction":"Solve the puzzle","completion_condition":`+tc.condition+`,"expires_in_s":60}`)
			h.query(2*time.Second, contract.QueryState, &during)
			h.call(3*time.Second, "busy", contract.ToolSnapshot, `{}`)
			// A signal for an unknown request is ignored.
			h.signal(4*time.Second, contract.SignalHandoff, func() any {
				return contract.HandoffSignal{RequestID: "h-unknown", Outcome: contract.OutcomeDone}
			})
			h.signal(5*time.Second, contract.SignalHandoff, func() any { return "not an object" })
			if tc.answer != "" {
				h.signal(11*time.Second, contract.SignalHandoff, func() any {
					return contract.HandoffSignal{RequestID: during.PendingHandoff.RequestID, Outcome: tc.answer, By: "ana", Note: "ok"}
				})
			}
			h.query(2*time.Minute, contract.QueryState, &after)
			h.run(SessionConfig{})

			if during.State != contract.StateWaitingForHuman || during.PendingHandoff == nil || !strings.HasPrefix(during.PendingHandoff.RequestID, "h-") {
				t.Fatalf("state during the handoff: %+v", during)
			}
			if h.code("busy") != "waiting_for_human" || h.results["busy"]["retryable"] != true {
				t.Fatalf("concurrent call: %v", h.results["busy"])
			}
			r := h.results["h1"]
			if r["ok"] != true || r["outcome"] != tc.outcome || r["condition_met"] != tc.met || r["waited_s"] != tc.waited {
				t.Fatalf("handoff result %v", r)
			}
			if r["request_id"] != during.PendingHandoff.RequestID || r["snapshot"] == nil {
				t.Fatalf("handoff result %v", r)
			}
			if tc.answer != "" && r["by"] != "ana" {
				t.Fatalf("by = %v", r["by"])
			}
			var n contract.NotifyRequest
			h.f.input(t, contract.ActivityNotify, 0, &n)
			if n.RequestID != during.PendingHandoff.RequestID || n.Instruction != "Solve the puzzle" || n.WorkflowID != "sess-1" || n.Session.Tag != "sess-1-1" {
				t.Fatalf("notify %+v", n)
			}
			if after.State != contract.StateLive || after.PendingHandoff != nil {
				t.Fatalf("state after: %+v", after)
			}
		})
	}
}

func TestHandoffRequestIDIsPerSession(t *testing.T) {
	// Every session names its requests apart, even from the same update id
	// (a replay gives the same id: the session's nonce is recorded).
	ids := map[string]bool{}
	for _, upd := range []string{"u1", "u1", "u2"} {
		h := newHarness(t)
		var st contract.SessionState
		h.call(time.Second, upd, contract.ToolRequestHandoff, `{"instruction":"x","completion_condition":{"text":"y"},"expires_in_s":5}`)
		h.query(2*time.Second, contract.QueryState, &st)
		h.run(SessionConfig{})
		ids[st.PendingHandoff.RequestID] = true
	}
	if len(ids) != 3 {
		t.Fatalf("request ids %v", ids)
	}
}

func TestApprovals(t *testing.T) {
	h := newHarness(t)
	var held, decided contract.SessionState
	var pending, approved, unknown contract.HoldDecision
	h.call(time.Second, "c0", contract.ToolSnapshot, `{}`)
	h.signal(2*time.Second, contract.SignalHold, func() any {
		return contract.HoldSignal{HoldSubject: contract.HoldSubject{HoldID: "x1", Method: "POST", Origin: "https://shop.example", Path: "/order", ActivityID: "7"}}
	})
	h.query(3*time.Second, contract.QueryState, &held)
	h.query(3*time.Second, contract.QueryHold, &pending, "x1")
	h.signal(4*time.Second, contract.SignalApproval, func() any { return contract.ApprovalSignal{HoldID: "zz", Decision: contract.DecisionApprove} })
	h.signal(5*time.Second, contract.SignalApproval, func() any { return contract.ApprovalSignal{HoldID: "x1", Decision: "maybe"} })
	h.signal(6*time.Second, contract.SignalApproval, func() any {
		return contract.ApprovalSignal{HoldID: "x1", Decision: contract.DecisionApprove, By: "ana"}
	})
	h.signal(7*time.Second, contract.SignalApproval, func() any { return contract.ApprovalSignal{HoldID: "x1", Decision: contract.DecisionDeny, By: "bob"} })
	h.query(8*time.Second, contract.QueryHold, &approved, "x1")
	h.query(8*time.Second, contract.QueryHold, &unknown, "zz")
	h.query(8*time.Second, contract.QueryState, &decided)
	h.run(SessionConfig{})
	if held.State != contract.StateHeld || len(held.Holds) != 1 || held.Holds[0].Path != "/order" {
		t.Fatalf("held state %+v", held)
	}
	if pending.Decision != "" || unknown.Decision != "" {
		t.Fatalf("pending %+v unknown %+v", pending, unknown)
	}
	if approved.Decision != contract.DecisionApprove || approved.By != "ana" {
		t.Fatalf("decision %+v (the later deny must be ignored)", approved)
	}
	if decided.State != contract.StateLive {
		t.Fatalf("state after the decision %q", decided.State)
	}
}

// A decision may arrive by a raw Temporal signal, not only through the CLI
// that refuses such text: what the session keeps of who decided and their
// note, and repeats in its state, to the worker and in the model's answer,
// is bounded and holds no control or bidi/format character.
func TestDecisionTextIsBoundedAndClean(t *testing.T) {
	hugeBy := strings.Repeat("b", 120<<10)
	hostile := "ann\x1b[32m ok\x1b[1A\u202eevil\nrow\u0085"
	clean := func(what, s string, n int) {
		t.Helper()
		if len([]rune(s)) > n || strings.ContainsAny(s, "\x1b\u202e\n\u0085") {
			t.Errorf("%s kept as %d characters: %q", what, len([]rune(s)), s[:min(len(s), 200)])
		}
	}

	h := newHarness(t)
	var during, held, decided contract.SessionState
	var approved contract.HoldDecision
	h.call(time.Second, "h1", contract.ToolRequestHandoff, `{"instruction":"Solve the puzzle","completion_condition":{"text":"Pay now"},"expires_in_s":60}`)
	h.query(2*time.Second, contract.QueryState, &during)
	h.signal(3*time.Second, contract.SignalHandoff, func() any {
		return contract.HandoffSignal{RequestID: during.PendingHandoff.RequestID, Outcome: contract.OutcomeDone, By: hugeBy, Note: hostile + strings.Repeat("n", 4000)}
	})
	h.signal(20*time.Second, contract.SignalHold, func() any {
		return contract.HoldSignal{HoldSubject: contract.HoldSubject{HoldID: "x1", Method: "POST", Origin: "https://shop.example", Path: "/order"}}
	})
	h.query(21*time.Second, contract.QueryState, &held)
	h.signal(22*time.Second, contract.SignalApproval, func() any {
		return contract.ApprovalSignal{HoldID: "x1", Decision: contract.DecisionApprove, By: hostile, Note: hugeBy}
	})
	h.query(23*time.Second, contract.QueryHold, &approved, "x1")
	h.query(23*time.Second, contract.QueryState, &decided)
	h.run(SessionConfig{})

	r := h.results["h1"]
	if r["outcome"] != contract.OutcomeDone {
		t.Fatalf("handoff result %v", r)
	}
	by, _ := r["by"].(string)
	note, _ := r["note"].(string)
	clean("the answer's by", by, contract.MaxDecisionBy)
	clean("the answer's note", note, contract.MaxDecisionNote)
	if !strings.HasPrefix(note, "ann?[32m ok?[1A?evil row?") || !strings.HasPrefix(by, "bbb") {
		t.Errorf("the answer's by %q and note %q, want them cleaned, not dropped", by[:min(len(by), 20)], note[:min(len(note), 40)])
	}
	if len(decided.Holds) != 1 {
		t.Fatalf("holds %+v", decided.Holds)
	}
	clean("held[].by", decided.Holds[0].By, contract.MaxDecisionBy)
	clean("held[].note", decided.Holds[0].Note, contract.MaxDecisionNote)
	clean("the hold decision's by", approved.By, contract.MaxDecisionBy)
	if approved.Decision != contract.DecisionApprove || decided.Holds[0].Decision != contract.DecisionApprove {
		t.Fatalf("the approval did not take: %+v", approved)
	}
}

// A hold is named in the timeline by a timer that lasts until the worker
// gives up on it (or its default when the worker does not say), and is
// cancelled as soon as someone decides.
func TestHoldNamedInTimeline(t *testing.T) {
	h := newHarness(t)
	scheduled := map[string]time.Duration{}
	cancelled := map[string]time.Time{}
	h.env.SetOnTimerScheduledListener(func(id string, d time.Duration) { scheduled[id] = d })
	h.env.SetOnTimerCanceledListener(func(id string) { cancelled[id] = h.env.Now() })
	h.call(time.Second, "c0", contract.ToolSnapshot, `{}`)
	h.signal(2*time.Second, contract.SignalHold, func() any {
		return contract.HoldSignal{HoldSubject: contract.HoldSubject{HoldID: "x1", Method: "POST", Origin: "https://shop.example", Path: "/order"}, ExpiresAt: h.env.Now().Add(7 * time.Minute)}
	})
	h.signal(3*time.Second, contract.SignalHold, func() any {
		return contract.HoldSignal{HoldSubject: contract.HoldSubject{HoldID: "x2", Method: "POST", Origin: "https://shop.example", Path: "/pay"}}
	})
	var held contract.SessionState
	h.query(4*time.Second, contract.QueryState, &held)
	h.signal(6*time.Second, contract.SignalApproval, func() any {
		return contract.ApprovalSignal{HoldID: "x1", Decision: contract.DecisionApprove, By: "ana"}
	})
	h.run(SessionConfig{})

	var x1, x2 string
	for id, d := range scheduled {
		switch d {
		case 7 * time.Minute:
			x1 = id
		case defaultHoldWait:
			x2 = id
		}
	}
	if x1 == "" || x2 == "" {
		t.Fatalf("timers scheduled %v: want one of 7m for x1 and one of %v for x2", scheduled, defaultHoldWait)
	}
	// x1's wait ends with its approval; x2's only when the session ends.
	if c1, ok := cancelled[x1]; !ok || (!cancelled[x2].IsZero() && !c1.Before(cancelled[x2])) {
		t.Errorf("timers cancelled at %v: want x1's (%s) cancelled at its approval, before x2's (%s)", cancelled, x1, x2)
	}
	if len(held.Holds) != 2 || !held.Holds[0].ExpiresAt.Equal(held.Holds[0].HeldAt.Add(7*time.Minute)) || !held.Holds[1].ExpiresAt.IsZero() {
		t.Fatalf("holds in state: %+v", held.Holds)
	}
}

func TestHoldSummary(t *testing.T) {
	at := time.Date(2026, 12, 2, 14, 32, 0, 0, time.FixedZone("CET", 3600))
	got := holdSummary(contract.Hold{HoldSubject: contract.HoldSubject{Method: "POST", Origin: "https://shop.example", Path: "/checkout\nnext"}}, at)
	if want := "waiting for approval: POST https://shop.example/checkout next (expires 13:32 UTC)"; got != want {
		t.Fatalf("holdSummary = %q, want %q", got, want)
	}
}

func TestConditionMet(t *testing.T) {
	s := &contract.SnapshotResult{Page: contract.Page{URL: "https://shop.example/orders/42", Title: "Order"},
		Observation: contract.Observation{Text: "[1] heading \"Order 42\" level=1\n  [2] button \"Pay now\"\n  link \"Help\" -> /help"}}
	cases := []struct {
		c    contract.Condition
		want bool
	}{
		{contract.Condition{Text: "Order 42"}, true},
		{contract.Condition{Text: "Refund"}, false},
		{contract.Condition{URL: "/orders/"}, true},
		{contract.Condition{URL: "https://shop.example/orders/*"}, true},
		{contract.Condition{URL: "https://*.example/*/42"}, true},
		{contract.Condition{URL: "https://other.example/*"}, false},
		{contract.Condition{Role: "button", Name: "pay now"}, true},
		{contract.Condition{Role: "button", Name: "Pay"}, false},
		{contract.Condition{Role: "link", Name: "Help"}, true},
		{contract.Condition{Role: "heading"}, true},
		{contract.Condition{Role: "checkbox"}, false},
		{contract.Condition{}, false},
		{contract.Condition{Text: "Order", URL: "/nowhere"}, false},
	}
	for _, tc := range cases {
		if got := ConditionMet(tc.c, s); got != tc.want {
			t.Errorf("%+v: %v, want %v", tc.c, got, tc.want)
		}
	}
	if ConditionMet(contract.Condition{Text: "x"}, nil) {
		t.Error("a missing snapshot met a condition")
	}
}

func FuzzConditionMet(f *testing.F) {
	f.Add("https://a.example/*", "button", "Go", "[1] button \"Go\"", "https://a.example/x")
	f.Add("**", "", "", "", "")
	f.Add("*a*b*", "link", "\"", "link \"\\\"\"", "ab")
	f.Fuzz(func(t *testing.T, url, role, name, text, pageURL string) {
		s := &contract.SnapshotResult{Page: contract.Page{URL: pageURL}, Observation: contract.Observation{Text: text}}
		ConditionMet(contract.Condition{URL: url, Role: role, Name: name}, s)
		if strings.Contains(url, "*") && globMatch(url, pageURL) && !globMatch(strings.ReplaceAll(url, "*", "**"), pageURL) {
			t.Fatalf("doubling stars changed the match of %q on %q", url, pageURL)
		}
	})
}

// inlineHolder opens a browser inline and waits, as an orchestrator's
// workflow does while its model thinks.
func inlineHolder(ctx workflow.Context) error {
	b, err := Open(ctx, Config{})
	if err != nil {
		return err
	}
	if err := workflow.Sleep(ctx, 10*time.Second); err != nil {
		return err
	}
	return b.Close(ctx)
}

// A browser opened inline answers browser_state, so people can list its
// holds and handoff and sign a decision for it as for a BrowserSession;
// it registers no "state" query that could take an orchestrator's place.
func TestInlineBrowserAnswersBrowserState(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	f := newFakeWorker()
	f.register(env)
	env.RegisterWorkflow(inlineHolder)
	env.SetStartWorkflowOptions(startOptions("orchestrator-1"))
	var held contract.SessionState
	var stateErr error
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(contract.SignalHold, contract.HoldSignal{HoldSubject: contract.HoldSubject{HoldID: "x1", Method: "POST", Origin: "https://shop.example", Path: "/order", ActivityID: "7"}})
	}, 2*time.Second)
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(contract.QueryBrowserState)
		if err != nil {
			t.Errorf("query %s: %v", contract.QueryBrowserState, err)
			return
		}
		if err := v.Get(&held); err != nil {
			t.Error(err)
		}
		_, stateErr = env.QueryWorkflow(contract.QueryState)
	}, 3*time.Second)
	env.ExecuteWorkflow(inlineHolder)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if held.WorkflowID != "orchestrator-1" || held.Tag == "" || held.State != contract.StateHeld || len(held.Holds) != 1 || held.Holds[0].HoldID != "x1" || held.Holds[0].Path != "/order" {
		t.Fatalf("browser_state %+v", held)
	}
	if stateErr == nil {
		t.Fatal("an inline browser answered the \"state\" query, which is the orchestrator's to define")
	}
}
