package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/contract"
)

// What a model, a page or a signal wrote, as a hostile page would have it:
// colour, cursor movement, a right-to-left override, a line break, and
// HTML characters JSON readers should see as they are.
const hostile = "Press OK\x1b[32m ALL CLEAR\x1b[1A\x1b[2K\u202eevil\nnext row\u2066 <b>&amp;</b>"

// hostileStates is a session waiting for a person, holding a request and
// whose last call came from the model, every text field hostile.
func hostileStates() []*contract.SessionState {
	return []*contract.SessionState{{
		WorkflowID: "conv-1", Tag: "conv-1-1", State: contract.StateWaitingForHuman,
		URL: "https://shop.example/\u202eexe.pdf", Title: hostile, LastCall: "run: " + hostile,
		PendingHandoff: &contract.PendingHandoff{RequestID: "h-1", Instruction: hostile},
		Holds: []contract.Hold{{HoldSubject: contract.HoldSubject{HoldID: "x1\x1b[2K", Method: "POST", Origin: "https://shop.example",
			Path: "/buy\u202e", RequestFacts: contract.RequestFacts{URL: "https://shop.example/buy\x1b[1A", Digest: "d1", Body: hostile}}}},
		Approvers: []string{"ann"},
		Rejected:  []contract.RejectedDecision{{Kind: contract.KindApproval, ID: "x1", By: "eve\u202e", Reason: contract.RejectUnsigned}},
	}}
}

// noTerminalControl fails when out holds a character that acts on a
// terminal, or when a row was split in two.
func noTerminalControl(t *testing.T, what, out string, lines int) {
	t.Helper()
	if strings.ContainsAny(out, "\x1b\u202e\u2066\r") {
		t.Errorf("%s: a control or bidi character reached the terminal: %q", what, out)
	}
	if n := len(strings.Split(strings.TrimSpace(out), "\n")); n != lines {
		t.Errorf("%s: %d lines, want %d (a newline split a row):\n%s", what, n, lines, out)
	}
}

// Every table the CLI prints of a model's, a page's or a signal's text is
// terminal-safe: handoff list, approvals list, sessions.
func TestTablesAreTerminalSafe(t *testing.T) {
	var out bytes.Buffer
	env := &cliEnv{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }}
	if err := listHandoffs(env, &personFlags{}, hostileStates()); err != nil {
		t.Fatal(err)
	}
	noTerminalControl(t, "handoff list", out.String(), 2)
	if !strings.Contains(out.String(), "Press OK?[32m ALL CLEAR") {
		t.Errorf("handoff list: the instruction should show, made safe:\n%s", out.String())
	}

	out.Reset()
	if err := listHolds(env, &personFlags{}, hostileStates()); err != nil {
		t.Fatal(err)
	}
	noTerminalControl(t, "approvals list", out.String(), 2)

	out.Reset()
	row := sessionRow{WorkflowID: "conv-1", Status: "running"}
	row.withState(hostileStates()[0])
	if err := printSessions(env, []sessionRow{row}, time.Now()); err != nil {
		t.Fatal(err)
	}
	noTerminalControl(t, "sessions", out.String(), 2)
}

// --json stays JSON that decodes to what the session said, with control
// and bidi characters escaped as \uXXXX and & < > as they are.
func TestJSONIsTerminalSafe(t *testing.T) {
	var out bytes.Buffer
	env := &cliEnv{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }}
	for _, list := range []struct {
		name string
		run  func() error
	}{
		{"handoff list", func() error { return listHandoffs(env, &personFlags{asJSON: true}, hostileStates()) }},
		{"approvals list", func() error { return listHolds(env, &personFlags{asJSON: true}, hostileStates()) }},
		{"sessions", func() error {
			row := sessionRow{WorkflowID: "conv-1", Status: "running"}
			row.withState(hostileStates()[0])
			return printJSON(env.Stdout, []sessionRow{row})
		}},
	} {
		out.Reset()
		if err := list.run(); err != nil {
			t.Fatal(err)
		}
		raw := out.String()
		if strings.ContainsAny(raw, "\x1b\u202e\u2066") || !strings.Contains(raw, `\u202e`) || !strings.Contains(raw, `\u001b`) {
			t.Errorf("%s --json: control and bidi characters must be escaped:\n%s", list.name, raw)
		}
		if strings.Contains(raw, `\u0026`) || !strings.Contains(raw, "<b>&amp;</b>") {
			t.Errorf("%s --json: & < > are HTML-escaped:\n%s", list.name, raw)
		}
		var rows []map[string]any
		if err := json.Unmarshal(out.Bytes(), &rows); err != nil || len(rows) != 1 {
			t.Fatalf("%s --json is not a JSON array of one row (%v):\n%s", list.name, err, raw)
		}
		found := false // the instruction, the hold's body, the title
		for _, v := range rows[0] {
			if s, ok := v.(string); ok && strings.Contains(s, hostile) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s --json: the text does not decode to what the session said:\n%s", list.name, raw)
		}
	}
}

// sessions --json shows everything the state query says: every field of
// the state (approvers, rejected, usage, ...) is in the row.
func TestSessionsJSONHasTheWholeState(t *testing.T) {
	st := hostileStates()[0]
	st.HostQueue, st.Calls = "host-a", 3
	deadline := time.Date(2026, 12, 2, 14, 0, 0, 0, time.UTC)
	st.IdleDeadline = &deadline
	st.Usage = map[string]contract.ToolUsage{contract.ToolSnapshot: {Calls: 3, Chars: 300, Tokens: 75}}
	st.Total = contract.ToolUsage{Calls: 3, Chars: 300, Tokens: 75}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	row := sessionRow{WorkflowID: st.WorkflowID, RunID: "r1", Status: "running", StartedAt: deadline}
	row.withState(st)
	var out bytes.Buffer
	if err := printJSON(&out, []sessionRow{row}); err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("not one row (%v):\n%s", err, out.String())
	}
	for k := range want {
		if _, ok := rows[0][k]; !ok {
			t.Errorf("sessions --json lacks %q of the state query", k)
		}
	}
	for _, k := range []string{"approvers", "rejected", "run_id", "status"} {
		if _, ok := rows[0][k]; !ok {
			t.Errorf("sessions --json lacks %q", k)
		}
	}
	// An ended session has no state: its row is the execution's alone.
	out.Reset()
	if err := printJSON(&out, []sessionRow{{WorkflowID: "conv-2", Status: "completed", Ended: "idle"}}); err != nil || strings.Contains(out.String(), "approvers") {
		t.Fatalf("ended row: %v\n%s", err, out.String())
	}
}

// A decision's --by and --note are refused before anything is sent when
// the session would have to clip or clean them, naming the rule.
func TestDecisionTextRefused(t *testing.T) {
	dial := []string{"--address", "127.0.0.1:1", "--timeout", "2s"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"approvals", "approve", "wf", "h1", "--by", strings.Repeat("a", 120<<10)}, "is 122880 characters long"},
		{[]string{"approvals", "deny", "wf", "h1", "--by", "ann\x1b[32m"}, "holds the character U+001B"},
		{[]string{"approvals", "approve", "wf", "h1", "--by", "ann\u202e"}, "holds the character U+202E"},
		{[]string{"approvals", "approve", "wf", "h1", "--by", "ann\nbob"}, "holds the character U+000A"},
		{[]string{"approvals", "approve", "wf", "h1", "--by", ""}, "--by (DURABLE_BROWSER_BY): is empty"},
		{[]string{"handoff", "done", "wf", "h-1", "--by", ""}, "is empty"},
		{[]string{"handoff", "done", "wf", "h-1", "--by", "ann", "--note", strings.Repeat("n", 501)}, "--note (DURABLE_BROWSER_NOTE): is 501 characters long"},
		{[]string{"handoff", "cancel", "wf", "h-1", "--by", "ann", "--note", "ok\x1b[1A"}, "holds the character U+001B"},
		{[]string{"approvals", "approve", "wf", "h1", "--by", "ann", "--note", "fine\u2066"}, "holds the character U+2066"},
	} {
		_, stderr, code := opsCLI(t, append(tc.args, dial...)...)
		if code != 1 || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "printable characters, no control or bidi/format characters") {
			t.Errorf("%.80q: exit %d, stderr %.300q; want 1 and %q with the rule", tc.args, code, stderr, tc.want)
		}
	}
}

// keygen into a directory that does not exist says so; into an existing
// file, that key files are never overwritten.
func TestKeygenSaysWhyItCannotWrite(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "no-such-dir", "ann.key")
	_, stderr, code := opsCLI(t, "approvals", "keygen", "--name", "ann", "--out", missing)
	if code != 1 || !strings.Contains(stderr, "the directory "+filepath.Join(dir, "no-such-dir")+" does not exist") || strings.Contains(stderr, "never overwritten") {
		t.Fatalf("keygen into a missing directory: exit %d, %s", code, stderr)
	}
	existing := filepath.Join(dir, "ann.key")
	if err := os.WriteFile(existing, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = opsCLI(t, "approvals", "keygen", "--name", "ann", "--out", existing)
	if code != 1 || !strings.Contains(stderr, "never overwritten") {
		t.Fatalf("keygen over a file: exit %d, %s", code, stderr)
	}
}

// call prints the answer as JSON that means the same, with the control and
// bidi characters encoding/json leaves raw (page text's U+202E, C1
// controls) escaped, and & < > as the session gave them.
func TestCallAnswerIsTerminalSafe(t *testing.T) {
	var out bytes.Buffer
	env := &cliEnv{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }}
	answer := json.RawMessage("{\"ok\":true,\"text\":\"pay \u202egnp.exe \u0085 <b>&</b>\"}")
	if err := printEnvelope(env, answer); err != nil {
		t.Fatal(err)
	}
	raw := out.String()
	if strings.ContainsAny(raw, "\u202e\u0085") || !strings.Contains(raw, `\u202e`) || !strings.Contains(raw, "<b>&</b>") {
		t.Fatalf("call's answer:\n%s", raw)
	}
	var back, want map[string]any
	if json.Unmarshal(out.Bytes(), &back) != nil || json.Unmarshal(answer, &want) != nil || back["text"] != want["text"] {
		t.Fatalf("the answer does not decode to the session's: %q", raw)
	}
}
