package test

import (
	"context"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/sdk/converter"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/test/harness"
	"github.com/durable-browser/durable-browser/workflows"
)

// currentDetails reads what the Temporal UI shows as a workflow's current
// details: the metadata query, through a plain Temporal client.
func currentDetails(t *testing.T, id string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := env.Client.QueryWorkflow(ctx, id, "", "__temporal_workflow_metadata")
	if err != nil {
		t.Fatalf("metadata query of %s: %v", id, err)
	}
	var md sdkpb.WorkflowMetadata
	if err := v.Get(&md); err != nil {
		t.Fatal(err)
	}
	return md.GetCurrentDetails()
}

// An operator reads a session in the Temporal UI: every tool activity names
// what it did in one line with no typed value or query value, and the
// current details follow the session through a handoff.
func TestOperatorView(t *testing.T) {
	const typed = "typed-value-Qx7"
	s := newSession(t, workflows.SessionConfig{})
	s.must("run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/shop/?ref=query-value-Zk4"}), nil)
	var snap contract.SnapshotResult
	s.must("snapshot", map[string]any{"mode": "interactive"}, &snap)
	s.must("run", actions(map[string]any{"op": "fill", "id": refFor(t, snap.Text, `textbox "Email"`), "value": typed}), nil)

	d := currentDetails(t, s.id)
	if !strings.Contains(d, "**live**") || !strings.Contains(d, "page "+env.Demo.URL()+"/shop/") || strings.Contains(d, "query-value") {
		t.Fatalf("current details after the runs:\n%s", d)
	}

	call := s.callAsync("browser_request_handoff", map[string]any{
		"instruction": "Sign in with 2FA", "completion_condition": map[string]any{"text": "Sign in"}})
	p := pending(t, s.id)
	harness.Eventually(t, 30*time.Second, func() bool {
		d = currentDetails(t, s.id)
		return strings.Contains(d, "**waiting for a person**: Sign in with 2FA")
	}, "current details never named the pending handoff")
	if !strings.Contains(d, "**waiting_for_human**") || !strings.Contains(d, "handoff done "+s.id+" "+p.RequestID) {
		t.Fatalf("current details during the handoff:\n%s", d)
	}
	signal(t, s.id, contract.SignalHandoff, contract.HandoffSignal{RequestID: p.RequestID, Outcome: contract.OutcomeDone, By: "ann"})
	receive(t, call)
	if d = currentDetails(t, s.id); strings.Contains(d, "waiting for a person") || !strings.Contains(d, "**live**") {
		t.Fatalf("current details after the handoff:\n%s", d)
	}

	// Every activity in the history carries a summary.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dc := converter.GetDefaultDataConverter()
	var summaries []string
	it := env.Client.GetWorkflowHistory(ctx, s.id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.GetEventType() != enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED {
			continue
		}
		var sum string
		if p := ev.GetUserMetadata().GetSummary(); p != nil {
			if err := dc.FromPayload(p, &sum); err != nil {
				t.Fatal(err)
			}
		}
		name := ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName()
		if sum == "" {
			t.Errorf("activity %s (event %d) has no summary", name, ev.GetEventId())
		}
		if strings.Contains(sum, typed) || strings.Contains(sum, "query-value") {
			t.Errorf("activity %s summary %q holds a typed or query value", name, sum)
		}
		summaries = append(summaries, sum)
	}
	all := strings.Join(summaries, "\n")
	for _, want := range []string{"open browser", "goto " + strings.TrimPrefix(env.Demo.URL(), "http://") + "/shop/?…", "snapshot interactive", "fill [", "ask a person: \"Sign in with 2FA\""} {
		if !strings.Contains(all, want) {
			t.Errorf("no summary holds %q:\n%s", want, all)
		}
	}
}
