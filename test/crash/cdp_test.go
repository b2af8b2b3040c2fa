package crash

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/chrome"
	"github.com/durable-browser/durable-browser/providers"
	"github.com/durable-browser/durable-browser/providers/rentfake"
	"github.com/durable-browser/durable-browser/test/harness"
	"github.com/durable-browser/durable-browser/workflows"
)

// holdAfter is the victim's environment for the crashhooks build
// (worker/crashhook.go): once arm is called, the next successful return of
// activity is held on the worker, never handed to the server; file appears
// when it is.
func holdAfter(activity, file string) []string {
	return []string{"DURABLE_BROWSER_CRASH_HOLD_AFTER=" + activity, "DURABLE_BROWSER_CRASH_HOLD_FILE=" + file}
}

func arm(t *testing.T, file string) {
	t.Helper()
	if err := os.WriteFile(file+".armed", nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

// After create, before its result is recorded: the victim started Chrome
// and browser.create returned, but its result is held on the worker when
// the victim is cut. The create is custody class: retried, and a survivor
// opens the browser.
func cutAfterCreate(t *testing.T, sig string) {
	held := filepath.Join(t.TempDir(), "held")
	r := newRigWith(t, sig, false, workflows.SessionConfig{}, holdAfter(contract.ActivityCreate, held), nil)
	id := r.uid()
	args := actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/about.html"})
	arm(t, held)
	ch := r.async(id, "run", args)
	harness.Eventually(t, 90*time.Second, func() bool { _, err := os.Stat(held); return err == nil },
		"browser.create never returned on the victim; log:\n%s", tail(r.p.Stderr.String(), 30))
	r.takeChrome() // the browser the unrecorded create started
	r.survivor()
	r.cut()
	a := r.receive(ch)
	if a.code() != "ok" {
		t.Errorf("the first call should succeed on the survivor, answered %s %s", a.code(), a.raw)
	}
	r.finish(row{Cut: "after create, before its result is recorded", Hook: "test build of the victim (-tags crashhooks) holds browser.create's result after it returned, never sent; cut then"}, a, id, "run", args)
}

// After a run finished, before its result was recorded: the submit reached
// the site and the batch returned on the victim, whose result is held when
// it is cut. The run is effect class, never retried: it answers
// effect_unknown, and the site counted the POST once.
func cutAfterRun(t *testing.T, sig string) {
	held := filepath.Join(t.TempDir(), "held")
	r := newRigWith(t, sig, false, workflows.SessionConfig{}, holdAfter(contract.ActivityRun, held), nil)
	r.open("/")
	var snap contract.SnapshotResult
	r.must("snapshot", map[string]any{"mode": "interactive"}, &snap)
	email := "afterrun-" + uuid.NewString()[:8] + "@example.com"
	args := actions(
		map[string]any{"op": "fill", "id": refFor(t, snap.Text, `textbox "Email"`), "value": email},
		map[string]any{"op": "click", "id": refFor(t, snap.Text, `button "Create account"`)},
		map[string]any{"op": "wait", "text": "Thanks"},
	)
	r.survivor()
	id := r.uid()
	arm(t, held)
	ch := r.async(id, "run", args)
	harness.Eventually(t, 60*time.Second, func() bool { _, err := os.Stat(held); return err == nil },
		"browser.run never returned on the victim; log:\n%s", tail(r.p.Stderr.String(), 30))
	r.cut()
	a := r.receive(ch)
	f := a.failure()
	if a.code() != string(contract.CodeEffectUnknown) || f.Effect != contract.EffectPossiblyEffected {
		t.Errorf("run answered %s, want effect_unknown, possibly_effected", a.raw)
	}
	r.finish(row{Cut: "after a run finished, before its result was recorded", Hook: "test build of the victim (-tags crashhooks) holds browser.run's result after the submit's batch returned, never sent; cut then",
		Posts: posts("/submit", "email", email), WantPosts: 1, Note: "effect " + string(f.Effect)}, a, id, "run", args)
}

// A cdp session (a Chrome someone else runs, attached through its DevTools
// address) cut mid-run: the batch waits 10 s before it fills and submits;
// the victim is cut during the wait. The browser outlives the victim.
func cutCDPRun(t *testing.T, sig string) {
	browsers, err := rentfake.NewBrowsers(t.TempDir())
	if err != nil {
		t.Fatalf("this row needs Chromium: %v", err)
	}
	tag := "crash-cdp-" + uuid.NewString()[:8]
	ext, err := browsers.Create(context.Background(), providers.CreateOptions{Tag: tag})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = browsers.Release(context.Background(), tag) })
	cdpEnv := []string{"DURABLE_BROWSER_CDP_ENDPOINT=" + ext.CDPURL}
	r := newRigWith(t, sig, false, workflows.SessionConfig{Session: contract.SessionOptions{Provider: "cdp"}}, cdpEnv, cdpEnv)
	r.openOnly("/")
	var snap contract.SnapshotResult
	r.must("snapshot", map[string]any{"mode": "interactive"}, &snap)
	email := "cdp-" + uuid.NewString()[:8] + "@example.com"
	args := actions(
		map[string]any{"op": "wait", "ms": 10000},
		map[string]any{"op": "fill", "id": refFor(t, snap.Text, `textbox "Email"`), "value": email},
		map[string]any{"op": "click", "id": refFor(t, snap.Text, `button "Create account"`)},
	)
	r.survivor()
	id := r.uid()
	ch := r.async(id, "run", args)
	r.waitStarted(contract.ActivityRun)
	r.cut()
	a := r.receive(ch)
	f := a.failure()
	if a.code() != string(contract.CodeEffectUnknown) && a.code() != string(contract.CodeAborted) {
		t.Errorf("run answered %s %s, want effect_unknown or aborted", a.code(), a.raw)
	}
	if len(f.Sent) != 0 {
		t.Errorf("the answer lists requests sent: %+v", f.Sent)
	}
	rw := row{Cut: "cdp session: in a run, before anything is sent", Hook: "attached Chrome (--cdp-endpoint) outside the workers; batch [wait 10 s, fill, click]; cut once browser.run started, during the wait",
		Posts: posts("/submit", "email", email), WantPosts: 0, Note: "effect " + string(f.Effect)}
	r.finish(rw, a, id, "run", args)
	// The attached Chrome lives on; the closed session left no browser
	// context of its own in it.
	if n := contextsIn(t, ext.CDPURL); n != 0 {
		t.Errorf("the attached Chrome holds %d browser contexts after the session closed", n)
	}
}

// contextsIn counts the browser contexts (but the default one) of the
// Chrome at endpoint: a cdp session's own and its marker's.
func contextsIn(t *testing.T, endpoint string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ws, err := chrome.ResolveWS(ctx, endpoint)
	if err != nil {
		t.Fatalf("the attached Chrome did not outlive the row: %v", err)
	}
	c, err := chrome.Dial(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var res struct {
		BrowserContextIDs []string `json:"browserContextIds"`
	}
	if err := c.Call(ctx, "Target.getBrowserContexts", nil, &res); err != nil {
		t.Fatal(fmt.Errorf("Target.getBrowserContexts: %w", err))
	}
	return len(res.BrowserContextIDs)
}
