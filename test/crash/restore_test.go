package crash

import (
	"crypto/rand"
	"encoding/base64"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/demosite"
	"github.com/durable-browser/durable-browser/test/harness"
	"github.com/durable-browser/durable-browser/workflows"
)

// TestCrashRestore: a session signed in on the demo shop loses its host
// (the worker SIGKILLed or SIGTERMed, or its Chrome killed under a live
// worker); its next call answers session_restored on a new browser made
// from the last checkpoint, at the same URL and still signed in (the shop
// checks its cookie), with nothing sent twice. See docs/restore.md.
func TestCrashRestore(t *testing.T) {
	for _, sig := range []string{sigKill, sigTerm} {
		t.Run("lost-worker/"+sig, func(t *testing.T) { restoreAfterCut(t, sig) })
	}
	t.Run("chrome-crash", restoreAfterChromeCrash)
}

// stateKeyEnv is a fresh state key both workers share: checkpoints are
// sealed with it.
func stateKeyEnv() string {
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return "DURABLE_BROWSER_STATE_KEY=" + base64.StdEncoding.EncodeToString(k)
}

// newRestoreRig is newRig with both workers holding the state key.
func newRestoreRig(t *testing.T, sig string) (*rig, string) {
	t.Helper()
	key := stateKeyEnv()
	r := &rig{t: t, sig: sig, began: time.Now(), id: "restore-" + strings.NewReplacer("/", "-", " ", "-").Replace(t.Name()) + "-" + uuid.NewString()[:8]}
	r.p = env.StartWorkerProcess(t, harness.ProcessOptions{Env: []string{"DURABLE_BROWSER_STOP_GRACE=" + stopGrace, key}})
	r.cfg = workflows.SessionConfig{SearchAttributes: true,
		Timeouts: workflows.Timeouts{ScheduleToStart: 3 * time.Second, Heartbeat: 5 * time.Second, Custody: 30 * time.Second}}
	t.Cleanup(func() { _ = env.Client.TerminateWorkflow(t.Context(), r.id, "", "restore row ended") })
	return r, key
}

// signIn signs the session in on the shop and searches; it answers the
// URL the search page was shown under.
func signIn(r *rig) string {
	r.t.Helper()
	r.open("/shop/")
	var snap contract.SnapshotResult
	r.must("snapshot", map[string]any{"mode": "interactive"}, &snap)
	var res contract.RunResult
	r.must("run", actions(
		map[string]any{"op": "fill", "id": refFor(r.t, snap.Text, `textbox "Email"`), "value": demosite.ShopEmail},
		map[string]any{"op": "fill", "id": refFor(r.t, snap.Text, `textbox "Password"`), "value": demosite.ShopPassword},
		map[string]any{"op": "click", "id": refFor(r.t, snap.Text, `button "Sign in"`)},
		map[string]any{"op": "wait", "text": "Search"},
	), nil)
	r.must("run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/shop/search?q=lamp"}), &res)
	if !strings.Contains(res.Page.URL, "/shop/search") {
		r.t.Fatalf("signed-in search did not stay on the search page: %+v", res.Page)
	}
	r.takeChrome()
	return res.Page.URL
}

// checkRestored asserts the answer is session_restored at url, and that the
// restored browser is still signed in.
func checkRestored(r *rig, a answer, url string) string {
	r.t.Helper()
	f := a.failure()
	if a.code() != string(contract.CodeSessionRestored) || f.Restored == nil {
		r.t.Fatalf("the call after the cut answered %s, want session_restored", a.raw)
	}
	same := len(f.Restored.Tabs) > 0 && f.Restored.Tabs[0].URL == url && f.Restored.Tabs[0].Reason == ""
	if !same {
		r.t.Errorf("restored tabs %+v, want the first at %s", f.Restored.Tabs, url)
	}
	var snap contract.SnapshotResult
	r.must("snapshot", map[string]any{}, &snap)
	// The shop shows the search (and its results, by the query) only to a
	// browser whose sign-in cookie it knows.
	signedIn := strings.Contains(snap.Text, "Signed in as") && strings.Contains(snap.Text, "results for")
	if !signedIn {
		r.t.Errorf("the restored browser is not signed in: at %s\n%s", snap.Page.URL, snap.Text)
	}
	yes := map[bool]string{true: "yes", false: "NO"}
	return "same URL " + yes[same] + ", signed in " + yes[signedIn] + ", cookies " + strconv.Itoa(f.Restored.Cookies)
}

// The worker holding a signed-in session is cut; the next call restores
// on the survivor.
func restoreAfterCut(t *testing.T, sig string) {
	r, key := newRestoreRig(t, sig)
	before := posts("/shop/signin", "email", demosite.ShopEmail)
	url := signIn(r)
	env.StartWorkerProcess(t, harness.ProcessOptions{Env: []string{key}})
	r.cut()
	id := r.uid()
	args := map[string]any{}
	a := r.call(id, "snapshot", args)
	note := checkRestored(r, a, url)
	r.finish(row{Cut: "signed in on a loopback shop, then the worker is lost (restore)", Hook: "sign in (POST, then GET /shop/search), search by GET; the victim is cut between calls; both workers hold the state key",
		Posts: posts("/shop/signin", "email", demosite.ShopEmail) - before, WantPosts: 1, Note: note}, a, id, "snapshot", args)
	env.RecordHistory(t, r.id, "restore-lost-worker-"+strings.ToLower(sig))
}

// Chrome is killed under a live worker; the next call restores there.
func restoreAfterChromeCrash(t *testing.T) {
	r, _ := newRestoreRig(t, "")
	before := posts("/shop/signin", "email", demosite.ShopEmail)
	url := signIn(r)
	for _, pid := range r.chrome {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	harness.Eventually(t, 30*time.Second, func() bool {
		for _, pid := range r.chrome {
			if alive(pid) {
				return false
			}
		}
		return true
	}, "the browser did not die")
	r.sig = "Chrome SIGKILL"
	id := r.uid()
	args := map[string]any{}
	a := r.call(id, "snapshot", args)
	note := checkRestored(r, a, url)
	r.finish(row{Cut: "signed in on a loopback shop, then Chrome crashes (restore)", Hook: "every process of the session's Chrome SIGKILLed between calls; the worker lives",
		Posts: posts("/shop/signin", "email", demosite.ShopEmail) - before, WantPosts: 1, Note: note}, a, id, "snapshot", args)
	env.RecordHistory(t, r.id, "restore-chrome-crash")
}
