package workflows

import (
	"strings"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/activities"
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
		{"done, condition met", `{"text":"Pay now"}`, OutcomeDone, OutcomeDone, true, 10},
		{"cancelled", `{"text":"Pay now"}`, OutcomeCancelled, OutcomeCancelled, true, 10},
		{"expired", `{"url":"https://shop.example/*"}`, "", OutcomeExpired, true, 60},
		{"done, condition not met", `{"role":"button","name":"Thank you"}`, OutcomeDone, OutcomeDone, false, 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			var during, after SessionState
			h.call(time.Second, "h1", activities.ToolRequestHandoff,
				`{"instruction":"Solve the puzzle","completion_condition":`+tc.condition+`,"expires_in_s":60}`)
			h.query(2*time.Second, QueryState, &during)
			h.call(3*time.Second, "busy", activities.ToolSnapshot, `{}`)
			// A signal for an unknown request is ignored.
			h.signal(4*time.Second, SignalHandoff, func() any {
				return HandoffSignal{RequestID: "h-unknown", Outcome: OutcomeDone}
			})
			h.signal(5*time.Second, SignalHandoff, func() any { return "not an object" })
			if tc.answer != "" {
				h.signal(11*time.Second, SignalHandoff, func() any {
					return HandoffSignal{RequestID: during.PendingHandoff.RequestID, Outcome: tc.answer, By: "ana", Note: "ok"}
				})
			}
			h.query(2*time.Minute, QueryState, &after)
			h.run(SessionConfig{})

			if during.State != StateWaitingForHuman || during.PendingHandoff == nil || !strings.HasPrefix(during.PendingHandoff.RequestID, "h-") {
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
			var n activities.NotifyRequest
			h.f.input(t, activities.ActivityNotify, 0, &n)
			if n.RequestID != during.PendingHandoff.RequestID || n.Instruction != "Solve the puzzle" || n.WorkflowID != "sess-1" || n.Session.Tag != "sess-1-1" {
				t.Fatalf("notify %+v", n)
			}
			if after.State != StateLive || after.PendingHandoff != nil {
				t.Fatalf("state after: %+v", after)
			}
		})
	}
}

func TestHandoffRequestIDIsDeterministic(t *testing.T) {
	// Same update id, same request id; a different one differs.
	ids := map[string]bool{}
	for _, upd := range []string{"u1", "u1", "u2"} {
		h := newHarness(t)
		var st SessionState
		h.call(time.Second, upd, activities.ToolRequestHandoff, `{"instruction":"x","completion_condition":{"text":"y"},"expires_in_s":5}`)
		h.query(2*time.Second, QueryState, &st)
		h.run(SessionConfig{})
		ids[st.PendingHandoff.RequestID] = true
	}
	if len(ids) != 2 {
		t.Fatalf("request ids %v", ids)
	}
}

func TestApprovals(t *testing.T) {
	h := newHarness(t)
	var held, decided SessionState
	var pending, approved, unknown HoldDecision
	h.call(time.Second, "c0", activities.ToolSnapshot, `{}`)
	h.signal(2*time.Second, SignalHold, func() any {
		return HoldSignal{HoldID: "x1", Method: "POST", Origin: "https://shop.example", Path: "/order", ActivityID: "7"}
	})
	h.query(3*time.Second, QueryState, &held)
	h.query(3*time.Second, QueryHold, &pending, "x1")
	h.signal(4*time.Second, SignalApproval, func() any { return ApprovalSignal{HoldID: "zz", Decision: DecisionApprove} })
	h.signal(5*time.Second, SignalApproval, func() any { return ApprovalSignal{HoldID: "x1", Decision: "maybe"} })
	h.signal(6*time.Second, SignalApproval, func() any { return ApprovalSignal{HoldID: "x1", Decision: DecisionApprove, By: "ana"} })
	h.signal(7*time.Second, SignalApproval, func() any { return ApprovalSignal{HoldID: "x1", Decision: DecisionDeny, By: "bob"} })
	h.query(8*time.Second, QueryHold, &approved, "x1")
	h.query(8*time.Second, QueryHold, &unknown, "zz")
	h.query(8*time.Second, QueryState, &decided)
	h.run(SessionConfig{})
	if held.State != StateHeld || len(held.Holds) != 1 || held.Holds[0].Path != "/order" {
		t.Fatalf("held state %+v", held)
	}
	if pending.Decision != "" || unknown.Decision != "" {
		t.Fatalf("pending %+v unknown %+v", pending, unknown)
	}
	if approved.Decision != DecisionApprove || approved.By != "ana" {
		t.Fatalf("decision %+v (the later deny must be ignored)", approved)
	}
	if decided.State != StateLive {
		t.Fatalf("state after the decision %q", decided.State)
	}
}

func TestConditionMet(t *testing.T) {
	s := &activities.SnapshotResult{Page: activities.Page{URL: "https://shop.example/orders/42", Title: "Order"},
		Text: "[1] heading \"Order 42\" level=1\n  [2] button \"Pay now\"\n  link \"Help\" -> /help"}
	cases := []struct {
		c    activities.Condition
		want bool
	}{
		{activities.Condition{Text: "Order 42"}, true},
		{activities.Condition{Text: "Refund"}, false},
		{activities.Condition{URL: "/orders/"}, true},
		{activities.Condition{URL: "https://shop.example/orders/*"}, true},
		{activities.Condition{URL: "https://*.example/*/42"}, true},
		{activities.Condition{URL: "https://other.example/*"}, false},
		{activities.Condition{Role: "button", Name: "pay now"}, true},
		{activities.Condition{Role: "button", Name: "Pay"}, false},
		{activities.Condition{Role: "link", Name: "Help"}, true},
		{activities.Condition{Role: "heading"}, true},
		{activities.Condition{Role: "checkbox"}, false},
		{activities.Condition{}, false},
		{activities.Condition{Text: "Order", URL: "/nowhere"}, false},
	}
	for _, tc := range cases {
		if got := ConditionMet(tc.c, s); got != tc.want {
			t.Errorf("%+v: %v, want %v", tc.c, got, tc.want)
		}
	}
	if ConditionMet(activities.Condition{Text: "x"}, nil) {
		t.Error("a missing snapshot met a condition")
	}
}

func FuzzConditionMet(f *testing.F) {
	f.Add("https://a.example/*", "button", "Go", "[1] button \"Go\"", "https://a.example/x")
	f.Add("**", "", "", "", "")
	f.Add("*a*b*", "link", "\"", "link \"\\\"\"", "ab")
	f.Fuzz(func(t *testing.T, url, role, name, text, pageURL string) {
		s := &activities.SnapshotResult{Page: activities.Page{URL: pageURL}, Text: text}
		ConditionMet(activities.Condition{URL: url, Role: role, Name: name}, s)
		if strings.Contains(url, "*") && globMatch(url, pageURL) && !globMatch(strings.ReplaceAll(url, "*", "**"), pageURL) {
			t.Fatalf("doubling stars changed the match of %q on %q", url, pageURL)
		}
	})
}
