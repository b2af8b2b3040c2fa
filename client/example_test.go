package client_test

import (
	"context"
	"encoding/json"

	tclient "go.temporal.io/sdk/client"

	dbclient "github.com/durable-browser/durable-browser/client"
	"github.com/durable-browser/durable-browser/contract"
)

// ExampleCall sends one tool call to the session "conversation-42" from code
// outside a workflow, starting the session when none runs, and reads its
// state. It needs a Temporal server and a durable-browser worker, so the
// example compiles only.
func ExampleCall() {
	_ = func(ctx context.Context, temporalClient tclient.Client) error {
		out, err := dbclient.Call(ctx, temporalClient, "conversation-42",
			contract.ToolCall{Name: "snapshot", Args: json.RawMessage(`{"mode":"interactive"}`)},
			dbclient.CallOptions{
				Config:   contract.SessionConfig{Session: contract.SessionOptions{Provider: "local"}},
				UpdateID: "conversation-42/turn-7/call-1", // a resend with this id returns the first answer
			})
		if err != nil {
			return err
		}
		_ = contract.ForModel(contract.ToolCall{Name: "snapshot"}, out) // what to hand the model
		_, err = dbclient.State(ctx, temporalClient, "conversation-42")
		return err
	}
}
