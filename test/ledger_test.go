package test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	dbclient "github.com/durable-browser/durable-browser/client"
	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/workflows"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/converter"
)

// callWithID sends a call with an update id, as a caller retrying after a
// lost answer does (docs/go-api.md recommends it inside an activity).
func (s *session) callWithID(updateID, tool string, args any) json.RawMessage {
	s.t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		s.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := dbclient.Call(ctx, env.Client, s.id, contract.ToolCall{Name: tool, Args: raw}, dbclient.CallOptions{Config: s.cfg, UpdateID: updateID})
	if err != nil {
		s.t.Fatalf("%s: %v", tool, err)
	}
	return out
}

// An update id is answered once, whatever happens to the run that answered
// it: a resend after a continue-as-new, or after the session ended, returns
// the first answer and posts nothing more.
func TestUpdateIDSurvivesContinueAsNewAndEnd(t *testing.T) {
	env.StartWorker(t, harnessDefaults())
	s := newSession(t, workflows.SessionConfig{ContinueAsNewAfter: 1})
	before := len(env.Demo.Submissions())

	s.callWithID("goto-1", "run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/"}))
	var snap contract.SnapshotResult
	s.must("snapshot", map[string]any{"mode": "interactive"}, &snap)
	email := refFor(t, snap.Text, `textbox "Email"`)
	submit := refFor(t, snap.Text, `button "Create account"`)
	submitCall := actions(
		map[string]any{"op": "fill", "id": email, "value": "ledger@example.com"},
		map[string]any{"op": "click", "id": submit},
		map[string]any{"op": "wait", "text": "Thanks"},
	)
	first := s.callWithID("submit-1", "run", submitCall)
	var run contract.RunResult
	if err := json.Unmarshal(first, &run); err != nil || !run.OK {
		t.Fatalf("submit: %s", first)
	}

	// Each call ends a run (ContinueAsNewAfter: 1); wait until the run that
	// answered the submit has handed over, then resend.
	waitForCarried(t, s.id, "submit-1")
	again := s.callWithID("submit-1", "run", submitCall)
	if string(again) != string(first) {
		t.Fatalf("resend after continue-as-new answered\n%s\nwant the first answer\n%s", again, first)
	}
	if n := len(env.Demo.Submissions()) - before; n != 1 {
		t.Fatalf("the site received %d submissions, want exactly 1", n)
	}
	// A second effect call ends its run too; then the session is closed.
	// The last run never saw this id, so Temporal cannot answer a resend:
	// the answer must come from the ended session's record, and no new
	// session may start under the id.
	navCall := actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/about.html"})
	nav := s.callWithID("nav-2", "run", navCall)
	waitForCarried(t, s.id, "nav-2")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := env.Client.SignalWorkflow(ctx, s.id, "", contract.SignalClose, nil); err != nil {
		t.Fatal(err)
	}
	var res contract.SessionResult
	if err := env.Client.GetWorkflow(ctx, s.id, "").Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	ended, err := env.Client.DescribeWorkflowExecution(ctx, s.id, "")
	if err != nil {
		t.Fatal(err)
	}
	afterEnd := s.callWithID("nav-2", "run", navCall)
	if string(afterEnd) != string(nav) {
		t.Fatalf("resend after the session ended answered\n%s\nwant the first answer\n%s", afterEnd, nav)
	}
	if n := len(env.Demo.Submissions()) - before; n != 1 {
		t.Fatalf("after the session ended the site received %d submissions, want exactly 1", n)
	}
	// The same id with other arguments is a conflict, not the first answer.
	// (Within one run Temporal itself answers a known id with its first
	// answer, whatever the arguments.)
	var f contract.Failure
	if err := json.Unmarshal(s.callWithID("nav-2", "run", submitCall), &f); err != nil || f.Code != contract.CodeRefused {
		t.Fatalf("reused id with other arguments: %+v", f)
	}

	now, err := env.Client.DescribeWorkflowExecution(ctx, s.id, "")
	if err != nil {
		t.Fatal(err)
	}
	if now.GetWorkflowExecutionInfo().GetExecution().GetRunId() != ended.GetWorkflowExecutionInfo().GetExecution().GetRunId() ||
		now.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		t.Fatalf("a resend of an answered id started a new session")
	}
	recordHistory(t, s.id, "ledger-last-run")
}

// waitForCarried waits until the session's current run was started by a
// continue-as-new that carried updateID in its ledger: the run that answered
// the call has handed over.
func waitForCarried(t *testing.T, id, updateID string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		it := env.Client.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		if it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			var cfg workflows.SessionConfig
			if in := ev.GetWorkflowExecutionStartedEventAttributes().GetInput(); in != nil {
				if err := converter.GetDefaultDataConverter().FromPayloads(in, &cfg); err != nil {
					t.Fatal(err)
				}
			}
			carried, err := workflows.CarriedOf(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if carried != nil {
				for _, a := range carried.Answered {
					if a.UpdateID == updateID {
						return
					}
				}
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the session never continued as new carrying %s", updateID)
		case <-tick.C:
		}
	}
}
