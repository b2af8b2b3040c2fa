package main

import (
	"context"
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/durable-browser/durable-browser/contract"
)

const approvalsUsage = `Usage:
  durable-browser approvals list [flags]
  durable-browser approvals approve <session-workflow-id> <hold-id> [--key file] [--by name] [--note text]
  durable-browser approvals deny    <session-workflow-id> <hold-id> [--key file] [--by name] [--note text]
  durable-browser approvals keygen --name <approver> --out <file>

A session whose action policy is "ask" holds every request with side effects
(a form POST, a fetch that is not GET, HEAD or OPTIONS) that a run would send,
until a person decides. The run waits, then sends an approved request and
refuses a denied one; a hold nobody answers is refused at the worker's hold
timeout (5 minutes by default).

  list     undecided holds of running sessions: session workflow id, hold id,
           age, and the request: method, full URL (query values and
           secrets scrubbed), body size, the worker's digest of the exact
           request, and the body when it is small and holds no secret
  approve  let the held request go (a signed approval covers the request
           as listed: the worker releases only that request)
  deny     refuse it; the page sees a failed request
  keygen   make an approver's ed25519 key pair: the private key goes to
           --out (mode 0600, never overwritten), the public line for the
           workers' --approver-keys file is printed

Workers configured with --approver-keys act only on decisions signed by a
listed approver: give --key <file> (or $DURABLE_BROWSER_APPROVER_KEY). The
decision is signed for this session, hold and decision, and is valid for
--expires-in. Anything else is recorded in the session state as rejected and
changes nothing. Workers without keys accept unsigned decisions from anyone
who can signal the namespace.

The same with the Temporal CLI (unsigned: only for workers without keys):
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
		name: "approvals", usage: approvalsUsage, answers: "approve/deny", state: contract.StateHeld, subcommands: "list, approve, deny or keygen",
		noteHelp: "a note kept with the decision", byHelp: "who decides", keygen: true,
	})
	if err != nil {
		return err
	}
	o, note, asJSON := f.opsFlags, f.note, f.asJSON
	switch pos[0] {
	case "list":
		states, err := f.listStates(ctx, env, pos)
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
			return printJSON(env.Stdout, rows)
		}
		now := time.Now()
		tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SESSION WORKFLOW ID\tHOLD ID\tAGE\tREQUEST")
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.WorkflowID, r.HoldID, age(now, r.HeldAt), describeHold(r.Hold))
		}
		return tw.Flush()
	case "approve", "deny":
		ctx, c, d, stop, err := f.startAnswer(ctx, env, fs, "approvals", "hold-id", pos)
		if err != nil {
			return err
		}
		defer stop()
		decision := contract.DecisionApprove
		if pos[0] == "deny" {
			decision = contract.DecisionDeny
		}
		wfID, holdID := pos[1], pos[2]
		// The workflow ignores a decision on an unknown or decided hold;
		// check first so the person hears it instead.
		st, err := o.queryState(ctx, c, wfID)
		var found *contract.Hold
		if err != nil {
			if noSession(err) {
				return unknownSession(wfID)
			}
			if d.signer != nil {
				// The signature covers when the request was held.
				return fmt.Errorf("signing needs the hold from the session's state: %w", err)
			}
			fmt.Fprintf(env.Stderr, "warning: %v; sending the signal anyway (the session reads it once a worker runs)\n", err)
		} else {
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
			if err := d.admits(wfID, st); err != nil {
				return err
			}
		}
		sig := contract.ApprovalSignal{HoldID: holdID, Decision: decision, By: d.by, Note: note}
		if found != nil {
			// What is decided (and, signed, what the signature covers).
			fmt.Fprintf(env.Stderr, "%s: %s\n", decision, describeHold(*found))
		}
		if d.signer != nil {
			if err := sig.Sign(d.signer.key, wfID, *found, d.expires); err != nil {
				return err
			}
		}
		if err := c.SignalWorkflow(ctx, wfID, "", contract.SignalApproval, sig); err != nil {
			return fmt.Errorf("signalling session %s: %w", wfID, err)
		}
		if st != nil && (d.signer != nil || len(st.Approvers) > 0) {
			if err := o.confirm(ctx, c, wfID, contract.KindApproval, holdID, d.by, st, func(st *contract.SessionState) bool {
				for _, h := range st.Holds {
					if h.HoldID == holdID && h.Decision != "" {
						return true
					}
				}
				return false
			}); err != nil {
				return err
			}
		}
		fmt.Fprintf(env.Stdout, "hold %s of session %s: %s\n", holdID, wfID, decision)
		return nil
	case "keygen":
		if len(pos) != 1 {
			return fmt.Errorf("approvals keygen takes no arguments, got %q", pos[1:])
		}
		return keygen(env, f.name, f.out)
	default:
		fs.Usage()
		return fmt.Errorf("unknown subcommand %q: want list, approve, deny or keygen", pos[0])
	}
}

// describeHold is the request a hold names, as its approver reads it: the
// method, the scrubbed URL, the body's size and the worker's digest of the
// exact request, and the body itself when the worker showed it.
func describeHold(h contract.Hold) string {
	if h.Digest == "" { // a hold recorded before holds named their request
		return h.Method + " " + h.Origin + h.Path
	}
	out := fmt.Sprintf("%s %s (body %d bytes, digest %s)", h.Method, h.URL, h.BodySize, h.Digest)
	if h.Body != "" {
		out += " body: " + strconv.Quote(h.Body)
	}
	return out
}
