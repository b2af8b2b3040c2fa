package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/oneline"
)

const approvalsUsage = `Usage:
  durable-browser approvals list [flags]
  durable-browser approvals approve <session-workflow-id> <hold-id> [--key file] [--by name] [--note text]
  durable-browser approvals deny    <session-workflow-id> <hold-id> [--key file] [--by name] [--note text]
  durable-browser approvals keygen --name <approver> --out <file>

--by is 1-100 printable characters and --note up to 500, neither with a control
or bidi/format character; a session keeps no more of a raw signal's, cleaned.

A session whose action policy is "ask" holds every request with side effects
(a form POST, a fetch that is not GET, HEAD or OPTIONS) that a run would send,
until a person decides. The run waits, then sends an approved request and
refuses a denied one; a hold nobody answers is refused at the worker's hold
timeout (5 minutes by default).

  list     undecided holds of running sessions: session workflow id, hold id,
           age, and the request: method, full URL (query values and
           secrets scrubbed), body size, the worker's digest of the exact
           request, and the body when it is small and holds no secret;
           --workflow <id> looks at one workflow only, also one that
           opened its browser inline (workflows.Open), which list does not
           find by itself
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
  (--type browser_state for a workflow that opened its browser inline)
  temporal workflow signal --workflow-id <session-workflow-id> --name approval \
    --input '{"hold_id":"<hold-id>","decision":"approve","by":"..."}'
(decision "deny" to deny). In the Temporal UI: open the workflow, "Send a
Signal", name approval, the same JSON input.

Flags:
`

func runApprovals(ctx context.Context, env *cliEnv, args []string) error {
	return runPerson(ctx, env, args, personVerb{
		name: "approvals", usage: approvalsUsage, answers: "approve/deny", state: contract.StateHeld, subcommands: "list, approve, deny or keygen",
		noteHelp: "a note kept with the decision", byHelp: "who decides", keygen: true,
		words: []string{"approve", "deny"}, idName: "hold-id", list: listHolds, answer: answerHold,
		// The signature covers when the request was held.
		signingNeeds: "the hold from the session's state",
	})
}

// listHolds prints the undecided holds of states.
func listHolds(env *cliEnv, f *personFlags, states []*contract.SessionState) error {
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
	return printList(env, f.asJSON, rows, "SESSION WORKFLOW ID\tHOLD ID\tAGE\tREQUEST", func(now time.Time, r row) string {
		return fmt.Sprintf("%s\t%s\t%s\t%s", oneline.Safe(r.WorkflowID), oneline.Safe(r.HoldID), age(now, r.HeldAt), describeHold(r.Hold))
	})
}

// answerHold approves or denies (word) hold holdID of session wfID, whose
// state is st (nil when it could not be read).
func answerHold(ctx context.Context, env *cliEnv, f *personFlags, a answer, st *contract.SessionState, word, wfID, holdID string) error {
	decision := contract.DecisionApprove
	if word == "deny" {
		decision = contract.DecisionDeny
	}
	d := a.d
	var found *contract.Hold
	if st != nil {
		for i := range st.Holds {
			if st.Holds[i].HoldID == holdID {
				found = &st.Holds[i]
			}
		}
		switch {
		case found == nil:
			return fmt.Errorf("session %s holds no request %s; list holds with `durable-browser approvals list`", wfID, holdID)
		case found.Decision != "":
			if found.By == "" { // expired: nobody decided it
				return fmt.Errorf("hold %s of session %s was already decided: %s", holdID, wfID, found.Decision)
			}
			return fmt.Errorf("hold %s of session %s was already decided: %s by %q", holdID, wfID, found.Decision, found.By)
		}
		if err := d.admits(wfID, st); err != nil {
			return err
		}
	}
	sig := contract.ApprovalSignal{HoldID: holdID, Decision: decision, By: d.by, Note: f.note}
	if found != nil {
		// What is decided (and, signed, what the signature covers).
		fmt.Fprintf(env.Stderr, "%s: %s\n", decision, describeHold(*found))
	}
	if d.signer != nil {
		if err := sig.Sign(d.signer.key, wfID, *found, d.expires); err != nil {
			return err
		}
	}
	err := f.send(ctx, a, wfID, st, contract.SignalApproval, sig, contract.KindApproval, holdID, func(st *contract.SessionState) bool {
		for _, h := range st.Holds {
			if h.HoldID == holdID && h.Decision != "" {
				return true
			}
		}
		return false
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "hold %s of session %s: %s\n", holdID, wfID, decision)
	return nil
}

// describeHold is the request a hold names, as its approver reads it: the
// method, the scrubbed URL, the body's size and the worker's digest of the
// exact request, and the body itself when the worker showed it. Made
// terminal-safe: a hold signal may come from anyone who can signal.
func describeHold(h contract.Hold) string {
	if h.Digest == "" { // a hold recorded before holds named their request
		return oneline.Safe(h.Method + " " + h.Origin + h.Path)
	}
	out := fmt.Sprintf("%s %s (body %d bytes, digest %s)", h.Method, h.URL, h.BodySize, h.Digest)
	if h.Body != "" {
		out += " body: " + strconv.Quote(h.Body)
	}
	return oneline.Safe(out)
}
