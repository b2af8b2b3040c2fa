package test

import (
	"context"
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/test/harness"
	"github.com/durable-browser/durable-browser/workflows"
)

// A scripted agent goes snapshot, run, screenshot, read, release through a
// BrowserSession on the embedded server, with real Chromium.
func TestScriptedAgent(t *testing.T) {
	env.StartWorker(t, harnessDefaults())
	s := newSession(t, workflows.SessionConfig{})
	before := len(env.Demo.Submissions())

	var run contract.RunResult
	s.must("run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/"}), &run)
	if run.Title != "Durable Browser Demo" {
		t.Fatalf("title after goto: %q", run.Title)
	}
	var snap contract.SnapshotResult
	s.must("snapshot", map[string]any{"mode": "interactive"}, &snap)
	email := refFor(t, snap.Text, `textbox "Email"`)
	submit := refFor(t, snap.Text, `button "Create account"`)

	s.must("run", actions(
		map[string]any{"op": "fill", "id": email, "value": "agent@example.com"},
		map[string]any{"op": "click", "id": submit},
		map[string]any{"op": "wait", "text": "Thanks"},
	), &run)
	if run.Completed != 3 || run.Title != "Thanks" {
		t.Fatalf("run: %+v", run)
	}
	subs := env.Demo.Submissions()[before:]
	if len(subs) != 1 || subs[0].Fields["email"] != "agent@example.com" {
		t.Fatalf("site saw %+v", subs)
	}

	var shot contract.ScreenshotResult
	s.must("screenshot", map[string]any{}, &shot)
	if shot.Evidence.Key == "" || shot.Width == 0 {
		t.Fatalf("screenshot: %+v", shot)
	}
	var read contract.ReadResult
	s.must("browser_read", map[string]any{}, &read)
	if !strings.Contains(read.Content, "Thanks") || read.Evidence.SHA256 == "" {
		t.Fatalf("read: %+v", read)
	}
	// The first snapshot's ids are stale now the page has navigated: the
	// batch is refused whole and nothing is sent.
	f := s.failure("run", actions(map[string]any{"op": "click", "id": submit}))
	if f.Code != contract.CodeStaleSnapshot || f.Effect != contract.EffectNone {
		t.Fatalf("stale id: %+v", f)
	}
	if n := len(env.Demo.Submissions()) - before; n != 1 {
		t.Fatalf("a stale batch sent something: %d submissions", n)
	}
	var rel contract.ReleaseResult
	s.must("browser_release", map[string]any{}, &rel)
	recordHistory(t, s.id, "scripted-agent")
}

// refFor finds the bracketed id of the first snapshot line containing want.
func refFor(t testing.TB, text, want string) string {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		if !strings.Contains(line, want) {
			continue
		}
		i := strings.Index(line, "[")
		j := strings.Index(line, "]")
		if i >= 0 && j > i {
			return line[i+1 : j]
		}
	}
	t.Fatalf("no %q in snapshot:\n%s", want, text)
	return ""
}

// A call to a session that has ended starts a new one under the same id:
// the plain Update finds no running workflow, and the call falls back to
// update-with-start.
func TestCallAfterReleaseStartsNewSession(t *testing.T) {
	env.StartWorker(t, harness.WorkerOptions{})
	s := newSession(t, workflows.SessionConfig{})
	s.must("run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/about.html"}), nil)
	ctx := context.Background()
	runOf := func() string {
		t.Helper()
		desc, err := env.Client.DescribeWorkflowExecution(ctx, s.id, "")
		if err != nil {
			t.Fatal(err)
		}
		return desc.WorkflowExecutionInfo.Execution.RunId
	}
	firstRun := runOf()
	s.must("browser_release", map[string]any{}, nil)
	if err := env.Client.GetWorkflow(ctx, s.id, firstRun).Get(ctx, nil); err != nil {
		t.Fatalf("the released session should have ended: %v", err)
	}
	var snap contract.SnapshotResult
	s.must("snapshot", map[string]any{}, &snap)
	if second := runOf(); second == firstRun {
		t.Fatalf("the call after release should run in a new session, got run %s again", firstRun)
	}
}
