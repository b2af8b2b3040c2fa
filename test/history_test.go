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

// recordHistory writes a finished workflow's history for the replay test in
// package workflows when DURABLE_BROWSER_RECORD_HISTORIES names a release
// folder (say 03-my-change): workflows/testdata/histories/<folder>/. A
// recorded history is never overwritten; add its lines to MANIFEST there.
func recordHistory(t *testing.T, workflowID, name string) {
	t.Helper()
	release := os.Getenv("DURABLE_BROWSER_RECORD_HISTORIES")
	if release == "" {
		return
	}
	if unsafeName.MatchString(release) {
		t.Fatalf("DURABLE_BROWSER_RECORD_HISTORIES=%q: name a release folder with letters, digits, '.', '-' or '_'", release)
	}
	ctx := context.Background()
	_ = env.Client.GetWorkflow(ctx, workflowID, "").Get(ctx, nil)
	b, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(history(t, workflowID))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("..", "workflows", "testdata", "histories", release)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "history-"+unsafeName.ReplaceAllString(name, "-")+".json")
	// The workflow id goes beside the history: handoff request ids are
	// derived from it, so a replay must run under the same id.
	for p, data := range map[string][]byte{path: b, strings.TrimSuffix(path, ".json") + ".id": []byte(workflowID + "\n")} {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			t.Fatalf("recording %s: %v (recorded histories are never rewritten: use a new release folder)", p, err)
		}
		if _, err := f.Write(data); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("recorded %s", path)
}
