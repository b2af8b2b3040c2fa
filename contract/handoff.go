package contract

import "time"

// NotifyRequest is handoff.notify's input: the workflow asks the worker that
// holds the session to tell a person (through its handoff port) what to do.
// The worker adds the way to reach the browser (live view, inspector
// address) itself, so that credential never enters history.
type NotifyRequest struct {
	Session SessionRef `json:"session"`
	// RequestID is deterministic per call: a rerun notifies about the same request.
	RequestID   string    `json:"request_id"`
	WorkflowID  string    `json:"workflow_id"`
	Instruction string    `json:"instruction"`
	Condition   Condition `json:"condition"`
	ExpiresAt   time.Time `json:"expires_at"`
}
