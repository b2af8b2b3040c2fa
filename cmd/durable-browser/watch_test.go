package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/contract"
)

// The table an operator watches: state, URL, what waits for a person, and
// the last call with its age.
func TestPrintSessions(t *testing.T) {
	now := time.Date(2026, 12, 2, 14, 0, 0, 0, time.UTC)
	rows := []sessionRow{
		{WorkflowID: "conv-1", Status: "running", Tag: "conv-1-1", Provider: "local", State: contract.StateWaitingForHuman,
			SessionState: &contract.SessionState{URL: "https://shop.example/",
				PendingHandoff: &contract.PendingHandoff{RequestID: "h-1"},
				Holds:          []contract.Hold{{HoldSubject: contract.HoldSubject{HoldID: "a"}}, {HoldSubject: contract.HoldSubject{HoldID: "b"}, Decision: "approve"}},
				LastCall:       "click [4]", LastActive: now.Add(-90 * time.Second)}},
		{WorkflowID: "conv-2", Status: "completed", Ended: "idle"},
	}
	var out bytes.Buffer
	if err := printSessions(&cliEnv{Stdout: &out}, rows, now); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "HUMAN") || !strings.Contains(lines[0], "LAST CALL") {
		t.Fatalf("table:\n%s", out.String())
	}
	for _, want := range []string{"waiting_for_human", "https://shop.example/", "handoff h-1, 1 held", "click [4] (1m30s ago)"} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("row lacks %q: %s", want, lines[1])
		}
	}
	if !strings.Contains(lines[2], "completed (idle)") {
		t.Errorf("ended row: %s", lines[2])
	}
}
