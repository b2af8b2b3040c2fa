package workflows

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/contract"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

// Calls on the shared queue are bounded too: with no worker running they
// must give up instead of waiting forever.
func TestSharedQueueCallsHaveScheduleToStartBound(t *testing.T) {
	for _, class := range []contract.ReplayClass{contract.ClassCustody, contract.ClassRead} {
		o := ActivityOptions(class, contract.SharedQueue, false, Timeouts{})
		if o.ScheduleToStartTimeout != DefaultSharedScheduleToStart {
			t.Fatalf("%s on the shared queue: schedule-to-start %s, want %s", class, o.ScheduleToStartTimeout, DefaultSharedScheduleToStart)
		}
		o = ActivityOptions(class, "host-A", true, Timeouts{})
		if o.ScheduleToStartTimeout != DefaultScheduleToStart {
			t.Fatalf("%s on a host queue: schedule-to-start %s, want %s", class, o.ScheduleToStartTimeout, DefaultScheduleToStart)
		}
	}
	if o := ActivityOptions(contract.ClassCustody, contract.SharedQueue, false, Timeouts{SharedScheduleToStart: 5e9}); o.ScheduleToStartTimeout != 5e9 {
		t.Fatalf("configured bound ignored: %s", o.ScheduleToStartTimeout)
	}
}

func neverStarted(int, json.RawMessage) (any, error) {
	return nil, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil)
}

func wantNoWorker(t *testing.T, f *contract.Failure) {
	t.Helper()
	if f == nil || f.Code != contract.CodeBrowserUnavailable || !strings.Contains(f.Message, "start a durable-browser worker") {
		t.Fatalf("want browser_unavailable naming \"start a durable-browser worker\", got %+v", f)
	}
	if f.Effect != contract.EffectNone {
		t.Fatalf("nothing ran, so the effect is none: %+v", f)
	}
}

// openWorkflow opens a Browser and answers the failure Open returned, if any.
func openWorkflow(ctx workflow.Context) (*contract.Failure, error) {
	_, err := Open(ctx, Config{})
	var f *contract.Failure
	if errors.As(err, &f) {
		return f, nil
	}
	return nil, err
}

// Open with no worker running answers browser_unavailable telling the
// caller to start a worker.
func TestOpenWithNoWorkerIsBrowserUnavailable(t *testing.T) {
	f := newFakeWorker()
	f.behave[contract.ActivityCreate] = neverStarted
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	f.register(env)
	env.RegisterWorkflow(openWorkflow)
	env.SetStartWorkflowOptions(startOptions("conv-1"))
	env.ExecuteWorkflow(openWorkflow)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var got *contract.Failure
	if err := env.GetWorkflowResult(&got); err != nil {
		t.Fatal(err)
	}
	if f.calls(contract.ActivityCreate) != 1 {
		t.Fatalf("a never-started create is not retried: %d attempts", f.calls(contract.ActivityCreate))
	}
	wantNoWorker(t, got)
}

// A web_fetch no worker took says the same, and the session is untouched.
func TestWebFetchWithNoWorkerIsBrowserUnavailable(t *testing.T) {
	f := newFakeWorker()
	f.behave[contract.ActivityWebFetch] = neverStarted
	out := runScript(t, f, step{Tool: contract.ToolWebFetch, Args: json.RawMessage(`{"url":"https://example.com/"}`)})
	raw, _ := json.Marshal(out[0])
	var got contract.Failure
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	wantNoWorker(t, &got)
}
