package workflows_test

import (
	"encoding/json"
	"errors"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/workflows"
)

// ModelTurn is what the example's model activity answers: text, or tool calls.
type ModelTurn struct {
	Text  string
	Calls []ModelCall
}

// ModelCall is one tool call the model made.
type ModelCall struct {
	ID   string
	Name string
	Args json.RawMessage
}

// AskModelInput is the example's model activity's input.
type AskModelInput struct {
	System  string
	Task    string
	Tools   json.RawMessage
	History []any
}

// ToolAnswer is a tool's answer as the model reads it (its JSON, then any page text).
type ToolAnswer struct {
	ID     string
	Output string
}

// AskModel is the activity that calls the model API: the only part an
// orchestrator writes (registered on its own worker; a stand-in here).
func AskModel(AskModelInput) (ModelTurn, error) { return ModelTurn{}, nil }

// Agent is an orchestrator's workflow: an agent loop that gives its model a
// browser with Open, serves each tool call with CallTool and closes the
// browser when the conversation ends (docs/go-api.md). It needs a worker and a
// durable-browser worker to run, so the example compiles only.
func Agent(ctx workflow.Context, task string) (string, error) {
	b, err := workflows.Open(ctx, workflows.Config{
		Session: contract.SessionOptions{Provider: "local", ActionPolicy: contract.PolicyAllow},
	})
	if err != nil {
		return "", err // *contract.Failure: no browser could be opened
	}
	defer func() { _ = b.Close(ctx) }()

	tools := contract.AnthropicTools(b.Tools()) // or OpenAITools
	mctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 2 * time.Minute})
	var history []any
	for turn := 0; turn < 50; turn++ {
		var reply ModelTurn
		err := workflow.ExecuteActivity(mctx, AskModel, AskModelInput{System: contract.Prompt(), Task: task, Tools: tools, History: history}).Get(ctx, &reply)
		if err != nil {
			return "", err
		}
		history = append(history, reply)
		if len(reply.Calls) == 0 {
			return reply.Text, nil
		}
		for _, c := range reply.Calls {
			out, err := b.CallTool(ctx, c.Name, c.Args) // result JSON, or {"ok":false,"code":...}
			if err != nil {
				return "", err // the workflow was cancelled: not the model's to handle
			}
			// What the model reads: the answer less what tells it nothing new.
			history = append(history, ToolAnswer{ID: c.ID, Output: contract.ForModel(contract.ToolCall{Name: c.Name, Args: c.Args}, out)})
		}
	}
	return "", errors.New("too many turns")
}

// Example_inline registers the Agent workflow above, which drives a browser
// inline with workflows.Open and Browser.CallTool.
func Example_inline() {
	// On your own worker: w.RegisterWorkflow(Agent); w.RegisterActivity(AskModel).
	_, _ = Agent, AskModel
}

// ExampleBrowser_Snapshot calls a tool by its typed method; a tool failure
// is a *contract.Failure error.
func ExampleBrowser_Snapshot() {
	_ = func(ctx workflow.Context, b *workflows.Browser) error {
		snap, err := b.Snapshot(ctx, contract.SnapshotArgs{Mode: "interactive"})
		var f *contract.Failure
		if errors.As(err, &f) && f.Code == contract.CodeSessionReplaced {
			return nil // the worker was lost before the call started; navigate again
		}
		if err != nil {
			return err
		}
		_ = snap.Text
		return nil
	}
}
