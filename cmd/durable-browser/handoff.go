package main

import (
	"context"
	"fmt"
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

--by is 1-100 printable characters and --note up to 500, neither with a control
or bidi/format character; a session keeps no more of a raw signal's, cleaned.

A handoff is a step the agent asked a person to do in its browser (a check
only a person can pass, a sign-in). The person was notified through the
worker's handoff port (log or webhook) with the instruction and a way to
reach the browser. While it waits, every other call of that session answers
waiting_for_human.

  list    running sessions waiting for a person: session workflow id, request
          id, instruction, age (and expiry with --json); --show-url adds the
          live view address a worker on this machine handed out (a
          full-control credential: it is shown nowhere else); --workflow
          <id> looks at one workflow only, also one that opened its browser
          inline (workflows.Open), which list does not find by itself
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
  (--type browser_state for a workflow that opened its browser inline)
  temporal workflow signal --workflow-id <session-workflow-id> --name handoff \
    --input '{"request_id":"<request-id>","outcome":"done","note":"...","by":"..."}'
(outcome "cancelled" to cancel). In the Temporal UI: open the workflow, "Send
a Signal", name handoff, the same JSON input.

Flags:
`

func runHandoff(ctx context.Context, env *cliEnv, args []string) error {
	return runPerson(ctx, env, args, personVerb{
		name: "handoff", usage: handoffUsage, answers: "done/cancel", state: contract.StateWaitingForHuman, subcommands: "list, done or cancel",
		noteHelp: "a note for the agent (it sees it in the handoff result)", byHelp: "who answers", showURL: true,
		words: []string{"done", "cancel"}, idName: "request-id", list: listHandoffs, answer: answerHandoff,
		// A signed answer is checked against the session's approvers first.
		signingNeeds: "the session's state",
	})
}

// listHandoffs prints the unanswered handoffs of states, with --show-url
// each one's live view address.
func listHandoffs(env *cliEnv, f *personFlags, states []*contract.SessionState) error {
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
	header := "SESSION WORKFLOW ID\tREQUEST ID\tAGE\tINSTRUCTION"
	if f.showURL {
		header += "\tLIVE VIEW"
	}
	return printList(env, f.asJSON, rows, header, func(now time.Time, r row) string {
		// The instruction is a model's words (pages feed it): no cell
		// may move the cursor, colour or reorder what the operator reads.
		line := fmt.Sprintf("%s\t%s\t%s\t%s", oneline.Safe(r.WorkflowID), oneline.Safe(r.RequestID), age(now, r.RequestedAt), oneline.Cut(r.Instruction, 100))
		if f.showURL {
			line += "\t" + safeCell(r.URL)
		}
		return line
	})
}

// answerHandoff answers (word: done or cancel) handoff reqID of session
// wfID, whose state is st (nil when it could not be read).
func answerHandoff(ctx context.Context, env *cliEnv, f *personFlags, a answer, st *contract.SessionState, word, wfID, reqID string) error {
	outcome := contract.OutcomeDone
	if word == "cancel" {
		outcome = contract.OutcomeCancelled
	}
	d := a.d
	switch {
	case st == nil:
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
	sig := contract.HandoffSignal{RequestID: reqID, Outcome: outcome, Note: f.note, By: d.by}
	if d.signer != nil {
		if err := sig.Sign(d.signer.key, wfID, d.expires); err != nil {
			return err
		}
	}
	err := f.send(ctx, a, wfID, st, contract.SignalHandoff, sig, contract.KindHandoff, reqID, func(st *contract.SessionState) bool {
		return st.PendingHandoff == nil || st.PendingHandoff.RequestID != reqID || st.PendingHandoff.Answer != nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "handoff %s of session %s answered %s\n", reqID, wfID, outcome)
	return nil
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
