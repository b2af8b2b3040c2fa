package test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
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

// timelineSummaries reads the summaries the UI's timeline shows: each
// activity's and each timer's, from the history, through a plain client.
func timelineSummaries(t *testing.T, id string) (activities, timers []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dc := converter.GetDefaultDataConverter()
	it := env.Client.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		var sum string
		if p := ev.GetUserMetadata().GetSummary(); p != nil {
			if err := dc.FromPayload(p, &sum); err != nil {
				t.Fatal(err)
			}
		}
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			if sum == "" {
				t.Errorf("activity %s (event %d) has no summary", ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName(), ev.GetEventId())
			}
			activities = append(activities, sum)
		case enumspb.EVENT_TYPE_TIMER_STARTED:
			timers = append(timers, sum)
		}
	}
	return activities, timers
}

// An operator reads a session in the Temporal UI, through a plain Temporal
// client (not durable-browser's): the current details follow the session
// through a handoff and an approval hold, every tool activity names what it
// did in one line with no typed value or query value, and both waits are
// named in the timeline.
func TestOperatorView(t *testing.T) {
	env.StartWorker(t, harnessDefaults())
	typed := "typed-" + uuid.NewString()[:8] + "@example.com"
	s := newSession(t, workflows.SessionConfig{Session: contract.SessionOptions{ActionPolicy: contract.PolicyAsk}})
	s.must("run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/?ref=query-value-Zk4"}), nil)
	var snap contract.SnapshotResult
	s.must("snapshot", map[string]any{"mode": "interactive"}, &snap)

	d := currentDetails(t, s.id)
	if !strings.Contains(d, "**live**") || !strings.Contains(d, "page "+env.Demo.URL()+"/") || strings.Contains(d, "query-value") {
		t.Fatalf("current details after the first calls:\n%s", d)
	}

	call := s.callAsync("browser_request_handoff", map[string]any{
		"instruction": "Sign in with 2FA", "completion_condition": map[string]any{"text": "Create account"}})
	p := pending(t, s.id)
	harness.Eventually(t, 30*time.Second, func() bool {
		d = currentDetails(t, s.id)
		return strings.Contains(d, "**waiting for a person**: Sign in with 2FA")
	}, "current details never named the pending handoff")
	if !strings.Contains(d, "**waiting_for_human**") || !strings.Contains(d, "page "+env.Demo.URL()+"/") ||
		!strings.Contains(d, "handoff done "+s.id+" "+p.RequestID) {
		t.Fatalf("current details during the handoff:\n%s", d)
	}
	signal(t, s.id, contract.SignalHandoff, contract.HandoffSignal{RequestID: p.RequestID, Outcome: contract.OutcomeDone, By: "ann"})
	if a := receive(t, call); a.err != nil {
		t.Fatal(a.err)
	}
	if d = currentDetails(t, s.id); strings.Contains(d, "waiting for a person") || !strings.Contains(d, "**live**") {
		t.Fatalf("current details after the handoff:\n%s", d)
	}

	// A run sends the form: its POST is held until someone approves.
	run := s.callAsync("run", actions(
		map[string]any{"op": "fill", "id": refFor(t, snap.Text, `textbox "Email"`), "value": typed},
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
	harness.Eventually(t, 30*time.Second, func() bool {
		d = currentDetails(t, s.id)
		return strings.Contains(d, "**held for approval**: POST ")
	}, "current details never named the hold")
	if !strings.Contains(d, "**held**") || !strings.Contains(d, "approvals approve "+s.id+" "+hold.HoldID) || !strings.Contains(d, ", expires ") {
		t.Fatalf("current details during the hold:\n%s", d)
	}
	signal(t, s.id, contract.SignalApproval, contract.ApprovalSignal{HoldID: hold.HoldID, Decision: contract.DecisionApprove, By: "ann"})
	if a := receive(t, run); a.err != nil {
		t.Fatal(a.err)
	}
	if d = currentDetails(t, s.id); strings.Contains(d, "held for approval") || strings.Contains(d, typed) {
		t.Fatalf("current details after the approval:\n%s", d)
	}
	s.must("browser_release", map[string]any{}, nil)

	activities, timers := timelineSummaries(t, s.id)
	all := strings.Join(append(activities, timers...), "\n")
	if strings.Contains(all, typed) || strings.Contains(all, "query-value") {
		t.Errorf("a summary holds a typed or query value:\n%s", all)
	}
	host := strings.TrimPrefix(env.Demo.URL(), "http://")
	for _, want := range []string{"open browser", "goto " + host + "/?…", "snapshot interactive", "fill [", `ask a person: "Sign in with 2FA"`,
		`waiting for a person: "Sign in with 2FA" (expires `, "waiting for approval: POST " + env.Demo.URL() + "/submit (expires "} {
		if !strings.Contains(all, want) {
			t.Errorf("no summary holds %q:\n%s", want, all)
		}
	}
	recordHistory(t, s.id, "operator-view")
}
