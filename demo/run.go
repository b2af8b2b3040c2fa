package demo

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	dbclient "github.com/durable-browser/durable-browser/client"
	"github.com/durable-browser/durable-browser/contract"
)

// ErrNotFinished says the agent ended without doing its task.
var ErrNotFinished = errors.New("the agent did not finish its task")

// RunOptions configure Run.
type RunOptions struct {
	// Client reaches the Temporal the browser workers serve.
	Client client.Client
	// Kind is KindShop or KindHandoff.
	Kind string
	// Site is the demo site's base URL, without a trailing slash.
	Site  string
	Model ModelOptions
	// ApproveOrder approves the order too; otherwise the demo prints the
	// command that does and waits.
	ApproveOrder bool
	// Name is the demo's name in the workflow id (agent, handoff, crash).
	Name string
	// Timeout bounds the agent's workflow.
	Timeout time.Duration
	// Out is where the demo tells the person what happens.
	Out io.Writer
}

// Run runs the demo's own worker (the DemoAgent workflow and the model
// activity, on TaskQueue), starts the agent, approves the sign-in and the
// cart for the person (and the order with ApproveOrder), prints how to
// answer what waits for them, and then what the agent did. It returns the
// agent's result; ErrNotFinished (with the result) when the agent ended
// without doing its task.
func Run(ctx context.Context, o RunOptions) (*Result, error) {
	c, out := o.Client, o.Out
	w := sdkworker.New(c, TaskQueue, sdkworker.Options{})
	w.RegisterWorkflowWithOptions(Agent, workflow.RegisterOptions{Name: WorkflowName})
	w.RegisterActivityWithOptions(NewModel(o.Model), activity.RegisterOptions{Name: ActivityModel})
	if err := w.Start(); err != nil {
		return nil, fmt.Errorf("starting the demo's worker: %w", err)
	}
	defer w.Stop()

	id := fmt.Sprintf("demo-%s-%d", o.Name, time.Now().UnixMilli())
	in := Input{Site: o.Site, Policy: contract.PolicyAsk, Kind: o.Kind,
		Task: "Sign in to the demo shop with the test account, buy a desk lamp, and tell me the order number with evidence."}
	where := o.Site + "/shop/"
	if o.Kind == KindHandoff {
		in.Task = "Pass the check on the demo site's person-only page."
		where = o.Site + "/human.html"
	}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: TaskQueue, WorkflowExecutionTimeout: o.Timeout},
		WorkflowName, in)
	if err != nil {
		return nil, fmt.Errorf("starting the agent: %w", err)
	}
	fmt.Fprintf(out, "agent %s started on %s (%s; browser under the ask policy)\n", id, where, modelName(o.Model))
	fmt.Fprintf(out, "task: %s\n", in.Task)

	done := make(chan error, 1)
	var res Result
	go func() { done <- run.Get(ctx, &res) }()
	decided := map[string]bool{}
	tick := time.NewTicker(300 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				var f *contract.Failure
				if errors.As(err, &f) {
					return nil, fmt.Errorf("the agent could not open a browser: %s: %s", f.Code, f.Message)
				}
				return nil, fmt.Errorf("the agent failed: %w", err)
			}
			return &res, report(out, res, o.Kind)
		case <-tick.C:
		}
		qctx, qcancel := context.WithTimeout(ctx, 5*time.Second)
		st, err := dbclient.State(qctx, c, id)
		qcancel()
		if err != nil {
			continue
		}
		if p := st.PendingHandoff; p != nil && p.Answer == nil && !decided["handoff/"+p.RequestID] {
			decided["handoff/"+p.RequestID] = true
			fmt.Fprintf(out, "\nthe agent waits for a person: %s\n  done:   durable-browser handoff done %s %s\n  cancel: durable-browser handoff cancel %s %s\n(the way to reach the browser is in the worker's handoff notice: dev prints it)\n\n",
				clip(p.Instruction, 200), id, p.RequestID, id, p.RequestID)
		}
		for _, h := range st.Holds {
			if h.Decision != "" || decided[h.HoldID] {
				continue
			}
			decided[h.HoldID] = true
			what := h.Method + " " + h.Origin + h.Path
			if h.Path == "/shop/order" && !o.ApproveOrder {
				fmt.Fprintf(out, "\nthe agent wants to place the order: %s is held for you.\n  approve: durable-browser approvals approve %s %s\n  deny:    durable-browser approvals deny %s %s\n\n", what, id, h.HoldID, id, h.HoldID)
				continue
			}
			sig := contract.ApprovalSignal{HoldID: h.HoldID, Decision: contract.DecisionApprove, By: "demo", Note: "approved by the demo"}
			if err := c.SignalWorkflow(ctx, id, "", contract.SignalApproval, sig); err != nil {
				return nil, fmt.Errorf("approving %s: %w", what, err)
			}
			fmt.Fprintf(out, "approved for you (demo): %s\n", what)
		}
	}
}

// modelName says which model the agent asks.
func modelName(mo ModelOptions) string {
	switch {
	case mo.OpenAIKey != "":
		return "OpenAI-compatible model " + cmp.Or(mo.OpenAIModel, DefaultOpenAIModel)
	case mo.AnthropicKey != "":
		return "Anthropic model " + cmp.Or(mo.AnthropicModel, DefaultAnthropicModel)
	}
	return "scripted model"
}

// report prints what the agent did and its answer.
func report(out io.Writer, res Result, kind string) error {
	fmt.Fprintf(out, "\nthe agent made %d tool calls:\n", res.Calls)
	for i, s := range res.Steps {
		status := "ok"
		var head struct {
			OK   bool   `json:"ok"`
			Code string `json:"code"`
		}
		if err := json.Unmarshal(s.Output, &head); err == nil && !head.OK {
			status = head.Code
		}
		fmt.Fprintf(out, "  %2d. %-14s %-14s %s\n", i+1, s.Call.Name, status, clip(summary(s.Call), 100))
	}
	fmt.Fprintf(out, "\nagent: %s\n", res.Text)
	finished := strings.Contains(res.Text, "confirmed")
	if kind == KindHandoff {
		finished = strings.HasPrefix(res.Text, "The person answered") || strings.HasPrefix(res.Text, "The check is passed")
	}
	if !finished {
		return ErrNotFinished
	}
	return nil
}

// clip keeps a line short.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// summary shows a call without the values it types.
func summary(c Call) string {
	if c.Name != contract.ToolRun {
		return string(c.Args)
	}
	var a struct {
		Actions []map[string]any `json:"actions"`
	}
	if json.Unmarshal(c.Args, &a) != nil {
		return ""
	}
	var parts []string
	for _, x := range a.Actions {
		p := fmt.Sprint(x["op"])
		for _, k := range []string{"id", "url", "text"} {
			if v, ok := x[k]; ok {
				p += fmt.Sprintf(" %s=%v", k, v)
			}
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}
