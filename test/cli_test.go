package test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/test/harness"
	"github.com/durable-browser/durable-browser/workflows"
)

// cliRun is one run of the built binary.
type cliRun struct {
	stdout, stderr string
	code           int
}

// cliCmd prepares `durable-browser <verb> --address <embedded> args...`.
func cliCmd(ctx context.Context, verb string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	full := append([]string{verb, "--address", env.Temporal.Address(), "--namespace", "default"}, args...)
	cmd := exec.CommandContext(ctx, env.Bin, full...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	return cmd, &out, &errOut
}

func cliWait(t *testing.T, cmd *exec.Cmd, out, errOut *bytes.Buffer) cliRun {
	t.Helper()
	err := cmd.Wait()
	r := cliRun{stdout: out.String(), stderr: errOut.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatalf("%v: %v", cmd.Args, err)
	}
	return r
}

func cli(t *testing.T, verb string, args ...string) cliRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd, out, errOut := cliCmd(ctx, verb, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cliWait(t, cmd, out, errOut)
}

// cliOK runs a verb that must exit 0.
func cliOK(t *testing.T, verb string, args ...string) string {
	t.Helper()
	r := cli(t, verb, args...)
	if r.code != 0 {
		t.Fatalf("%s %q: exit %d\nstdout: %s\nstderr: %s", verb, args, r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// cliBackground starts a verb (a call that waits on a person) and returns
// a function that waits for it.
func cliBackground(t *testing.T, verb string, args ...string) func() cliRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	cmd, out, errOut := cliCmd(ctx, verb, args...)
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := false
	t.Cleanup(func() {
		if !done {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		cancel()
	})
	return func() cliRun {
		t.Helper()
		done = true
		return cliWait(t, cmd, out, errOut)
	}
}

func decodeJSON(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("not JSON (%v):\n%s", err, s)
	}
}

func TestCLITools(t *testing.T) {
	n := len(contract.Definitions())
	for _, format := range []string{"neutral", "openai", "anthropic"} {
		// tools needs no Temporal, so it takes no --address.
		out, err := exec.Command(env.Bin, "tools", "--format", format).Output()
		if err != nil {
			t.Fatalf("tools --format %s: %v", format, err)
		}
		var defs []map[string]any
		decodeJSON(t, string(out), &defs)
		if len(defs) != n {
			t.Fatalf("%s: %d tools, want %d", format, len(defs), n)
		}
	}
	// A wrong format exits 1 naming the fix.
	cmd := exec.Command(env.Bin, "tools", "--format", "yaml")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "neutral, openai, anthropic or prompt") {
		t.Fatalf("tools --format yaml: %v\n%s", err, out)
	}
	// The prompt section, as text.
	out, err = exec.Command(env.Bin, "tools", "--format", "prompt").Output()
	if err != nil || strings.TrimSpace(string(out)) != contract.Prompt() {
		t.Fatalf("tools --format prompt: %v\n%s", err, out)
	}
}

// Through the built binaries, as docs/configuration.md says: a command
// line naming no verb or an unknown one, at either level, prints the usage
// and exits 2, whether the verb runs in this binary (handoff, approvals,
// call) or in a companion it execs (states, evidence, recording, demo);
// help exits 0.
func TestCLIUsageExitCodes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
	}{
		{nil, 2}, {[]string{"frob"}, 2}, {[]string{"--help"}, 0},
		{[]string{"states"}, 2}, {[]string{"states", "frob"}, 2}, {[]string{"states", "--help"}, 0},
		{[]string{"evidence"}, 2}, {[]string{"evidence", "frob"}, 2},
		{[]string{"recording"}, 2}, {[]string{"recording", "frob"}, 2},
		{[]string{"demo"}, 2}, {[]string{"demo", "frob"}, 2},
		{[]string{"approvals"}, 2}, {[]string{"approvals", "frob"}, 2}, {[]string{"approvals", "--help"}, 0},
		{[]string{"handoff"}, 2}, {[]string{"handoff", "frob"}, 2},
		{[]string{"call"}, 2},
	} {
		out, err := exec.Command(env.Bin, tc.args...).CombinedOutput()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tc.code || !strings.Contains(string(out), "Usage") {
			t.Errorf("durable-browser %q: exit %d, want %d with the usage:\n%s", tc.args, code, tc.code, out)
		}
	}
}

// Every operator verb against the embedded server, through the built
// binary: call, sessions, handoff list/done/cancel, approvals list/approve/deny.
func TestCLIOperatorVerbs(t *testing.T) {
	env.StartWorker(t, harnessDefaults())
	s := newSession(t, workflows.SessionConfig{}) // for its id and cleanup
	id := s.id

	// call: 0 for ok, 1 for a failure envelope.
	out := cliOK(t, "call", id, "run", `{"actions":[{"op":"goto","url":"`+env.Demo.URL()+`/human.html"}]}`)
	var run contract.RunResult
	decodeJSON(t, out, &run)
	if !run.OK || !strings.Contains(run.URL, "/human.html") {
		t.Fatalf("call run: %s", out)
	}
	// --for-model prints what a model reads (contract.ForModel): here the
	// answer less ok, size, completed and total, and the url the goto
	// asked for; the exit status is the answer's.
	var model map[string]any
	decodeJSON(t, cliOK(t, "call", "--for-model", id, "run", `{"actions":[{"op":"goto","url":"`+env.Demo.URL()+`/human.html"}]}`), &model)
	for _, key := range []string{"ok", "size", "completed", "total", "url"} {
		if _, ok := model[key]; ok || model["title"] != run.Title {
			t.Fatalf("call --for-model run: %v, want %q's title without %s", model, run.URL, key)
		}
	}
	r := cli(t, "call", id, "run", `{"actions":[{"op":"click","id":"e9999"}]}`)
	var f contract.Failure
	decodeJSON(t, r.stdout, &f)
	if r.code != 1 || f.OK || f.Code == "" {
		t.Fatalf("failing call: exit %d, %s", r.code, r.stdout)
	}

	// sessions: the table and JSON show the session live on its page.
	table := cliOK(t, "sessions")
	if !strings.Contains(table, "WORKFLOW ID") || !lineWith(table, id, "live", "/human.html", "local") {
		t.Fatalf("sessions table lacks %s live on /human.html:\n%s", id, table)
	}
	var rows []struct {
		WorkflowID string `json:"workflow_id"`
		Tag        string `json:"tag"`
		Provider   string `json:"provider"`
		State      string `json:"state"`
		URL        string `json:"url"`
		Status     string `json:"status"`
	}
	decodeJSON(t, cliOK(t, "sessions", "--json"), &rows)
	found := false
	for _, row := range rows {
		if row.WorkflowID == id {
			found = row.State == contract.StateLive && row.Provider == "local" && row.Tag != "" && row.Status == "running"
		}
	}
	if !found {
		t.Fatalf("sessions --json lacks %s live: %+v", id, rows)
	}

	// handoff: a call waits on a person; list shows it; done answers it.
	answerHandoff := func(verb, outcome string) {
		t.Helper()
		wait := cliBackground(t, "call", id, "browser_request_handoff",
			`{"instruction":"Press and hold the button","completion_condition":{"text":"Verified by a person"}}`)
		var reqID string
		harness.Eventually(t, 60*time.Second, func() bool {
			var list []struct {
				WorkflowID  string `json:"workflow_id"`
				RequestID   string `json:"request_id"`
				Instruction string `json:"instruction"`
			}
			decodeJSON(t, cliOK(t, "handoff", "list", "--json"), &list)
			for _, h := range list {
				if h.WorkflowID == id && h.Instruction == "Press and hold the button" {
					reqID = h.RequestID
				}
			}
			return reqID != ""
		}, "handoff list never showed the request")
		if table := cliOK(t, "handoff", "list"); !lineWith(table, id, reqID, "Press and hold the button") {
			t.Fatalf("handoff list table:\n%s", table)
		}
		// A wrong request id is refused by the CLI, naming the pending one.
		if r := cli(t, "handoff", verb, id, "h-000000000000"); r.code != 1 || !strings.Contains(r.stderr, reqID) {
			t.Fatalf("handoff %s with a wrong id: exit %d\n%s", verb, r.code, r.stderr)
		}
		cliOK(t, "handoff", verb, id, reqID, "--note", "from the cli", "--by", "operator-1")
		res := wait()
		var hr contract.HandoffResult
		decodeJSON(t, res.stdout, &hr)
		if res.code != 0 || hr.Outcome != outcome || hr.By != "operator-1" || hr.Note != "from the cli" || hr.RequestID != reqID {
			t.Fatalf("handoff call: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
		}
		// Answering twice is refused: nothing is pending.
		if r := cli(t, "handoff", verb, id, reqID); r.code != 1 || !strings.Contains(r.stderr, "no handoff is pending") {
			t.Fatalf("second answer: exit %d\n%s", r.code, r.stderr)
		}
	}
	answerHandoff("done", contract.OutcomeDone)
	answerHandoff("cancel", contract.OutcomeCancelled)
	cliOK(t, "call", id, "browser_release")

	// approvals: a session under "ask" holds the form until a person decides.
	a := newSession(t, workflows.SessionConfig{})
	cliOK(t, "call", "--policy", "ask", a.id, "run", `{"actions":[{"op":"goto","url":"`+env.Demo.URL()+`/"}]}`)
	var snap contract.SnapshotResult
	decodeJSON(t, cliOK(t, "call", a.id, "snapshot", `{"mode":"interactive"}`), &snap)
	emailRef, submitRef := refFor(t, snap.Text, `textbox "Email"`), refFor(t, snap.Text, `button "Create account"`)
	decide := func(verb string) int {
		t.Helper()
		email := "cli-" + uuid.NewString()[:8] + "@example.com"
		wait := cliBackground(t, "call", a.id, "run", `{"actions":[{"op":"fill","id":"`+emailRef+`","value":"`+email+`"},{"op":"click","id":"`+submitRef+`"}]}`)
		var holdID string
		harness.Eventually(t, 60*time.Second, func() bool {
			var list []struct {
				WorkflowID string `json:"workflow_id"`
				HoldID     string `json:"hold_id"`
				Method     string `json:"method"`
				Path       string `json:"path"`
			}
			decodeJSON(t, cliOK(t, "approvals", "list", "--json"), &list)
			for _, h := range list {
				if h.WorkflowID == a.id && h.Method == "POST" && h.Path == "/submit" {
					holdID = h.HoldID
				}
			}
			return holdID != ""
		}, "approvals list never showed the hold")
		if table := cliOK(t, "approvals", "list"); !lineWith(table, a.id, holdID, "POST", "/submit") {
			t.Fatalf("approvals list table:\n%s", table)
		}
		if r := cli(t, "approvals", verb, a.id, "no-such-hold"); r.code != 1 || !strings.Contains(r.stderr, "holds no request") {
			t.Fatalf("approvals %s with a wrong id: exit %d\n%s", verb, r.code, r.stderr)
		}
		cliOK(t, "approvals", verb, a.id, holdID, "--by", "operator-2")
		res := wait()
		want := 0 // approved: the run goes on
		if verb == "deny" {
			want = 1 // denied: a refused failure envelope
		}
		if res.code != want {
			t.Fatalf("held run: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
		}
		if r := cli(t, "approvals", verb, a.id, holdID); r.code != 1 || !strings.Contains(r.stderr, "already decided") {
			t.Fatalf("deciding twice: exit %d\n%s", r.code, r.stderr)
		}
		n := 0
		for _, sub := range env.Demo.Submissions() {
			if sub.Fields["email"] == email {
				n++
			}
		}
		return n
	}
	if n := decide("deny"); n != 0 {
		t.Fatalf("denied form arrived %d times", n)
	}
	decodeJSON(t, cliOK(t, "call", a.id, "run", `{"actions":[{"op":"goto","url":"`+env.Demo.URL()+`/"}]}`), &run)
	decodeJSON(t, cliOK(t, "call", a.id, "snapshot", `{"mode":"interactive"}`), &snap)
	emailRef, submitRef = refFor(t, snap.Text, `textbox "Email"`), refFor(t, snap.Text, `button "Create account"`)
	if n := decide("approve"); n != 1 {
		t.Fatalf("approved form arrived %d times", n)
	}

	// sessions --all lists ended sessions from their search attributes.
	cliOK(t, "call", a.id, "browser_release")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// browser_release ended the session; wait for its workflow to close.
	if err := env.Client.GetWorkflow(ctx, id, "").Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, func() bool {
		all := cliOK(t, "sessions", "--all")
		return lineWith(all, id, "completed") && !lineWith(cliOK(t, "sessions"), id)
	}, "sessions --all never showed %s completed", id)
	noReach(t, id, "")
	noReach(t, a.id, "")
}

// lineWith reports whether one line of text holds every part.
func lineWith(text string, parts ...string) bool {
	for _, line := range strings.Split(text, "\n") {
		ok := true
		for _, p := range parts {
			if !strings.Contains(line, p) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// A session started without search attributes is found by the list verbs
// without --scan: they ask each session that keeps no BrowserState.
func TestHandoffListFindsSessionsWithoutSearchAttributes(t *testing.T) {
	env.StartWorker(t, harnessDefaults())
	s := newSession(t, workflows.SessionConfig{})
	cliOK(t, "call", "--search-attributes=false", s.id, "run", `{"actions":[{"op":"goto","url":"`+env.Demo.URL()+`/human.html"}]}`)
	wait := cliBackground(t, "call", s.id, "browser_request_handoff", `{"instruction":"Find me without attributes","completion_condition":{"text":"Verified by a person"}}`)
	reqID := pendingHandoff(t, s.id) // handoff list without --scan
	cliOK(t, "handoff", "cancel", s.id, reqID)
	if r := wait(); r.code != 0 {
		t.Fatalf("handoff call: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// What `call` answers when the call cannot be served as sent: every
// refusal is an envelope with its size (the session's and the client's
// own alike), a second release is ok, a bad session id or option is named
// before any request, and a wait that runs out says how to collect the
// answer.
func TestCLICallRefusals(t *testing.T) {
	env.StartWorker(t, harnessDefaults())
	s := newSession(t, workflows.SessionConfig{}) // for its id and cleanup
	id := s.id

	refused := func(args []string, want string) {
		t.Helper()
		r := cli(t, "call", args...)
		var f struct {
			contract.Failure
			Size *contract.Size `json:"size"`
		}
		decodeJSON(t, r.stdout, &f)
		if r.code != 1 || f.OK || f.Code != contract.CodeRefused || !strings.Contains(f.Message, want) || f.Size == nil || f.Size.Chars == 0 {
			t.Fatalf("call %q: exit %d, want a refused envelope with its size saying %q:\n%s\n%s", args, r.code, want, r.stdout, r.stderr)
		}
	}
	// Arguments that are not JSON: the client refuses them as the session
	// refuses arguments that are not an object.
	refused([]string{id, "snapshot", `{bad`}, "arguments are not valid JSON")
	refused([]string{id, "snapshot", `{} x`}, "arguments are not valid JSON")
	refused([]string{id, "snapshot", `[]`}, "arguments must be a JSON object")
	refused([]string{id, "no_such_tool"}, `unknown tool "no_such_tool"`)

	// A session id Temporal cannot carry, or one that lists as blank.
	for _, bad := range []struct{ id, want string }{
		{"séssion", "is not printable ASCII"},
		{"a\nb", "is not printable ASCII"},
		{" ", "starts or ends with a space"},
		{"", "it is empty"},
	} {
		r := cli(t, "call", bad.id, "snapshot")
		if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, bad.want) || !strings.Contains(r.stderr, "printable ASCII characters") {
			t.Fatalf("call %q snapshot: exit %d, stdout %q, stderr %s", bad.id, r.code, r.stdout, r.stderr)
		}
	}
	for _, flag := range []string{"--idle-timeout=0s", "--max-lifetime=-1s"} {
		name := strings.TrimPrefix(strings.SplitN(flag, "=", 2)[0], "--")
		r := cli(t, "call", flag, id+"-opts", "snapshot")
		if r.code != 1 || !strings.Contains(r.stderr, name) || !strings.Contains(r.stderr, "not a positive duration") {
			t.Fatalf("call %s: exit %d, stderr %s", flag, r.code, r.stderr)
		}
	}

	// A wait that runs out names the way to the answer.
	r := cli(t, "call", "--timeout", "3s", "--update-id", "wait-1", id, "browser_request_handoff",
		`{"instruction":"Nobody answers this","completion_condition":{"text":"never"}}`)
	if r.code != 1 || !strings.Contains(r.stderr, "no answer within --timeout 3s") || !strings.Contains(r.stderr, "same --update-id wait-1") {
		t.Fatalf("call past its --timeout: exit %d, stderr %s", r.code, r.stderr)
	}
	cliOK(t, "handoff", "cancel", id, pendingHandoff(t, id))

	// Releasing is safe to repeat; any other call then answers
	// session_ended, with its size.
	var rel contract.ReleaseResult
	decodeJSON(t, cliOK(t, "call", id, "browser_release"), &rel)
	if !rel.OK || rel.Tag == "" {
		t.Fatalf("release: %+v", rel)
	}
	var again struct {
		contract.ReleaseResult
		Size *contract.Size `json:"size"`
	}
	decodeJSON(t, cliOK(t, "call", id, "browser_release"), &again)
	if !again.OK || again.Released || again.Tag != rel.Tag || again.Size == nil {
		t.Fatalf("second release: %+v, want ok, not released, tag %s, with its size", again, rel.Tag)
	}
	r = cli(t, "call", id, "snapshot")
	var ended struct {
		contract.Failure
		Size *contract.Size `json:"size"`
	}
	decodeJSON(t, r.stdout, &ended)
	if r.code != 1 || ended.Code != contract.CodeSessionEnded || ended.Size == nil {
		t.Fatalf("a call after the release: exit %d, %s", r.code, r.stdout)
	}
}

// pendingHandoff is the request id of the handoff session id waits on.
func pendingHandoff(t *testing.T, id string) string {
	t.Helper()
	var reqID string
	harness.Eventually(t, 60*time.Second, func() bool {
		var list []struct {
			WorkflowID string `json:"workflow_id"`
			RequestID  string `json:"request_id"`
		}
		decodeJSON(t, cliOK(t, "handoff", "list", "--json"), &list)
		for _, h := range list {
			if h.WorkflowID == id {
				reqID = h.RequestID
			}
		}
		return reqID != ""
	}, "handoff list shows no handoff of session %s", id)
	return reqID
}
