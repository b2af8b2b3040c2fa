package workflows

import (
	"strings"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/contract"
	sdkpb "go.temporal.io/api/sdk/v1"
)

func TestDetails(t *testing.T) {
	now := time.Date(2026, 12, 2, 14, 0, 0, 0, time.UTC)
	st := contract.SessionState{
		WorkflowID: "conv-42", Tag: "conv-42-1", Provider: "local", HostQueue: "durable-browser@h-1",
		URL: "https://shop.example/cart?session=[redacted]#top", Title: "Cart\nline two", State: contract.StateWaitingForHuman, Calls: 7,
		PendingHandoff: &contract.PendingHandoff{RequestID: "h-1", Instruction: "Sign in with 2FA", ExpiresAt: now.Add(32 * time.Minute)},
		Holds: []contract.Hold{
			{HoldSubject: contract.HoldSubject{HoldID: "x-1", Method: "POST", Origin: "https://shop.example", Path: "/checkout"}, HeldAt: now.Add(-12 * time.Second)},
			{HoldSubject: contract.HoldSubject{HoldID: "x-2", Method: "PUT", Origin: "https://shop.example", Path: "/address"}, HeldAt: now, ExpiresAt: now.Add(5 * time.Minute)},
			{HoldSubject: contract.HoldSubject{HoldID: "x-0", Method: "POST", Origin: "https://shop.example", Path: "/old"}, Decision: "approve"},
		},
	}
	d := Details(st, LastCall{Summary: "click [4]", Code: "effect_unknown", Failures: 2, Evidence: "evidence/conv-42-1/read-1.md"}, now)
	for _, want := range []string{
		"**waiting_for_human**", "host `durable-browser@h-1`", "page https://shop.example/cart — Cart line two",
		"calls 7 (2 failed)", "last: click [4] → effect_unknown", "`evidence/conv-42-1/read-1.md`",
		"**waiting for a person**: Sign in with 2FA (expires 14:32 UTC)", "`durable-browser handoff done conv-42 h-1`",
		"**held for approval**: POST https://shop.example/checkout (held 12s)", "`durable-browser approvals approve conv-42 x-1`",
		"**held for approval**: PUT https://shop.example/address (held 0s, expires 14:05 UTC)",
	} {
		if !strings.Contains(d, want) {
			t.Errorf("details lack %q:\n%s", want, d)
		}
	}
	for _, never := range []string{"session=", "#top", "/old"} {
		if strings.Contains(d, never) {
			t.Errorf("details hold %q:\n%s", never, d)
		}
	}
}

// The session's current details (what the UI shows, read through the
// metadata query as the UI reads it) follow a handoff, and every tool
// activity carries its summary.
func TestSessionCurrentDetails(t *testing.T) {
	h := newHarness(t)
	var during, after contract.SessionState
	metadata := func(at time.Duration, out *string) {
		h.env.RegisterDelayedCallback(func() {
			v, err := h.env.QueryWorkflow("__temporal_workflow_metadata")
			if err != nil {
				t.Errorf("metadata query: %v", err)
				return
			}
			var md sdkpb.WorkflowMetadata
			if err := v.Get(&md); err != nil {
				t.Errorf("metadata: %v", err)
				return
			}
			*out = md.GetCurrentDetails()
		}, at)
	}
	var dBefore, dDuring, dAfter string
	h.call(time.Second, "r1", contract.ToolRun, `{"actions":[{"op":"goto","url":"https://shop.example/login?next=%2Fpay"},{"op":"fill","id":"3","value":"ann@example.com"}]}`)
	var st1 contract.SessionState
	h.query(2*time.Second, contract.QueryState, &st1)
	metadata(2*time.Second, &dBefore)
	h.call(3*time.Second, "h1", contract.ToolRequestHandoff, `{"instruction":"Sign in with 2FA","completion_condition":{"text":"Pay now"},"expires_in_s":600}`)
	h.query(4*time.Second, contract.QueryState, &during)
	metadata(4*time.Second, &dDuring)
	h.signal(10*time.Second, contract.SignalHandoff, func() any {
		return contract.HandoffSignal{RequestID: during.PendingHandoff.RequestID, Outcome: contract.OutcomeDone, By: "ana"}
	})
	h.query(20*time.Second, contract.QueryState, &after)
	metadata(20*time.Second, &dAfter)
	h.run(SessionConfig{})

	if !strings.Contains(dBefore, "**live**") || !strings.Contains(dBefore, "page "+testURL) || !strings.Contains(dBefore, "last: goto shop.example/login?… · fill [3]") {
		t.Fatalf("details after a run (state %+v):\n%s", st1, dBefore)
	}
	if strings.Contains(dBefore, "ann@example.com") || strings.Contains(dBefore, "next=") {
		t.Fatalf("details hold a typed value or a query:\n%s", dBefore)
	}
	if !strings.Contains(dDuring, "**waiting_for_human**") || !strings.Contains(dDuring, "**waiting for a person**: Sign in with 2FA") ||
		!strings.Contains(dDuring, "handoff done sess-1 "+during.PendingHandoff.RequestID) {
		t.Fatalf("details during the handoff:\n%s", dDuring)
	}
	if strings.Contains(dAfter, "waiting for a person") || !strings.Contains(dAfter, "**live**") {
		t.Fatalf("details after the handoff was answered:\n%s", dAfter)
	}
}
