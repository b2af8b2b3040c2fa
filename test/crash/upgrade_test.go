package crash

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/demosite"
	"github.com/durable-browser/durable-browser/test/harness"
	"github.com/durable-browser/durable-browser/workflows"
)

// What build B (-tags upgradeb) changes, as the test sees it. The test
// binary is built without the tag, so these repeat the tagged files' values:
// activities/upgradeb.go's UpgradeBNote ends every snapshot B answers, and
// workflows/upgradeb.go's UpgradeBMemo is set (behind GetVersion) after a
// restore on B.
const (
	upgradeBNote = "(served by test build upgradeb)"
	upgradeBMemo = "upgrade_b_restored"
)

// upgradeSessions is how many signed-in sessions cross the upgrade.
const upgradeSessions = 3

// TestCrashUpgrade is a rolling upgrade with two builds of the worker:
// sessions signed in on the shop run on build A (today's worker); a worker
// of build B (-tags upgradeb: a workflow change behind GetVersion and a
// changed snapshot answer) is started; A is stopped with SIGTERM while every
// session keeps calling. Each session's next call answers session_restored
// on B at the same URL, still signed in, with its cart as the site counted
// it (no effect twice), every call answered (a resend with the same update
// id answers the same), and no Chrome of A left. See docs/deploy.md.
func TestCrashUpgrade(t *testing.T) {
	began := time.Now()
	binB, err := env.BuildWorker("crashhooks,upgradeb")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("measured: build B took %v", time.Since(began).Round(time.Second))

	key := stateKeyEnv()
	// A's stop grace outlasts a call, so the calls in flight at the SIGTERM
	// finish on A rather than being cut.
	a := env.StartWorkerProcess(t, harness.ProcessOptions{Env: []string{"DURABLE_BROWSER_STOP_GRACE=10s", key}})
	signinsBefore := posts("/shop/signin", "email", demosite.ShopEmail)
	// Each session searches its own spelling of "lamp": the cart's POST
	// carries it back, so the site's counts tell the sessions apart.
	queries := []string{"lamp", "Lamp", "LAMP"}
	var ts []*traffic
	for i := range upgradeSessions {
		r := &rig{t: t, sig: sigTerm, p: a, began: time.Now(),
			id: fmt.Sprintf("upgrade-%d-%s", i+1, uuid.NewString()[:8])}
		r.cfg = workflows.SessionConfig{SearchAttributes: true,
			Timeouts: workflows.Timeouts{ScheduleToStart: 3 * time.Second, Heartbeat: 5 * time.Second, Custody: 30 * time.Second}}
		t.Cleanup(func() { _ = env.Client.TerminateWorkflow(context.Background(), r.id, "", "upgrade row ended") })
		tr := &traffic{r: r, q: queries[i], done: make(chan struct{})}
		tr.url = signInQuery(r, tr.q)
		ts = append(ts, tr)
	}
	chrome := ts[0].r.browserPIDs()
	for _, tr := range ts {
		tr.r.chrome = chrome
	}

	b := env.StartWorkerProcess(t, harness.ProcessOptions{Bin: binB, Env: []string{key}})
	for _, tr := range ts {
		go tr.loop()
	}
	// Mid-traffic: every session has had calls answered on A, and a run is
	// under way on A when it is stopped.
	harness.Eventually(t, 90*time.Second, func() bool {
		for _, tr := range ts {
			if tr.answered() < 3 {
				return false
			}
		}
		for _, tr := range ts {
			if tr.r.started(contract.ActivityRun) {
				return true
			}
		}
		return false
	}, "the sessions' traffic did not get going on A")
	cutAt := time.Now()
	exited := a.Terminate()
	select {
	case <-exited:
	case <-time.After(90 * time.Second):
		t.Fatalf("A did not exit after SIGTERM:\n%s", tail(a.Stderr.String(), 30))
	}
	stopTook := time.Since(cutAt).Round(100 * time.Millisecond)
	t.Logf("measured: A exited %v after SIGTERM", stopTook)
	for _, tr := range ts {
		select {
		case <-tr.done:
		case <-time.After(3 * time.Minute):
			t.Fatalf("session %s: no answer within 3 minutes of the SIGTERM", tr.r.id)
		}
	}
	if n := posts("/shop/signin", "email", demosite.ShopEmail) - signinsBefore; n != upgradeSessions {
		t.Errorf("the shop counted %d sign-ins, want %d", n, upgradeSessions)
	}
	for i, tr := range ts {
		tr.check(b, cutAt, i+1, stopTook)
	}
	t.Logf("measured: the upgrade test took %v", time.Since(began).Round(time.Second))
}

// signInQuery signs r's session in on the shop and searches q; it answers
// the URL the search page was shown under.
func signInQuery(r *rig, q string) string {
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
	r.must("run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/shop/search?q=" + q}), &res)
	if !strings.Contains(res.Page.URL, "/shop/search") {
		r.t.Fatalf("signed-in search did not stay on the search page: %+v", res.Page)
	}
	return res.Page.URL
}

// traffic is one session calling without pause: a snapshot, then a run
// that adds the lamp to the cart (a POST) and loads the search again by GET,
// until a call answers other than ok.
type traffic struct {
	r    *rig
	q    string
	url  string
	adds int // runs answered ok, each one cart POST
	// unknown counts runs that answered effect_unknown: only a run in
	// flight when A stopped may, if the stop cut it short (its POST may or
	// may not have left).
	unknown int

	mu    sync.Mutex
	calls []sentCall
	err   error
	done  chan struct{}
}

type sentCall struct {
	id, tool       string
	args           any
	a              answer
	sent, answered time.Time
}

func (tr *traffic) answered() int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return len(tr.calls)
}

func (tr *traffic) do(tool string, args any) answer {
	c := sentCall{id: tr.r.uid(), tool: tool, args: args, sent: time.Now()}
	c.a = <-tr.r.send(c.id, tool, args, false)
	c.answered = time.Now()
	tr.mu.Lock()
	tr.calls = append(tr.calls, c)
	tr.mu.Unlock()
	return c.a
}

func (tr *traffic) loop() {
	defer close(tr.done)
	for range 200 {
		a := tr.do("snapshot", map[string]any{"mode": "interactive"})
		if a.code() != "ok" {
			return
		}
		var snap contract.SnapshotResult
		_ = json.Unmarshal(a.raw, &snap)
		ref := refIn(snap.Text, `button "Add Desk lamp to cart"`)
		if ref == "" {
			tr.err = fmt.Errorf("no add-to-cart button in the snapshot:\n%s", snap.Text)
			return
		}
		a = tr.do("run", actions(
			map[string]any{"op": "click", "id": ref},
			map[string]any{"op": "wait", "text": fmt.Sprintf("In your cart: %d", tr.adds+1)},
			map[string]any{"op": "goto", "url": env.Demo.URL() + "/shop/search?q=" + tr.q},
			map[string]any{"op": "wait", "ms": 800},
		))
		switch a.code() {
		case "ok":
			tr.adds++
		case string(contract.CodeEffectUnknown):
			tr.unknown++
		default:
			return
		}
	}
	tr.err = fmt.Errorf("200 rounds and no call answered other than ok")
}

// refIn is refFor that answers "" when want is missing (off the test's
// goroutine).
func refIn(text, want string) string {
	for _, line := range strings.Split(text, "\n") {
		if i, j := strings.Index(line, "["), strings.Index(line, "]"); strings.Contains(line, want) && i >= 0 && j > i {
			return line[i+1 : j]
		}
	}
	return ""
}

// check asserts what one session went through and records its row.
func (tr *traffic) check(b *harness.Process, cutAt time.Time, n int, stopTook time.Duration) {
	r := tr.r
	t := r.t
	t.Helper()
	if tr.err != nil {
		t.Errorf("session %d: %v", n, tr.err)
	}
	if len(tr.calls) == 0 {
		t.Fatalf("session %d made no call", n)
	}
	last := tr.calls[len(tr.calls)-1]
	inFlight := 0
	for i, c := range tr.calls {
		if c.sent.Before(cutAt) && c.answered.After(cutAt) {
			inFlight++
		}
		if i == len(tr.calls)-1 || c.a.code() == "ok" {
			continue
		}
		// The stop may cut short the run in flight at the SIGTERM, and
		// nothing else.
		if c.a.code() != string(contract.CodeEffectUnknown) || !c.sent.Before(cutAt) {
			t.Errorf("session %d: call %s (%s) answered %s before the restore", n, c.id, c.tool, c.a.raw)
		}
	}
	if first := tr.calls[0]; strings.Contains(string(first.a.raw), upgradeBNote) {
		t.Errorf("session %d: a snapshot on A carries build B's note: %s", n, first.a.raw)
	}
	if last.a.code() != string(contract.CodeSessionRestored) {
		// Why not: what A and B logged about this session's checkpoints.
		for name, p := range map[string]*harness.Process{"A": r.p, "B": b} {
			t.Logf("session %d: %s logged:\n%s", n, name, linesAbout(p.Stderr.String(), r.id, "checkpoint", "restore"))
		}
	}
	note := checkRestored(r, last.a, tr.url)
	st := r.state()
	onB := st.HostQueue == b.HostQueue()
	if !onB {
		t.Errorf("session %d: restored on %s, want build B's %s", n, st.HostQueue, b.HostQueue())
	}
	var snap contract.SnapshotResult
	r.must("snapshot", map[string]any{}, &snap)
	// The cart holds what the site counted, and that is every add that
	// answered ok and at most the ones whose effect is unknown besides.
	posted := posts("/shop/cart", "q", tr.q)
	want := tr.adds
	if tr.unknown > 0 && posted > tr.adds && posted <= tr.adds+tr.unknown {
		want = posted
	}
	cart := strings.Contains(snap.Text, fmt.Sprintf("In your cart: %d.", posted))
	if !cart {
		t.Errorf("session %d: the restored page does not show the %d adds the site counted:\n%s", n, posted, snap.Text)
	}
	toolB := strings.Contains(snap.Text, upgradeBNote)
	if !toolB {
		t.Errorf("session %d: the snapshot after the restore does not carry build B's note:\n%s", n, snap.Text)
	}
	d, err := env.Client.DescribeWorkflowExecution(context.Background(), r.id, "")
	memo := err == nil && d.GetWorkflowExecutionInfo().GetMemo().GetFields()[upgradeBMemo] != nil
	if !memo {
		t.Errorf("session %d: build B's workflow change (memo %s after the restore) is not in the session (describe error %v)", n, upgradeBMemo, err)
	}
	// No call lost: every call the session sent is answered the same again.
	same := 0
	for _, c := range tr.calls {
		again := r.call(c.id, c.tool, c.args)
		if again.err == nil && c.a.err == nil && string(again.raw) == string(c.a.raw) {
			same++
		} else {
			t.Errorf("session %d: resend of %s (%s) answered %s %v, first %s %v", n, c.id, c.tool, again.raw, again.err, c.a.raw, c.a.err)
		}
	}
	yes := map[bool]string{true: "yes", false: "NO"}
	waited := last.answered.Sub(last.sent).Round(100 * time.Millisecond)
	t.Logf("measured: session %d's restored call (%s) answered %v after it was sent", n, last.tool, waited)
	if tr.unknown > 0 {
		note += fmt.Sprintf(", %d run cut short by the stop answered effect_unknown", tr.unknown)
	}
	note += fmt.Sprintf(", on B %s, cart %d as counted %s, B's snapshot note %s, B's GetVersion memo %s; %d calls (%d in flight at the SIGTERM), all %d resent answered the same %s; A exited %v after SIGTERM; the restored call answered in %v",
		yes[onB], tr.adds, yes[cart], yes[toolB], yes[memo], len(tr.calls), inFlight, len(tr.calls), yes[same == len(tr.calls)], stopTook, waited)
	r.finish(row{Cut: fmt.Sprintf("rolling upgrade, build A to build B, mid-traffic (session %d of %d, signed in on the shop)", n, upgradeSessions),
		Hook:  "B (-tags upgradeb: GetVersion-guarded memo after a restore, snapshot note) started beside A; A SIGTERMed (stop grace 10 s) while every session loops snapshot, run [add to cart (POST), goto search (GET)] with a run under way on A; both hold the state key",
		Posts: posted, WantPosts: want, Note: note}, last.a, last.id, last.tool, last.args)
}

// linesAbout are the lines of a log that mention id and any of words.
func linesAbout(log, id string, words ...string) string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, id) {
			continue
		}
		for _, w := range words {
			if strings.Contains(line, w) {
				out = append(out, line)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}
