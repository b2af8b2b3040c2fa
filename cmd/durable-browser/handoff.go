package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/config"
	"github.com/durable-browser/durable-browser/internal/liveview/book"
	"github.com/durable-browser/durable-browser/internal/oneline"
)

const handoffUsage = `Usage:
  durable-browser handoff list [flags]
  durable-browser handoff done   <session-workflow-id> <request-id> [--key file] [--note text] [--by name]
  durable-browser handoff cancel <session-workflow-id> <request-id> [--key file] [--note text] [--by name]

A handoff is a step the agent asked a person to do in its browser (a check
only a person can pass, a sign-in). The person was notified through the
worker's handoff port (log or webhook) with the instruction and a way to
reach the browser. While it waits, every other call of that session answers
waiting_for_human.

  list    running sessions waiting for a person: session workflow id, request
          id, instruction, age (and expiry with --json); --show-url adds the
          live view address a worker on this machine handed out (a
          full-control credential: it is shown nowhere else)
  done    the step is done: the agent takes a snapshot and checks its
          completion condition
  cancel  the person will not do it; the agent learns "cancelled"

Workers configured with --approver-keys act only on answers signed by a
listed approver: give --key <file> (or $DURABLE_BROWSER_APPROVER_KEY; keys
come from durable-browser approvals keygen). Anything else is recorded in the
session state as rejected and changes nothing. Workers without keys accept
unsigned answers from anyone who can signal the namespace.

The same with the Temporal CLI (unsigned: only for workers without keys):
  temporal workflow list --query "WorkflowType = 'BrowserSession' AND BrowserState = 'waiting_for_human'"
  temporal workflow query --workflow-id <session-workflow-id> --type state
  temporal workflow signal --workflow-id <session-workflow-id> --name handoff \
    --input '{"request_id":"<request-id>","outcome":"done","note":"...","by":"..."}'
(outcome "cancelled" to cancel). In the Temporal UI: open the workflow, "Send
a Signal", name handoff, the same JSON input.

Flags:
`

func runHandoff(ctx context.Context, env *cliEnv, args []string) error {
	fs, f, pos, err := parsePerson(env, args, personVerb{
		name: "handoff", usage: handoffUsage, answers: "done/cancel", state: contract.StateWaitingForHuman, subcommands: "list, done or cancel",
		noteHelp: "a note for the agent (it sees it in the handoff result)", byHelp: "who answers", showURL: true,
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
			WorkflowID  string    `json:"workflow_id"`
			RequestID   string    `json:"request_id"`
			Instruction string    `json:"instruction"`
			RequestedAt time.Time `json:"requested_at"`
			ExpiresAt   time.Time `json:"expires_at"`
			Tag         string    `json:"tag,omitempty"`
			// URL is the live view address, with --show-url only.
			URL string `json:"url,omitempty"`
		}
		rows := []row{}
		lv := book.Book{Dir: f.liveViewDir}
		for _, st := range states {
			p := st.PendingHandoff
			if p == nil || p.Answer != nil {
				continue
			}
			r := row{WorkflowID: st.WorkflowID, RequestID: p.RequestID, Instruction: p.Instruction,
				RequestedAt: p.RequestedAt, ExpiresAt: p.ExpiresAt, Tag: st.Tag}
			if f.showURL {
				if e, ok := lv.Find(st.WorkflowID, p.RequestID); ok {
					r.URL = e.URL
				}
			}
			rows = append(rows, r)
		}
		if asJSON {
			return printJSON(env.Stdout, rows)
		}
		now := time.Now()
		tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
		if f.showURL {
			fmt.Fprintln(tw, "SESSION WORKFLOW ID\tREQUEST ID\tAGE\tINSTRUCTION\tLIVE VIEW")
		} else {
			fmt.Fprintln(tw, "SESSION WORKFLOW ID\tREQUEST ID\tAGE\tINSTRUCTION")
		}
		for _, r := range rows {
			if f.showURL {
				u := r.URL
				if u == "" {
					u = "-"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.WorkflowID, r.RequestID, age(now, r.RequestedAt), oneline.Cut(r.Instruction, 100), u)
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.WorkflowID, r.RequestID, age(now, r.RequestedAt), oneline.Cut(r.Instruction, 100))
		}
		return tw.Flush()
	case "done", "cancel":
		ctx, c, d, stop, err := f.startAnswer(ctx, env, fs, "handoff", "request-id", pos)
		if err != nil {
			return err
		}
		defer stop()
		outcome := contract.OutcomeDone
		if pos[0] == "cancel" {
			outcome = contract.OutcomeCancelled
		}
		wfID, reqID := pos[1], pos[2]
		// The workflow ignores a signal for a request that is not pending;
		// check first so the person hears it instead.
		st, err := o.queryState(ctx, c, wfID)
		switch {
		case err != nil && noSession(err):
			return unknownSession(wfID)
		case err != nil && d.signer != nil:
			// A signed answer is checked against the session's approvers first.
			return fmt.Errorf("signing needs the session's state: %w", err)
		case err != nil:
			fmt.Fprintf(env.Stderr, "warning: %v; sending the signal anyway (the session reads it once a worker runs)\n", err)
		case st.PendingHandoff == nil || st.PendingHandoff.RequestID != reqID:
			pending := "no handoff is pending"
			if st.PendingHandoff != nil {
				pending = "the pending handoff is " + st.PendingHandoff.RequestID
			}
			return fmt.Errorf("session %s is not waiting on handoff %s (%s); list pending ones with `durable-browser handoff list`", wfID, reqID, pending)
		case st.PendingHandoff.Answer != nil:
			return fmt.Errorf("handoff %s of session %s was already answered %s by %q", reqID, wfID, st.PendingHandoff.Answer.Outcome, st.PendingHandoff.Answer.By)
		}
		if st != nil {
			if err := d.admits(wfID, st); err != nil {
				return err
			}
		}
		sig := contract.HandoffSignal{RequestID: reqID, Outcome: outcome, Note: note, By: d.by}
		if d.signer != nil {
			if err := sig.Sign(d.signer.key, wfID, d.expires); err != nil {
				return err
			}
		}
		if err := c.SignalWorkflow(ctx, wfID, "", contract.SignalHandoff, sig); err != nil {
			return fmt.Errorf("signalling session %s: %w", wfID, err)
		}
		if st != nil && (d.signer != nil || len(st.Approvers) > 0) {
			if err := o.confirm(ctx, c, wfID, contract.KindHandoff, reqID, d.by, st, func(st *contract.SessionState) bool {
				return st.PendingHandoff == nil || st.PendingHandoff.RequestID != reqID || st.PendingHandoff.Answer != nil
			}); err != nil {
				return err
			}
		}
		fmt.Fprintf(env.Stdout, "handoff %s of session %s answered %s\n", reqID, wfID, outcome)
		return nil
	default:
		fs.Usage()
		return fmt.Errorf("unknown subcommand %q: want list, done or cancel", pos[0])
	}
}

// parseInterleaved parses flags that may come before, between or after the
// positional arguments, and returns the positionals. "--" ends the flags.
func parseInterleaved(fs *config.Set, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		// flag stops at "--" (consumed) or the first non-flag.
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
