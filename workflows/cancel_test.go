package workflows

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

// A cancelled BrowserSession still lets go of its browser: the release runs
// in a disconnected context before the workflow ends as cancelled.
func TestCancelledSessionReleases(t *testing.T) {
	h := newHarness(t)
	h.call(time.Second, "u1", contract.ToolSnapshot, `{}`)
	h.env.RegisterDelayedCallback(h.env.CancelWorkflow, 10*time.Second)
	h.env.ExecuteWorkflow(contract.WorkflowBrowserSession, SessionConfig{})
	if err := h.env.GetWorkflowError(); !temporal.IsCanceledError(err) {
		t.Fatalf("the session should end cancelled, got %v", err)
	}
	if h.code("u1") != "ok" {
		t.Fatalf("u1: %s", h.code("u1"))
	}
	if n := h.f.calls(contract.ActivityRelease); n != 1 {
		t.Fatalf("browser.release scheduled %d times after the cancel, want 1", n)
	}
	var req contract.ReleaseRequest
	h.f.input(t, contract.ActivityRelease, 0, &req)
	if req.Session.Tag != "sess-1-1" {
		t.Fatalf("released %+v", req.Session)
	}
}

// A session cancelled while a call is in flight releases once the call has
// given up.
func TestCancelledSessionMidCallReleases(t *testing.T) {
	h := newHarness(t)
	ok, _ := json.Marshal(contract.RunResult{OK: true, Completed: 1, Total: 1})
	h.env.OnActivity(contract.ActivityRun, mock.Anything, mock.Anything).After(time.Minute).Return(json.RawMessage(ok), nil)
	var callErr error
	h.env.RegisterDelayedCallback(func() {
		h.env.UpdateWorkflow(contract.UpdateTool, "long", &testsuite.TestUpdateCallback{
			OnAccept: func() {}, OnReject: func(err error) { callErr = err },
			OnComplete: func(_ any, err error) { callErr = err },
		}, contract.ToolCall{Name: contract.ToolRun, Args: json.RawMessage(`{"actions":[{"op":"wait","ms":10}]}`)})
	}, time.Second)
	h.env.RegisterDelayedCallback(h.env.CancelWorkflow, 10*time.Second)
	h.env.ExecuteWorkflow(contract.WorkflowBrowserSession, SessionConfig{Timeouts: Timeouts{Heartbeat: time.Hour}})
	if err := h.env.GetWorkflowError(); !temporal.IsCanceledError(err) {
		t.Fatalf("the session should end cancelled, got %v", err)
	}
	if !temporal.IsCanceledError(callErr) {
		t.Fatalf("the call in flight should end cancelled, got %v", callErr)
	}
	if n := h.f.calls(contract.ActivityRelease); n != 1 {
		t.Fatalf("browser.release scheduled %d times after the cancel, want 1", n)
	}
}

// closingWorkflow is an orchestrator that opens a browser, defers Close and
// waits until it is cancelled.
func closingWorkflow(ctx workflow.Context) error {
	b, err := Open(ctx, Config{})
	if err != nil {
		return err
	}
	defer func() { _ = b.Close(ctx) }()
	return workflow.Await(ctx, func() bool { return false })
}

// `defer b.Close(ctx)` runs with a cancelled ctx when the orchestrator is
// cancelled; Close still releases the browser.
func TestCloseWithCancelledContextReleases(t *testing.T) {
	f := newFakeWorker()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	f.register(env)
	env.RegisterWorkflow(closingWorkflow)
	env.SetStartWorkflowOptions(startOptions("conv-1"))
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Minute)
	env.ExecuteWorkflow(closingWorkflow)
	if err := env.GetWorkflowError(); !temporal.IsCanceledError(err) {
		t.Fatalf("the workflow should end cancelled, got %v", err)
	}
	if n := f.calls(contract.ActivityRelease); n != 1 {
		t.Fatalf("browser.release scheduled %d times by Close on a cancelled context, want 1", n)
	}
}
