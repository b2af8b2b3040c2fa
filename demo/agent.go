// Package demo is `durable-browser demo agent`: an orchestrator
// workflow running an agent loop over contract.Definitions() and the Go API
// (workflows.Open, Browser.CallTool), with the model as an activity. The
// model is a scripted stand-in that reads each page as a model would and
// runs offline; the task is the demo site's shop: sign in, search, add to
// the cart, check out under the ask policy, read the confirmation and cite
// it with its evidence.
package demo

import (
	"encoding/json"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/workflows"
)

// Names the demo's worker registers, on a task queue of its own.
const (
	WorkflowName  = "DemoAgent"
	ActivityModel = "demo.model"
	TaskQueue     = "durable-browser-demo"
)

// Input is the agent's task.
type Input struct {
	// Site is the demo site's base URL, without a trailing slash.
	Site string `json:"site"`
	// Task is what the user asked, in words.
	Task string `json:"task"`
	// Kind picks the scripted stand-in's task: KindShop (default) or
	// KindHandoff.
	Kind string `json:"kind,omitempty"`
	// Policy is the browser's action policy (the demo uses ask).
	Policy string `json:"policy"`
	// MaxTurns bounds the loop (default 40).
	MaxTurns int `json:"max_turns,omitempty"`
}

// The scripted stand-in's tasks.
const (
	// KindShop buys a lamp in the demo shop.
	KindShop = "shop"
	// KindHandoff meets a page only a person can pass and asks for one.
	KindHandoff = "handoff"
)

// Call is one tool call the model asked for.
type Call struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// Turn is the model's answer: tool calls, or (with none) its final text.
type Turn struct {
	Text  string `json:"text,omitempty"`
	Calls []Call `json:"calls,omitempty"`
}

// Step is a call and the tool's answer (a result or a failure envelope).
type Step struct {
	Call   Call            `json:"call"`
	Output json.RawMessage `json:"output"`
}

// forModel is the answer as the model reads it (contract.ForModel).
func (s Step) forModel() string {
	return string(contract.ForModel(contract.ToolCall{Name: s.Call.Name, Args: s.Call.Args}, s.Output))
}

// ModelInput is what the model activity sees: the task, the tools and the
// latest steps (older ones are dropped, long answers cut).
type ModelInput struct {
	Task  string          `json:"task"`
	Site  string          `json:"site"`
	Kind  string          `json:"kind,omitempty"`
	Tools []contract.Tool `json:"tools"`
	Steps []Step          `json:"steps"`
	// Turn counts the model's turns so far.
	Turn int `json:"turn"`
}

// Result is how the agent ended.
type Result struct {
	Text  string `json:"text"`
	Calls int    `json:"calls"`
	// Steps are the calls the agent made, for the demo to print.
	Steps []Step `json:"steps"`
}

// What the model sees of the past, so a long run stays within payload
// limits: the last keepSteps steps, each answer cut to keepBytes.
const (
	keepSteps = 8
	keepBytes = 12 << 10
)

// Agent is the orchestrator workflow.
func Agent(ctx workflow.Context, in Input) (*Result, error) {
	if in.MaxTurns <= 0 {
		in.MaxTurns = 40
	}
	b, err := workflows.Open(ctx, workflows.Config{Session: contract.SessionOptions{Provider: "local", ActionPolicy: in.Policy}})
	if err != nil {
		return nil, err
	}
	defer func() { _ = b.Close(ctx) }()
	// The people answering holds and handoffs see this workflow as they see
	// a BrowserSession: `durable-browser approvals approve <this id> <hold>`
	// checks the hold here first.
	if err := workflow.SetQueryHandler(ctx, contract.QueryState, func() (contract.SessionState, error) {
		st := b.State()
		out := contract.SessionState{WorkflowID: workflow.GetInfo(ctx).WorkflowExecution.ID, Tag: st.Session.Tag,
			Provider: st.Session.Provider, HostQueue: st.Session.HostQueue, URL: st.URL, State: contract.StateLive,
			PendingHandoff: st.Human.Pending, Holds: st.Human.Holds}
		for _, h := range st.Human.Holds {
			if h.Decision == "" {
				out.State = contract.StateHeld
			}
		}
		if p := st.Human.Pending; p != nil && p.Answer == nil {
			out.State = contract.StateWaitingForHuman
		}
		return out, nil
	}); err != nil {
		return nil, err
	}

	mctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3},
	})
	res := &Result{}
	tools := contract.Definitions()
	for turn := 0; turn < in.MaxTurns; turn++ {
		var t Turn
		if err := workflow.ExecuteActivity(mctx, ActivityModel, ModelInput{
			Task: in.Task, Site: in.Site, Kind: in.Kind, Tools: tools, Steps: recent(res.Steps), Turn: turn,
		}).Get(ctx, &t); err != nil {
			return nil, err
		}
		if len(t.Calls) == 0 {
			res.Text = t.Text
			return res, nil
		}
		for _, c := range t.Calls {
			out, err := b.CallTool(ctx, c.Name, c.Args)
			if err != nil {
				return nil, err // cancelled: not the model's to handle
			}
			res.Calls++
			res.Steps = append(res.Steps, Step{Call: c, Output: cut(c, out)})
		}
	}
	return nil, fmt.Errorf("the agent did not finish within %d turns", in.MaxTurns)
}

func recent(steps []Step) []Step {
	if len(steps) > keepSteps {
		steps = steps[len(steps)-keepSteps:]
	}
	return steps
}

// cut bounds a long answer by what the model reads of it: an answer whose
// model form (contract.ForModel) fits stays whole; otherwise the model form
// is cut, as a valid JSON string saying what was cut.
func cut(c Call, out json.RawMessage) json.RawMessage {
	if len(out) <= keepBytes {
		return out
	}
	model := Step{Call: c, Output: out}.forModel()
	if len(model) <= keepBytes {
		return out
	}
	b, _ := json.Marshal(fmt.Sprintf("(answer of %d bytes cut) %s", len(model), model[:keepBytes]))
	return b
}
