package test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	dbclient "github.com/durable-browser/durable-browser/client"
	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/workflows"
)

// TestScriptReplay records a session the way a model drives one (look, act
// by id, check), turns its history into a script whose ids are locators,
// replays it with no model on a fresh session, then replays it on the page
// after the site changed: it stops at the step whose element is gone, with
// stale_snapshot and the candidates.
func TestScriptReplay(t *testing.T) {
	env.StartWorker(t, harnessDefaults())
	// A sign-up page the site can change: v2 renames the button.
	var v2 atomic.Bool
	env.Demo.Handle("GET /script-signup", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		button := "Create account"
		if v2.Load() {
			button = "Join now"
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>Sign up</title><main><h1>Sign up</h1><form method="post" action="/submit">
<label>Email <input name="email" type="email"></label>
<label>Plan <select name="plan"><option value="basic">Basic</option><option value="pro">Pro</option></select></label>
<label><input type="checkbox" name="agree" value="yes"> I agree</label>
<button type="submit">%s</button><button type="button">Cancel</button></form></main>`, button)
	}))
	page := env.Demo.URL() + "/script-signup"

	rec := newSession(t, workflows.SessionConfig{})
	var snap contract.SnapshotResult
	rec.must("run", actions(map[string]any{"op": "goto", "url": page}), nil)
	rec.must("snapshot", map[string]any{}, &snap)
	rec.must("run", map[string]any{"observe": true, "actions": []map[string]any{
		{"op": "fill", "id": refFor(t, snap.Text, `textbox "Email"`), "value": "ada@example.com"},
		{"op": "select", "id": refFor(t, snap.Text, `combobox "Plan"`), "values": []string{"Pro"}},
		{"op": "check", "id": refFor(t, snap.Text, `checkbox "I agree"`)},
		{"op": "click", "id": refFor(t, snap.Text, `button "Create account"`)},
		{"op": "wait", "text": "Submission received"},
	}}, nil)
	var check contract.CheckResult
	rec.must("browser_check", map[string]any{"expect_text": "Submission received"}, &check)
	rec.must("browser_release", map[string]any{}, nil)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_ = env.Client.GetWorkflow(ctx, rec.id, "").Get(ctx, nil)
	script, err := dbclient.ScriptFromHistory(ctx, env.Client, rec.id)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(script)
	if len(script.Steps) != 3 || script.Steps[1].Class != contract.ClassEffect || script.Steps[2].Tool != "browser_check" ||
		strings.Contains(string(script.Steps[1].Args), `"id"`) || strings.Contains(string(script.Steps[1].Args), "observe") ||
		!strings.Contains(string(script.Steps[1].Args), `{"role":"button","name":"Create account"}`) ||
		!strings.Contains(string(script.Steps[1].Args), `{"role":"textbox","name":"Email"}`) {
		t.Fatalf("script: %s", raw)
	}

	// Again, with no model, on a fresh session.
	before := len(env.Demo.Submissions())
	again, err := dbclient.RunScript(ctx, env.Client, "e2e-script-"+uuid.NewString()[:8], script, dbclient.CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeSession(again.WorkflowID) })
	if again.Stopped != nil || again.Completed != 3 || len(env.Demo.Submissions()) != before+1 {
		t.Fatalf("replay: %+v", again)
	}
	var verdict contract.CheckResult
	if err := json.Unmarshal(again.Answers[2], &verdict); err != nil || !verdict.Passed {
		t.Fatalf("the replay's check: %s", again.Answers[2])
	}

	// The site changed: the script stops at the run, nothing submitted.
	v2.Store(true)
	before = len(env.Demo.Submissions())
	changed, err := dbclient.RunScript(ctx, env.Client, "e2e-script-"+uuid.NewString()[:8], script, dbclient.CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeSession(changed.WorkflowID) })
	st := changed.Stopped
	if st == nil || st.Step != 2 || st.Code != contract.CodeStaleSnapshot || changed.Completed != 1 ||
		!strings.Contains(st.Message, `Create account`) || !strings.Contains(st.Message, "matches no visible element") {
		t.Fatalf("replay on the changed page: %+v", changed)
	}
	if n := len(env.Demo.Submissions()); n != before {
		t.Fatalf("a stopped script submitted %d forms", n-before)
	}

	// The same through the command: script prints it, replay-script runs it
	// and exits 1 where it stopped.
	printed := cli(t, "script", rec.id)
	var fromCLI dbclient.Script
	err = json.Unmarshal([]byte(printed.stdout), &fromCLI)
	again1, _ := json.Marshal(fromCLI)
	if printed.code != 0 || err != nil || string(again1) != string(raw) {
		t.Fatalf("durable-browser script: %+v", printed)
	}
	file := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(file, []byte(printed.stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	cliSession := "e2e-script-cli-" + uuid.NewString()[:8]
	t.Cleanup(func() { closeSession(cliSession) })
	replayed := cli(t, "replay-script", "--session", cliSession, file)
	var cliRun dbclient.ScriptRun
	if err := json.Unmarshal([]byte(replayed.stdout), &cliRun); replayed.code != 1 || err != nil || cliRun.Stopped == nil ||
		cliRun.Stopped.Code != contract.CodeStaleSnapshot || cliRun.WorkflowID != cliSession {
		t.Fatalf("durable-browser replay-script: %+v", replayed)
	}
}

func closeSession(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = env.Client.SignalWorkflow(ctx, id, "", contract.SignalClose, nil)
	_ = env.Client.GetWorkflow(ctx, id, "").Get(ctx, nil)
}
