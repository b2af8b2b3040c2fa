package test

import (
	"testing"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
)

// history fetches a workflow's whole history.
func history(t *testing.T, workflowID string) *historypb.History {
	t.Helper()
	return env.History(t, workflowID)
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

// recordHistory records a finished workflow's history when
// DURABLE_BROWSER_RECORD_HISTORIES names a release folder (see
// harness.Env.RecordHistory).
func recordHistory(t *testing.T, workflowID, name string) {
	t.Helper()
	env.RecordHistory(t, workflowID, name)
}
