package harness

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

// RecordEnv names the release folder recorded histories go to.
const RecordEnv = "DURABLE_BROWSER_RECORD_HISTORIES"

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// History fetches a workflow's whole history.
func (e *Env) History(t testing.TB, workflowID string) *historypb.History {
	t.Helper()
	it := e.Client.GetWorkflowHistory(context.Background(), workflowID, "", false, 0)
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

// RecordHistory writes a finished workflow's history for the replay test in
// package workflows when DURABLE_BROWSER_RECORD_HISTORIES names a release
// folder (say 03-my-change): workflows/testdata/histories/<folder>/ of the
// module the test runs in. A recorded history is never overwritten; add its
// lines to MANIFEST there.
func (e *Env) RecordHistory(t testing.TB, workflowID, name string) {
	t.Helper()
	release := os.Getenv(RecordEnv)
	if release == "" {
		return
	}
	if unsafeName.MatchString(release) {
		t.Fatalf("%s=%q: name a release folder with letters, digits, '.', '-' or '_'", RecordEnv, release)
	}
	ctx := context.Background()
	_ = e.Client.GetWorkflow(ctx, workflowID, "").Get(ctx, nil)
	b, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(e.History(t, workflowID))
	if err != nil {
		t.Fatal(err)
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "workflows", "testdata", "histories", release)
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

// moduleRoot is the nearest folder above the working directory (a test's
// package folder) that holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", os.ErrNotExist
		}
		dir = up
	}
}
