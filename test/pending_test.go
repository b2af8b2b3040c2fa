package test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	dbclient "github.com/durable-browser/durable-browser/client"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/test/harness"
	"github.com/durable-browser/durable-browser/workflows"
)

// After a run's click submits a form to a server that never answers, a
// snapshot answers on its own (the page's renderer is held by Chrome until
// the server answers): ok, or timeout naming the server. It used to hang
// for the read activity's whole bound, then again on retry.
func TestSnapshotWhileSubmitPending(t *testing.T) {
	env.StartWorker(t, harness.WorkerOptions{})
	s := newSession(t, workflows.SessionConfig{})
	s.must("run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/slow-form.html"}), nil)
	var snap contract.SnapshotResult
	s.must("snapshot", map[string]any{}, &snap)
	button := refFor(t, snap.Text, `button "Place order"`)
	before := slowSubmissions()
	s.call("run", actions(map[string]any{"op": "click", "id": button}))
	harness.Eventually(t, 30*time.Second, func() bool { return slowSubmissions() == before+1 }, "the order never arrived")

	// The bound detects a hang (the activity's own is 60 s); it times nothing.
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	out, err := dbclient.Call(ctx, env.Client, s.id, contract.ToolCall{Name: "snapshot", Args: json.RawMessage(`{}`)}, dbclient.CallOptions{Config: s.cfg})
	if err != nil {
		t.Fatalf("the snapshot did not answer while the submission was pending: %v", err)
	}
	var head struct {
		OK bool `json:"ok"`
	}
	if err := json.Unmarshal(out, &head); err != nil {
		t.Fatal(err)
	}
	if head.OK {
		t.Log("the snapshot answered with the page")
		return
	}
	var f contract.Failure
	if err := json.Unmarshal(out, &f); err != nil {
		t.Fatal(err)
	}
	if f.Code != contract.CodeTimeout || !strings.Contains(f.Message, "to answer a form submission (POST /slow-submit)") {
		t.Fatalf("want ok or timeout naming the pending submission, got %s", out)
	}
	t.Logf("the snapshot answered: %s", f.Message)
}
