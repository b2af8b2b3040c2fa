package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/durable-browser/durable-browser/contract"
)

const approvalsUsage = `Usage:
  durable-browser approvals list [flags]
  durable-browser approvals approve <session-workflow-id> <hold-id> [--by name] [--note text]
  durable-browser approvals deny    <session-workflow-id> <hold-id> [--by name] [--note text]

A session whose action policy is "ask" holds every request with side effects
(a form POST, a fetch that is not GET, HEAD or OPTIONS) that a run would send,
until a person decides. The run waits, then sends an approved request and
refuses a denied one; a hold nobody answers is refused at the worker's hold
timeout (5 minutes by default).

  list     undecided holds of running sessions: session workflow id, hold id,
           method, origin, path, age
  approve  let the held request go
  deny     refuse it; the page sees a failed request

The same with the Temporal CLI:
  temporal workflow list --query "WorkflowType = 'BrowserSession' AND BrowserState = 'held'"
  temporal workflow query --workflow-id <session-workflow-id> --type state
  temporal workflow signal --workflow-id <session-workflow-id> --name approval \
    --input '{"hold_id":"<hold-id>","decision":"approve","by":"..."}'
(decision "deny" to deny). In the Temporal UI: open the workflow, "Send a
Signal", name approval, the same JSON input.

Flags:
`

func runApprovals(ctx context.Context, env *cliEnv, args []string) error {
	fs, f, pos, err := parsePerson(env, args, personVerb{
		name: "approvals", usage: approvalsUsage, answers: "approve/deny", state: "held", subcommands: "list, approve or deny",
		noteHelp: "a note kept with the decision", byHelp: "who decides",
	})
	if err != nil {
		return err
	}
	o, note, byName, asJSON := f.opsFlags, f.note, f.by, f.asJSON
	switch pos[0] {
	case "list":
		if len(pos) != 1 {
			return fmt.Errorf("approvals list takes no arguments, got %q", pos[1:])
		}
		states, err := f.listStates(ctx, env, contract.StateHeld)
		if err != nil {
			return err
		}
		type row struct {
			WorkflowID string `json:"workflow_id"`
			contract.Hold
		}
		rows := []row{}
		for _, st := range states {
			for _, h := range st.Holds {
				if h.Decision == "" {
					rows = append(rows, row{WorkflowID: st.WorkflowID, Hold: h})
				}
			}
		}
		if asJSON {
			return printJSON(env.stdout, rows)
		}
		now := time.Now()
		tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SESSION WORKFLOW ID\tHOLD ID\tAGE\tREQUEST")
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s %s%s\n", r.WorkflowID, r.HoldID, age(now, r.HeldAt), r.Method, r.Origin, r.Path)
		}
		return tw.Flush()
	case "approve", "deny":
		if len(pos) != 3 {
			fs.Usage()
			return fmt.Errorf("want approvals %s <session-workflow-id> <hold-id>, got %d arguments", pos[0], len(pos)-1)
		}
		decision := contract.DecisionApprove
		if pos[0] == "deny" {
			decision = contract.DecisionDeny
		}
		wfID, holdID := pos[1], pos[2]
		ctx, cancel, c, err := o.dial(ctx, env)
		if err != nil {
			return err
		}
		defer cancel()
		defer c.Close()
		// The workflow ignores a decision on an unknown or decided hold;
		// check first so the person hears it instead.
		st, err := o.queryState(ctx, c, wfID)
		if err != nil {
			fmt.Fprintf(env.stderr, "warning: %v; sending the signal anyway (the session reads it once a worker runs)\n", err)
		} else {
			var found *contract.Hold
			for i := range st.Holds {
				if st.Holds[i].HoldID == holdID {
					found = &st.Holds[i]
				}
			}
			switch {
			case found == nil:
				return fmt.Errorf("session %s holds no request %s; list holds with `durable-browser approvals list`", wfID, holdID)
			case found.Decision != "":
				return fmt.Errorf("hold %s of session %s was already decided: %s by %q", holdID, wfID, found.Decision, found.By)
			}
		}
		sig := contract.ApprovalSignal{HoldID: holdID, Decision: decision, By: by(env, byName), Note: note}
		if err := c.SignalWorkflow(ctx, wfID, "", contract.SignalApproval, sig); err != nil {
			return fmt.Errorf("signalling session %s: %w", wfID, err)
		}
		fmt.Fprintf(env.stdout, "hold %s of session %s: %s\n", holdID, wfID, decision)
		return nil
	default:
		fs.Usage()
		return fmt.Errorf("unknown subcommand %q: want list, approve or deny", pos[0])
	}
}
