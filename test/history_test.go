package test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/worker"
	"github.com/durable-browser/durable-browser/workflows"
)

// history fetches a workflow's whole history.
func history(t *testing.T, workflowID string) *historypb.History {
	t.Helper()
	it := env.Client.GetWorkflowHistory(context.Background(), workflowID, "", false, 0)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		h.Events = append(h.Events, ev)
	}
	return h
}

// historyJSON is a workflow's history as JSON, for leak checks.
func historyJSON(t *testing.T, workflowID string) string {
	t.Helper()
	b, err := temporalproto.CustomJSONMarshalOptions{}.Marshal(history(t, workflowID))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// recordHistory writes a finished workflow's history to testdata when
// DURABLE_BROWSER_RECORD_HISTORIES is set, for the replay test.
func recordHistory(t *testing.T, workflowID, name string) {
	t.Helper()
	if os.Getenv("DURABLE_BROWSER_RECORD_HISTORIES") == "" {
		return
	}
	ctx := context.Background()
	_ = env.Client.GetWorkflow(ctx, workflowID, "").Get(ctx, nil)
	b, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(history(t, workflowID))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "history-"+unsafeName.ReplaceAllString(name, "-")+".json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// The workflow id goes beside the history: handoff request ids are
	// derived from it, so a replay must run under the same id.
	if err := os.WriteFile(strings.TrimSuffix(path, ".json")+".id", []byte(workflowID+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %s", path)
}

// Every history recorded from real runs replays against today's workflow
// code: a change that breaks determinism fails here.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "history-*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no recorded histories in testdata; record them with DURABLE_BROWSER_RECORD_HISTORIES=1 go test ./test/")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			r := sdkworker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(workflows.BrowserSession, workflow.RegisterOptions{Name: contract.WorkflowBrowserSession})
			r.RegisterWorkflowWithOptions(worker.Smoke, workflow.RegisterOptions{Name: worker.SmokeWorkflow})
			raw, err := os.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			h, err := client.HistoryFromJSON(raw, client.HistoryJSONOptions{})
			if err != nil {
				t.Fatalf("reading %s: %v", f, err)
			}
			id, err := os.ReadFile(strings.TrimSuffix(f, ".json") + ".id")
			if err != nil {
				t.Fatalf("%s has no workflow id file beside it: %v", f, err)
			}
			opts := sdkworker.ReplayWorkflowHistoryOptions{OriginalExecution: workflow.Execution{ID: strings.TrimSpace(string(id))}}
			if err := r.ReplayWorkflowHistoryWithOptions(nil, h, opts); err != nil {
				t.Fatalf("replaying %s: %v", f, err)
			}
		})
	}
}
