package test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

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
	id, ok := harness.Ref(text, want)
	if !ok {
		t.Fatalf("no %q in snapshot:\n%s", want, text)
	}
	return id
}

// A call to a session that has ended never lands on a new browser
// unawares: it answers session_ended naming why, until the caller asks for a
// new session on purpose, which takes the next tag (-2) at about:blank.
func TestCallAfterEndSaysSessionEnded(t *testing.T) {
	env.StartWorker(t, harness.WorkerOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ended := func(s *session, reason string) {
		t.Helper()
		var res contract.SessionResult
		if err := env.Client.GetWorkflow(ctx, s.id, "").Get(ctx, &res); err != nil || res.Reason != reason {
			t.Fatalf("session %s ended with %+v (%v), want reason %s", s.id, res, err, reason)
		}
	}

	s := newSession(t, workflows.SessionConfig{})
	s.must("run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/about.html"}), nil)
	s.must("browser_release", map[string]any{}, nil)
	ended(s, contract.EndReleased)
	f := s.failure("snapshot", map[string]any{})
	if f.Code != contract.CodeSessionEnded || !strings.Contains(f.Message, "released by browser_release") ||
		!strings.Contains(f.Message, workflows.SessionTag(s.id, 1)) || !strings.Contains(f.Message, "--new") {
		t.Fatalf("a call after browser_release answered %+v, want session_ended naming the release, the tag and --new", f)
	}
	// The CLI says the same, and starts anew only with --new.
	if r := cli(t, "call", s.id, "snapshot"); r.code != 1 || !strings.Contains(r.stdout, "session_ended") {
		t.Fatalf("call after release: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var snap contract.SnapshotResult
	decodeJSON(t, cliOK(t, "call", "--new", s.id, "snapshot"), &snap)
	if snap.URL != "about:blank" {
		t.Fatalf("the new session is at %q, want about:blank", snap.URL)
	}
	if tag := state(t, s.id).Tag; tag != workflows.SessionTag(s.id, 2) {
		t.Fatalf("the new session's tag is %q, want %q", tag, workflows.SessionTag(s.id, 2))
	}
	// --new changes nothing while a session runs.
	cliOK(t, "call", "--new", s.id, "snapshot")
	if tag := state(t, s.id).Tag; tag != workflows.SessionTag(s.id, 2) {
		t.Fatalf("--new on a running session moved it to %q", tag)
	}
	s.must("browser_release", map[string]any{}, nil)
	recordHistory(t, s.id, "new-after-release")

	// An idle release says idle, in the answer and in sessions --all.
	idle := newSession(t, workflows.SessionConfig{IdleTimeout: time.Second})
	idle.must("run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/about.html"}), nil)
	ended(idle, contract.EndIdle)
	if f := idle.failure("snapshot", map[string]any{}); f.Code != contract.CodeSessionEnded || !strings.Contains(f.Message, "idle") {
		t.Fatalf("a call after the idle window answered %+v, want session_ended naming the idle window", f)
	}
	harness.Eventually(t, 30*time.Second, func() bool {
		return lineWith(cliOK(t, "sessions", "--all"), idle.id, "completed (idle)")
	}, "sessions --all never showed %s as completed (idle)", idle.id)
}

// An update id names one call: the same call resent under it is answered
// once, another call under it is refused, naming the id. Session options
// given to a session that runs and was made otherwise are refused too, and
// a flag after the positional arguments is named in one line.
func TestCallConflictsAreRefused(t *testing.T) {
	env.StartWorker(t, harness.WorkerOptions{})
	s := newSession(t, workflows.SessionConfig{})
	first := s.callWithID("turn-1", "run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/about.html"}))
	if again := s.callWithID("turn-1", "run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/about.html"})); string(again) != string(first) {
		t.Fatalf("the same call resent answered\n%s\nwant\n%s", again, first)
	}
	var f contract.Failure
	out := s.callWithID("turn-1", "run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/form.html"}))
	if err := json.Unmarshal(out, &f); err != nil || f.Code != contract.CodeRefused || !strings.Contains(f.Message, `"turn-1"`) {
		t.Fatalf("another call under a used update id answered %s, want refused naming turn-1", out)
	}
	if st := state(t, s.id); strings.Contains(st.URL, "/form.html") {
		t.Fatalf("the conflicting call ran: the page is %s", st.URL)
	}

	r := cli(t, "call", "--policy", "ask", s.id, "snapshot")
	if r.code != 1 || !strings.Contains(r.stdout, "refused") || !strings.Contains(r.stdout, "action_policy (asked ask, the session has allow)") {
		t.Fatalf("--policy ask on a running allow session: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	cliOK(t, "call", "--policy", "allow", s.id, "snapshot")

	// Answering a person's step on a session that does not exist is one
	// clear error, and nothing is sent.
	for _, args := range [][]string{{"approvals", "approve", "no-such-session-" + s.id, "1-1"}, {"handoff", "done", "no-such-session-" + s.id, "h-000000000000"}} {
		r := cli(t, args[0], args[1:]...)
		if r.code != 1 || !strings.Contains(r.stderr, `no session "no-such-session-`) || strings.Contains(r.stderr, "anyway") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Fatalf("%v: exit %d, stderr:\n%s", args, r.code, r.stderr)
		}
	}

	r = cli(t, "call", s.id, "snapshot", "{}", "--policy", "ask")
	if r.code != 1 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, "--policy comes after the positional arguments; flags go first") {
		t.Fatalf("a flag after the arguments: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}
