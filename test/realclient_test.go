package test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"
	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/sdk/client"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/logging"
	"github.com/durable-browser/durable-browser/test/harness"
)

// tsClientDir holds the TypeScript client's script and its pinned
// dependencies (package-lock.json).
const tsClientDir = "tsclient"

// tsClient installs the TypeScript SDK's client (npm ci, once per lock
// file, in the user's cache) and returns a runner for client.mjs, or the
// reason it cannot.
func tsClient(t *testing.T, address, workflowID string) (func(args ...string) []byte, string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, "node is not installed (apt-get install nodejs npm)"
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return nil, "npm is not installed (apt-get install npm)"
	}
	h := sha256.New()
	for _, f := range []string{"package.json", "package-lock.json", "client.mjs"} {
		b, err := os.ReadFile(filepath.Join(tsClientDir, f))
		if err != nil {
			t.Fatal(err)
		}
		h.Write(b)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "durable-browser", "tsclient-"+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@temporalio", "client", "package.json")); err != nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"package.json", "package-lock.json", "client.mjs"} {
			b, _ := os.ReadFile(filepath.Join(tsClientDir, f))
			if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			_ = os.RemoveAll(filepath.Join(dir, "node_modules"))
			return nil, fmt.Sprintf("npm ci of @temporalio/client failed (%v):\n%s", err, tail(string(out), 10))
		}
	} else {
		// Same lock, same script: the earlier install serves.
		b, _ := os.ReadFile(filepath.Join(tsClientDir, "client.mjs"))
		_ = os.WriteFile(filepath.Join(dir, "client.mjs"), b, 0o644)
	}
	return func(args ...string) []byte {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, append([]string{"client.mjs", address, workflowID}, args...)...)
		cmd.Dir = dir
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("node client.mjs %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return out
	}, ""
}

// devCall runs `durable-browser call` against dev, as an agent's host would.
func devCall(ctx context.Context, address, id string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, env.Bin, append([]string{"call", "--address", address}, flagsThenID(id, args)...)...)
	cmd.Env = cleanEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%v: %w\n%s", cmd.Args[1:], err, stderr.String())
	}
	return out, nil
}

// flagsThenID puts the flags (leading "--x", "v" pairs in args) before the
// workflow id, and the tool and its JSON after it.
func flagsThenID(id string, args []string) []string {
	var flags, rest []string
	for i := 0; i < len(args); i++ {
		if strings.HasPrefix(args[i], "--") && i+1 < len(args) {
			flags = append(flags, args[i], args[i+1])
			i++
			continue
		}
		rest = append(rest, args[i])
	}
	return append(append(flags, id), rest...)
}

// metadataDetails reads a workflow's current details through a plain Go SDK
// client: the metadata query the UI reads.
func metadataDetails(t *testing.T, c client.Client, id string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := c.QueryWorkflow(ctx, id, "", "__temporal_workflow_metadata")
	if err != nil {
		t.Fatalf("metadata query of %s: %v", id, err)
	}
	var md sdkpb.WorkflowMetadata
	if err := v.Get(&md); err != nil {
		t.Fatal(err)
	}
	return md.GetCurrentDetails()
}

// tsLook is what client.mjs's look step saw.
type tsLook struct {
	Listed []struct {
		WorkflowID string `json:"workflow_id"`
		State      string `json:"state"`
	} `json:"listed"`
	Status         string                `json:"status"`
	Summary        string                `json:"summary"`
	Details        string                `json:"details"`
	CurrentDetails string                `json:"current_details"`
	State          contract.SessionState `json:"state"`
}

// A session run against `dev` as a real operator meets it: the agent's
// calls go through durable-browser's CLI, and the operator's steps through
// clients that are not ours. The Go SDK's client describes the session
// and reads its current details (state, URL, the pending handoff's
// instruction) and sees them change once the handoff is answered; the
// TypeScript SDK's client lists it by search attribute, describes it
// (summary and details present, no query value or typed text), queries
// its state, answers a handoff and an approval by signal, and reads the
// activities' and waits' summaries from the history. A client that cannot
// be installed here is skipped, saying why.
func TestRealClients(t *testing.T) {
	state := t.TempDir()
	addrs := freeDevAddrs(t)
	p := startDev(t, state, addrs.flags()...)
	p.waitOut(t, 3*time.Minute, "Press Ctrl-C to stop.")
	gc, err := client.Dial(client.Options{HostPort: addrs.temporal, Namespace: "default", Logger: logging.NewSDKLogger(zerolog.Nop())})
	if err != nil {
		t.Fatal(err)
	}
	defer gc.Close()

	id := "real-clients-" + uuid.NewString()[:8]
	typed := "typed-" + uuid.NewString()[:8] + "@example.com"
	demo := "http://" + addrs.demo
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	t.Cleanup(func() {
		cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer ccancel()
		_ = gc.SignalWorkflow(cctx, id, "", contract.SignalClose, nil)
	})
	if out, err := devCall(ctx, addrs.temporal, id, "--policy", "ask", "run", fmt.Sprintf(`{"actions":[{"op":"goto","url":%q}]}`, demo+"/?ref=query-value-Zk4")); err != nil {
		t.Fatalf("first call: %v\n%s", err, out)
	}
	out, err := devCall(ctx, addrs.temporal, id, "snapshot", `{"mode":"interactive"}`)
	var snap contract.SnapshotResult
	if err != nil || json.Unmarshal(out, &snap) != nil {
		t.Fatalf("snapshot: %v\n%s", err, out)
	}

	// Describe, through the Go SDK's client: the static summary and
	// details are set at start; the current details name the state and page.
	desc, err := gc.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		t.Fatal(err)
	}
	var summary string
	if p := desc.GetExecutionConfig().GetUserMetadata().GetSummary(); p == nil || json.Unmarshal(p.GetData(), &summary) != nil || summary == "" {
		t.Fatalf("describe: no static summary in %v", desc.GetExecutionConfig().GetUserMetadata())
	}
	var details string
	if p := desc.GetExecutionConfig().GetUserMetadata().GetDetails(); p == nil || json.Unmarshal(p.GetData(), &details) != nil ||
		!strings.Contains(summary, "opened by durable-browser call") || !strings.Contains(details, "**action policy** ask") {
		t.Fatalf("describe: static summary %q, details %q", summary, details)
	}
	d := metadataDetails(t, gc, id)
	if !strings.Contains(d, "**live**") || !strings.Contains(d, "page "+demo+"/") || strings.Contains(d, "query-value") {
		t.Fatalf("current details after the first calls:\n%s", d)
	}

	handoff := make(chan error, 1)
	go func() {
		out, err := devCall(ctx, addrs.temporal, id, "browser_request_handoff",
			`{"instruction":"Sign in with 2FA","completion_condition":{"text":"Create account"},"expires_in_s":600}`)
		if err == nil && answerField(out, "outcome") != "done" {
			err = fmt.Errorf("handoff answered %s", out)
		}
		handoff <- err
	}()
	harness.Eventually(t, 60*time.Second, func() bool {
		d = metadataDetails(t, gc, id)
		return strings.Contains(d, "**waiting for a person**: Sign in with 2FA")
	}, "the current details never named the pending handoff; dev stderr:\n%s", tail(p.stderr.String(), 30))
	if !strings.Contains(d, "**waiting_for_human**") || !strings.Contains(d, "page "+demo+"/") || !strings.Contains(d, "handoff done "+id+" h-") {
		t.Fatalf("current details during the handoff:\n%s", d)
	}

	ts, why := tsClient(t, addrs.temporal, id)
	// answer signals through the TypeScript client, or, where it cannot
	// be installed, through the Go SDK's (the reads below say they skipped).
	answer := func(name string, arg any) {
		t.Helper()
		b, _ := json.Marshal(arg)
		if ts != nil {
			ts("signal", name, string(b))
			return
		}
		if err := gc.SignalWorkflow(ctx, id, "", name, arg); err != nil {
			t.Fatal(err)
		}
	}
	look := func(want string) tsLook {
		t.Helper()
		var l tsLook
		if out := ts("look", want); json.Unmarshal(out, &l) != nil {
			t.Fatalf("look: %s", out)
		}
		if len(l.Listed) != 1 || l.Listed[0].WorkflowID != id || l.Listed[0].State != want {
			t.Fatalf("list by BrowserState = %q: %+v", want, l.Listed)
		}
		if l.Status != "RUNNING" || l.Summary == "" || !strings.Contains(l.Summary, "opened by durable-browser call") || !strings.Contains(l.Details, "**action policy** ask") || l.State.WorkflowID != id || l.State.State != want {
			t.Fatalf("describe and state through the TypeScript client: %+v", l)
		}
		for _, s := range []string{l.Summary, l.Details, l.CurrentDetails} {
			if strings.Contains(s, "query-value") || strings.Contains(s, typed) {
				t.Fatalf("a query value or typed text in what the TypeScript client read: %q", s)
			}
		}
		return l
	}

	requestID := ""
	if ts == nil {
		t.Logf("SKIP TypeScript client: %s", why)
		var st contract.SessionState
		v, err := gc.QueryWorkflow(ctx, id, "", contract.QueryState)
		if err != nil || v.Get(&st) != nil || st.PendingHandoff == nil {
			t.Fatalf("state: %v %+v", err, st)
		}
		requestID = st.PendingHandoff.RequestID
	} else {
		l := look(contract.StateWaitingForHuman)
		if l.State.PendingHandoff == nil || !strings.Contains(l.CurrentDetails, "**waiting for a person**: Sign in with 2FA") {
			t.Fatalf("the TypeScript client's view of the handoff: %+v", l)
		}
		requestID = l.State.PendingHandoff.RequestID
	}
	answer(contract.SignalHandoff, contract.HandoffSignal{RequestID: requestID, Outcome: contract.OutcomeDone, By: "ts-client"})
	if err := <-handoff; err != nil {
		t.Fatal(err)
	}
	if d = metadataDetails(t, gc, id); strings.Contains(d, "waiting for a person") || !strings.Contains(d, "**live**") {
		t.Fatalf("current details after the handoff was answered:\n%s", d)
	}

	// A run posts the demo's form: the session's policy holds the POST.
	held := make(chan error, 1)
	go func() {
		out, err := devCall(ctx, addrs.temporal, id, "run", fmt.Sprintf(`{"actions":[{"op":"fill","id":%q,"value":%q},{"op":"click","id":%q}]}`,
			refFor(t, snap.Text, `textbox "Email"`), typed, refFor(t, snap.Text, `button "Create account"`)))
		if err == nil && !strings.Contains(strings.Join(strings.Fields(string(out)), ""), `"decision":"approved"`) {
			err = fmt.Errorf("run answered %s", out)
		}
		held <- err
	}()
	harness.Eventually(t, 90*time.Second, func() bool {
		d = metadataDetails(t, gc, id)
		return strings.Contains(d, "**held for approval**: POST "+demo+"/submit")
	}, "the current details never named the hold; dev stderr:\n%s", tail(p.stderr.String(), 30))
	holdID := ""
	if ts == nil {
		var st contract.SessionState
		v, err := gc.QueryWorkflow(ctx, id, "", contract.QueryState)
		if err != nil || v.Get(&st) != nil || len(st.Holds) == 0 {
			t.Fatalf("state: %v %+v", err, st)
		}
		holdID = st.Holds[0].HoldID
	} else {
		l := look(contract.StateHeld)
		if len(l.State.Holds) != 1 || !strings.Contains(l.CurrentDetails, "approvals approve "+id+" "+l.State.Holds[0].HoldID) {
			t.Fatalf("the TypeScript client's view of the hold: %+v", l)
		}
		holdID = l.State.Holds[0].HoldID
	}
	answer(contract.SignalApproval, contract.ApprovalSignal{HoldID: holdID, Decision: contract.DecisionApprove, By: "ts-client"})
	if err := <-held; err != nil {
		t.Fatal(err)
	}

	t.Run("temporal CLI", func(t *testing.T) { temporalCLISteps(t, addrs.temporal, id) })
	if ts == nil {
		t.Skipf("the session was answered through the Go SDK's client; the TypeScript client was skipped: %s", why)
	}
	var h struct {
		Activities []struct{ Type, Summary string } `json:"activities"`
		Timers     []struct{ Summary string }       `json:"timers"`
		Signals    []string                         `json:"signals"`
	}
	if out := ts("history"); json.Unmarshal(out, &h) != nil {
		t.Fatalf("history: %s", out)
	}
	var lines []string
	for _, a := range h.Activities {
		if a.Summary == "" {
			t.Errorf("activity %s has no summary in the TypeScript client's history", a.Type)
		}
		lines = append(lines, a.Summary)
	}
	for _, tm := range h.Timers {
		lines = append(lines, tm.Summary)
	}
	all := strings.Join(lines, "\n")
	for _, want := range []string{"open browser", "goto " + addrs.demo + "/?…", "snapshot interactive", `ask a person: "Sign in with 2FA"`, "fill [",
		`waiting for a person: "Sign in with 2FA" (expires `, "waiting for approval: POST " + demo + "/submit (expires "} {
		if !strings.Contains(all, want) {
			t.Errorf("no summary in the history holds %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, typed) || strings.Contains(all, "query-value") {
		t.Errorf("a summary holds typed text or a query value:\n%s", all)
	}
	if sig := strings.Join(h.Signals, ","); !strings.Contains(sig, contract.SignalHandoff) || !strings.Contains(sig, contract.SignalApproval) {
		t.Errorf("the history shows signals %v, want the handoff and the approval", h.Signals)
	}
}

// temporalCLISteps runs the Temporal CLI commands docs/operations.md shows
// against the live session, when a `temporal` binary is on PATH. It cannot
// be had prebuilt here; `go install github.com/temporalio/cli/cmd/temporal`
// builds it (it compiles a Temporal server of its own: minutes).
func temporalCLISteps(t *testing.T, address, id string) {
	bin, err := exec.LookPath("temporal")
	if err != nil {
		t.Skip("the temporal CLI is not on PATH (go install github.com/temporalio/cli/cmd/temporal@v1.5.1 builds it); the other clients ran")
	}
	run := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, bin, append(args, "--address", address, "--namespace", "default")...).CombinedOutput()
		if err != nil {
			t.Fatalf("temporal %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"workflow", "list", "--query", "WorkflowType = 'BrowserSession' AND ExecutionStatus = 'Running'"}, []string{id}},
		{[]string{"workflow", "list", "--query", "BrowserState = 'live'"}, []string{id}},
		{[]string{"workflow", "query", "--workflow-id", id, "--type", "state"}, []string{`"live"`, id}},
		{[]string{"workflow", "query", "--workflow-id", id, "--type", "__temporal_workflow_metadata"}, []string{"**live**"}},
		{[]string{"workflow", "describe", "--workflow-id", id}, []string{id, "BrowserSession"}},
	} {
		out := run(c.args...)
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("temporal %s does not show %q:\n%s", strings.Join(c.args, " "), w, out)
			}
		}
	}
}

// answerField is a top-level string field of a call's JSON answer ("" when
// the answer is not JSON or has no such string).
func answerField(out []byte, name string) string {
	var m map[string]any
	if json.Unmarshal(out, &m) != nil {
		return ""
	}
	v, _ := m[name].(string)
	return v
}
