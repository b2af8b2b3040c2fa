package worker

import (
	"encoding/json"
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/workflows"
)

// SmokeWorkflow is the name of the workflow `make run` starts.
const SmokeWorkflow = "Smoke"

// SmokeResult is what the smoke workflow saw.
type SmokeResult struct {
	Title    string `json:"title"`
	URL      string `json:"url"`
	Snapshot string `json:"snapshot"`
}

// Smoke opens a browser, goes to url, snapshots it and releases the browser:
// the shortest real trip through every layer.
func Smoke(ctx workflow.Context, url string) (*SmokeResult, error) {
	b, err := workflows.Open(ctx, workflows.Config{})
	if err != nil {
		return nil, err
	}
	defer func() { _ = b.Close(ctx) }()
	actions, _ := json.Marshal([]map[string]string{{"op": "goto", "url": url}})
	if _, err := b.Run(ctx, contract.RunArgs{Actions: actions}); err != nil {
		return nil, fmt.Errorf("opening %s: %w", url, err)
	}
	snap, err := b.Snapshot(ctx, contract.SnapshotArgs{})
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	return &SmokeResult{Title: snap.Title, URL: snap.URL, Snapshot: snap.Text}, nil
}
