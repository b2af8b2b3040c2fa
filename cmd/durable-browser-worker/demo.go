package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	dbclient "github.com/durable-browser/durable-browser/client"
	"github.com/durable-browser/durable-browser/cmd/internal/cli"
	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/demo"
	"github.com/durable-browser/durable-browser/internal/oneline"
)

const demoUsage = `Usage: durable-browser demo agent|handoff [flags]

Runs an agent on the demo site's shop, against a running stack (after
` + "`make run`" + ` it needs no flags): an orchestrator workflow (DemoAgent) runs the
agent loop over the tool definitions and the Go API, with the model as an
activity. With OPENAI_API_KEY set it asks that model (OPENAI_BASE_URL for any
compatible server, OPENAI_MODEL or --openai-model to pick one); else with
ANTHROPIC_API_KEY, Anthropic's (ANTHROPIC_BASE_URL, ANTHROPIC_MODEL); with
neither, or with --scripted, a scripted stand-in that reads each page and
picks the next tool call, so it runs offline.

The task: sign in with the test account, search, add a desk lamp to the cart,
check out, read the confirmation and cite it with its evidence. The browser
runs under the ask policy: every request with side effects waits for a
person. The demo approves the sign-in and the cart for you and prints them;
the order waits for you, and the demo prints the command that approves it
(--approve approves it too).

demo handoff: the agent opens a page only a person can pass (the demo site's
"press and hold" check), tries, then asks for a person with
browser_request_handoff and waits; the demo prints the command that answers
it (the way to reach the browser goes to the worker's handoff notice: dev
prints it). The agent then says how it went.

This process runs the demo's own worker (task queue durable-browser-demo);
the browser tools run on the stack's workers.

demo crash (run by durable-browser-dev: see durable-browser demo crash
--help) runs demo agent on a stack of its own and kills the browser worker
mid-run; the agent must end with one order, not two.

Flags:
`

func runDemo(ctx context.Context, env *cliEnv, args []string) error {
	if len(args) > 0 && args[0] == "crash" {
		return fmt.Errorf("`demo crash` runs from durable-browser-dev: `durable-browser demo crash`")
	}
	if _, err := cli.Subverb(args, "demo", "`durable-browser demo agent`, `demo handoff` or `demo crash`", func() { fmt.Fprint(env.Stderr, demoUsage) }, "agent", "handoff"); err != nil {
		return err
	}
	kind := demo.KindShop
	if args[0] == "handoff" {
		kind = demo.KindHandoff
	}
	fs := cli.Flags("demo "+args[0], env, demoUsage)
	var (
		tf                    cli.Client
		site, openaiModel     string
		approve, scriptedOnly bool
	)
	cli.BindClient(fs, &tf, 10*time.Minute, "give up after this long", "trace, debug, info, warn or error")
	fs.String(&site, "site", "http://127.0.0.1:8380", "the demo site's address (durable-browser dev serves it there)")
	fs.Bool(&approve, "approve", false, "approve the order too, without waiting for you")
	fs.Bool(&scriptedOnly, "scripted", false, "use the scripted stand-in even when OPENAI_API_KEY or ANTHROPIC_API_KEY is set")
	fs.String(&openaiModel, "openai-model", env.Getenv("OPENAI_MODEL"), "the OpenAI-compatible model to ask (default "+demo.DefaultOpenAIModel+"; also $OPENAI_MODEL)")
	if err := cli.ParseNoArgs(fs, args[1:], "demo "+args[0]); err != nil {
		return err
	}
	log, err := tf.Check(env.Stderr, "e.g. 10m")
	if err != nil {
		return err
	}
	log = log.With().Timestamp().Logger()
	site = strings.TrimRight(site, "/")
	ctx, cancel, c, err := tf.Dial(ctx, log)
	if err != nil {
		return err
	}
	defer cancel()
	defer c.Close()

	w := sdkworker.New(c, demo.TaskQueue, sdkworker.Options{})
	w.RegisterWorkflowWithOptions(demo.Agent, workflow.RegisterOptions{Name: demo.WorkflowName})
	mo := demo.ModelOptions{OpenAIKey: env.Getenv("OPENAI_API_KEY"), OpenAIBaseURL: env.Getenv("OPENAI_BASE_URL"), OpenAIModel: openaiModel,
		AnthropicKey: env.Getenv("ANTHROPIC_API_KEY"), AnthropicBaseURL: env.Getenv("ANTHROPIC_BASE_URL"), AnthropicModel: env.Getenv("ANTHROPIC_MODEL")}
	if scriptedOnly {
		mo.OpenAIKey, mo.AnthropicKey = "", ""
	}
	model := "scripted model"
	switch {
	case mo.OpenAIKey != "":
		model = "OpenAI-compatible model " + cmp.Or(mo.OpenAIModel, demo.DefaultOpenAIModel)
	case mo.AnthropicKey != "":
		model = "Anthropic model " + cmp.Or(mo.AnthropicModel, demo.DefaultAnthropicModel)
	}
	w.RegisterActivityWithOptions(demo.NewModel(mo), activity.RegisterOptions{Name: demo.ActivityModel})
	if err := w.Start(); err != nil {
		return fmt.Errorf("starting the demo's worker: %w", err)
	}
	defer w.Stop()

	id := fmt.Sprintf("demo-%s-%d", args[0], time.Now().UnixMilli())
	in := demo.Input{Site: site, Policy: contract.PolicyAsk, Kind: kind,
		Task: "Sign in to the demo shop with the test account, buy a desk lamp, and tell me the order number with evidence."}
	where := site + "/shop/"
	if kind == demo.KindHandoff {
		in.Task = "Pass the check on the demo site's person-only page."
		where = site + "/human.html"
	}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: demo.TaskQueue, WorkflowExecutionTimeout: tf.Timeout},
		demo.WorkflowName, in)
	if err != nil {
		return fmt.Errorf("starting the agent: %w", err)
	}
	out := env.Stdout
	fmt.Fprintf(out, "agent %s started on %s (%s; browser under the ask policy)\n", id, where, model)
	fmt.Fprintf(out, "task: %s\n", in.Task)

	done := make(chan error, 1)
	var res demo.Result
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
					return fmt.Errorf("the agent could not open a browser: %s: %s", f.Code, f.Message)
				}
				return fmt.Errorf("the agent failed: %w", err)
			}
			return report(env, res, kind)
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
			what := oneline.Safe(h.Method + " " + h.Origin + h.Path)
			if h.Path == "/shop/order" && !approve {
				fmt.Fprintf(out, "\nthe agent wants to place the order: %s is held for you.\n  approve: durable-browser approvals approve %s %s\n  deny:    durable-browser approvals deny %s %s\n\n", what, id, h.HoldID, id, h.HoldID)
				continue
			}
			sig := contract.ApprovalSignal{HoldID: h.HoldID, Decision: contract.DecisionApprove, By: "demo", Note: "approved by the demo"}
			if err := c.SignalWorkflow(ctx, id, "", contract.SignalApproval, sig); err != nil {
				return fmt.Errorf("approving %s: %w", what, err)
			}
			fmt.Fprintf(out, "approved for you (demo): %s\n", what)
		}
	}
}

// report prints what the agent did and its answer.
func report(env *cliEnv, res demo.Result, kind string) error {
	out := env.Stdout
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
	// The model's words, each line terminal-safe (pages feed them).
	lines := strings.Split(res.Text, "\n")
	for i, l := range lines {
		lines[i] = oneline.Safe(l)
	}
	fmt.Fprintf(out, "\nagent: %s\n", strings.Join(lines, "\n"))
	finished := strings.Contains(res.Text, "confirmed")
	if kind == demo.KindHandoff {
		finished = strings.HasPrefix(res.Text, "The person answered") || strings.HasPrefix(res.Text, "The check is passed")
	}
	if !finished {
		return cli.ExitError{Code: 1}
	}
	return nil
}

// clip keeps a line short and terminal-safe: what it shows came from a
// model, or a page through it.
func clip(s string, n int) string { return oneline.Cut(s, n) }

// summary shows a call without the values it types.
func summary(c demo.Call) string {
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
