package crash

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"

	dbclient "github.com/durable-browser/durable-browser/client"
	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/test/harness"
	"github.com/durable-browser/durable-browser/workflows"
)

// Signals a row cuts a worker with.
const (
	sigKill = "SIGKILL"
	sigTerm = "SIGTERM"
)

// rig is one row's world: a worker process holding the session's browser
// (the victim), the session, and what the row observed.
type rig struct {
	t      *testing.T
	sig    string
	p      *harness.Process
	id     string
	cfg    workflows.SessionConfig
	chrome []int // the victim's browser processes, taken before the cut
	// held is the session's browser on the victim, taken with chrome: a
	// Chrome of its own, or a context of the victim's shared Chrome.
	held  *harness.SessionBrowser
	gate  string
	n     int // update ids handed out
	began time.Time
	// survivorEnv is added to the survivor's environment (a cdp row's
	// endpoint).
	survivorEnv []string
}

// stopGrace is the victim's --stop-grace: short, so SIGTERM rows are quick.
const stopGrace = "3s"

// newRig starts the victim worker process and names a session. gated puts
// a wrapper in front of Chromium that stops before launching it until the
// test opens the gate (never, for the victim): a create that is under way.
func newRig(t *testing.T, sig string, gated bool, cfg workflows.SessionConfig) *rig {
	t.Helper()
	return newRigWith(t, sig, gated, cfg, nil, nil)
}

// newRigWith is newRig with more environment for the victim and the
// survivor.
func newRigWith(t *testing.T, sig string, gated bool, cfg workflows.SessionConfig, victimEnv, survivorEnv []string) *rig {
	t.Helper()
	r := &rig{t: t, sig: sig, began: time.Now(), id: "crash-" + strings.NewReplacer("/", "-", " ", "-").Replace(t.Name()) + "-" + uuid.NewString()[:8], survivorEnv: survivorEnv}
	penv := append([]string{"DURABLE_BROWSER_STOP_GRACE=" + stopGrace}, victimEnv...)
	if gated {
		dir := t.TempDir()
		r.gate = filepath.Join(dir, "gate")
		script := filepath.Join(dir, "chromium")
		body := fmt.Sprintf(`#!/bin/sh
case "$*" in
*--user-data-dir*)
	touch %[1]q.started
	while [ ! -e %[1]q.open ]; do sleep 0.05; done;;
esac
exec /usr/bin/chromium "$@"
`, r.gate)
		if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		// No warm browsers: under --isolation context the pool would
		// launch the shared Chrome at the worker's start, through the
		// gate, and the create would take a context without launching.
		penv = append(penv, "CHROME_PATH="+script, "DURABLE_BROWSER_WARM_BROWSERS=0")
	}
	r.p = env.StartWorkerProcess(t, harness.ProcessOptions{Env: penv})
	cfg.SearchAttributes = true
	// Short bounds so a lost worker is noticed within seconds.
	cfg.Timeouts = workflows.Timeouts{ScheduleToStart: 3 * time.Second, Heartbeat: 5 * time.Second, Custody: 12 * time.Second}
	r.cfg = cfg
	// A row that passes closes its session in finish; one that failed
	// leaves it to be terminated here (its workers' cleanups kill any
	// browser left under their profile roots).
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = env.Client.TerminateWorkflow(ctx, r.id, "", "crash matrix row ended")
	})
	return r
}

// uid hands out a fresh update id.
func (r *rig) uid() string {
	r.n++
	return fmt.Sprintf("%s-u%d", r.id, r.n)
}

// answer is a call's outcome.
type answer struct {
	raw json.RawMessage
	err error
}

// code is what the agent sees: "ok", a failure code, or the client's error.
func (a answer) code() string {
	if a.err != nil {
		msg := a.err.Error()
		if len(msg) > 80 {
			msg = msg[:80] + "..."
		}
		return "client error: " + msg
	}
	var head struct {
		OK   bool   `json:"ok"`
		Code string `json:"code"`
	}
	if err := json.Unmarshal(a.raw, &head); err != nil {
		return "non-JSON answer"
	}
	if head.OK {
		return "ok"
	}
	return head.Code
}

func (a answer) failure() contract.Failure {
	var f contract.Failure
	_ = json.Unmarshal(a.raw, &f)
	return f
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// call sends a call with an update id and waits for its answer.
func (r *rig) call(updateID, tool string, args any) answer {
	return <-r.send(updateID, tool, args, false)
}

// async sends a call from another goroutine.
func (r *rig) async(updateID, tool string, args any) <-chan answer {
	return r.send(updateID, tool, args, false)
}

// send sends a call from another goroutine; newSession starts a new session
// under the id when the last one has ended (client.CallOptions.New).
func (r *rig) send(updateID, tool string, args any, newSession bool) <-chan answer {
	raw := mustJSON(r.t, args)
	ch := make(chan answer, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		out, err := dbclient.Call(ctx, env.Client, r.id, contract.ToolCall{Name: tool, Args: raw}, dbclient.CallOptions{Config: r.cfg, UpdateID: updateID, New: newSession})
		ch <- answer{out, err}
	}()
	return ch
}

// must calls and fails the row unless the answer is ok.
func (r *rig) must(tool string, args any, v any) {
	r.t.Helper()
	a := r.call(r.uid(), tool, args)
	if a.code() != "ok" {
		r.t.Fatalf("%s: %s %s", tool, a.code(), a.raw)
	}
	if v != nil {
		if err := json.Unmarshal(a.raw, v); err != nil {
			r.t.Fatal(err)
		}
	}
}

// receive waits for an answer.
func (r *rig) receive(ch <-chan answer) answer {
	r.t.Helper()
	select {
	case a := <-ch:
		return a
	case <-time.After(3 * time.Minute):
		r.t.Fatalf("no answer within 3 minutes; victim log:\n%s", tail(r.p.Stderr.String(), 30))
	}
	return answer{}
}

// open starts the session on the victim at a page of the demo site.
func (r *rig) open(page string) {
	r.t.Helper()
	r.openOnly(page)
	r.takeChrome()
}

// openOnly starts the session on the victim at a page.
func (r *rig) openOnly(page string) {
	r.t.Helper()
	r.must("run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + page}), nil)
	st := r.state()
	if st.HostQueue != r.p.HostQueue() {
		r.t.Fatalf("the session should live on the victim: state %+v, victim queue %s", st, r.p.HostQueue())
	}
}

// takeChrome notes the victim's browser processes and, once the session
// has recorded its tag (not while a create's result is held), the
// session's browser among them.
func (r *rig) takeChrome() {
	r.chrome = r.browserPIDs()
	if len(r.chrome) == 0 {
		r.t.Fatal("no browser process under the victim's profile root")
	}
	tag := r.state().Tag
	if tag == "" {
		return
	}
	b, err := harness.FindSessionBrowser(r.p.ProfileRoot, tag)
	if err != nil {
		r.t.Fatal(err)
	}
	r.held = &b
}

// browserPIDs are the processes under the victim's profile root but the
// victim itself: its browsers (or their launcher).
func (r *rig) browserPIDs() []int {
	var out []int
	for _, pid := range harness.PIDsUnder(r.p.ProfileRoot) {
		if pid != r.p.Cmd.Process.Pid {
			out = append(out, pid)
		}
	}
	return out
}

func (r *rig) state() *contract.SessionState {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := dbclient.State(ctx, env.Client, r.id)
	if err != nil {
		r.t.Fatal(err)
	}
	return st
}

// survivor starts a second worker process: the rest of the fleet, serving
// workflow tasks and new browsers once the victim is gone.
func (r *rig) survivor() {
	env.StartWorkerProcess(r.t, harness.ProcessOptions{Env: r.survivorEnv})
}

// started reports whether the session has a started, unfinished activity of
// this type: a call under way on a worker.
func (r *rig) started(activity string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := env.Client.DescribeWorkflowExecution(ctx, r.id, "")
	if err != nil {
		return false
	}
	for _, pa := range d.GetPendingActivities() {
		if pa.GetActivityType().GetName() == activity && pa.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED {
			return true
		}
	}
	return false
}

func (r *rig) waitStarted(activity string) {
	r.t.Helper()
	harness.Eventually(r.t, 30*time.Second, func() bool { return r.started(activity) },
		"%s never started; victim log:\n%s", activity, tail(r.p.Stderr.String(), 30))
}

// cutWhileS3Frozen sends a call with the S3 server frozen (SIGSTOP), so
// that its activity, once started on the victim, cannot finish; then cuts
// the victim and returns the answer. Under SIGKILL S3 is thawed after the
// cut; under SIGTERM right after the signal, so the activity may finish
// within the stop grace.
func (r *rig) cutWhileS3Frozen(id, tool string, args any, activity string) answer {
	r.t.Helper()
	s3 := env.S3.PID()
	if err := syscall.Kill(s3, syscall.SIGSTOP); err != nil {
		r.t.Fatal(err)
	}
	thawed := false
	thaw := func() {
		if !thawed {
			_ = syscall.Kill(s3, syscall.SIGCONT)
			thawed = true
		}
	}
	defer thaw()
	ch := r.async(id, tool, args)
	r.waitStarted(activity)
	r.cutThen(thaw)
	return r.receive(ch)
}

// cut kills or stops the victim and waits for it to exit.
func (r *rig) cut() {
	r.t.Helper()
	r.cutThen(func() {})
}

// cutThen is cut, calling then once the signal is sent: after the victim
// is gone under SIGKILL, before waiting for it to exit under SIGTERM.
func (r *rig) cutThen(then func()) {
	r.t.Helper()
	if r.sig == sigKill {
		r.p.Kill()
		then()
		return
	}
	exited := r.p.Terminate()
	then()
	select {
	case <-exited:
	case <-time.After(90 * time.Second):
		r.t.Fatalf("the victim did not exit after SIGTERM:\n%s", tail(r.p.Stderr.String(), 30))
	}
}

// row finishes a row: the resend with the same update id, the session used
// again, and no Chrome of the victim left; then records it.
type row struct {
	Cut, Signal, Hook string
	Code              string
	Posts, WantPosts  int
	Resend, After     string
	ChromeLeft        int
	Note              string
	Took              time.Duration
}

func (r *rig) finish(rw row, first answer, updateID, tool string, args any) {
	r.t.Helper()
	rw.Signal = r.sig
	rw.Code = first.code()
	// The caller lost the answer and sends the call again, same update id.
	again := r.call(updateID, tool, args)
	switch {
	case again.err == nil && first.err == nil && string(again.raw) == string(first.raw):
		rw.Resend = "same answer"
	case first.err != nil && again.err == nil:
		// The first answer never reached the caller: the resend is how it
		// gets one, and the POST count shows nothing ran twice.
		rw.Resend = "first answer lost; resend answered " + again.code()
	default:
		rw.Resend = "differs: " + again.code()
		r.t.Errorf("resend with update id %s answered %s %v\nfirst answer %s %v", updateID, again.raw, again.err, first.raw, first.err)
	}
	// The session is usable: a snapshot succeeds, possibly after one
	// session_replaced, or, once the session ended (a release), after
	// session_ended and a new session asked for on purpose.
	var seen []string
	newSession := false
	for i := 0; i < 3; i++ {
		a := <-r.send(r.uid(), "snapshot", map[string]any{}, newSession)
		code := a.code()
		if newSession {
			code += " (new session)"
		}
		seen = append(seen, code)
		if a.code() == "ok" {
			break
		}
		newSession = a.code() == string(contract.CodeSessionEnded)
	}
	rw.After = "snapshot: " + strings.Join(seen, ", then ")
	if !strings.HasPrefix(seen[len(seen)-1], "ok") {
		r.t.Errorf("the session is not usable after the cut: %v", seen)
	}
	// The session ends cleanly when closed.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := env.Client.SignalWorkflow(ctx, r.id, "", contract.SignalClose, nil); err != nil {
		r.t.Errorf("close: %v", err)
	} else if err := env.Client.GetWorkflow(ctx, r.id, "").Get(ctx, nil); err != nil {
		r.t.Errorf("the session did not end cleanly after close: %v\n%s", err, r.describe())
	}
	// No Chrome of the victim is left, by pid (for a victim that lives on,
	// after the close released its browser). A victim that lives on under
	// --isolation context keeps its shared Chrome for its next sessions:
	// what the close let go of there is the session's context.
	shared := ""
	if r.held != nil && r.held.Shared && alive(r.p.Cmd.Process.Pid) {
		shared = r.held.Profile
		harness.Eventually(r.t, 20*time.Second, func() bool { return !r.held.Running() },
			"the closed session's browser outlived it on the live victim: %v", r.held)
	}
	deadline := time.Now().Add(20 * time.Second)
	var leftWhich []string
	for {
		left := 0
		var which []string
		for _, pid := range r.chrome {
			// Still running and still the victim's (not a reused pid).
			if cmd := cmdline(pid); alive(pid) && strings.Contains(cmd, r.p.ProfileRoot) && (shared == "" || !strings.Contains(cmd, shared)) {
				left++
				which = append(which, fmt.Sprintf("%d %.200s", pid, cmd))
			}
		}
		leftWhich = which
		rw.ChromeLeft = left
		if left == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if rw.ChromeLeft != 0 {
		r.t.Errorf("%d Chrome processes of the victim outlived it:\n%s", rw.ChromeLeft, strings.Join(leftWhich, "\n"))
	}
	if rw.Posts != rw.WantPosts {
		r.t.Errorf("the site counted %d POSTs, want %d", rw.Posts, rw.WantPosts)
	}
	rw.Took = time.Since(r.began).Round(time.Second)
	r.t.Logf("row: %+v", rw)
	record(rw)
}

func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err == nil && !strings.Contains(string(stat), ") Z ")
}

func cmdline(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.ReplaceAll(string(b), "\x00", " ")
}

func actions(a ...map[string]any) map[string]any { return map[string]any{"actions": a} }

// refFor finds the ref of the line holding want in a snapshot.
func refFor(t *testing.T, text, want string) string {
	t.Helper()
	id, ok := harness.Ref(text, want)
	if !ok {
		t.Fatalf("no %q in snapshot:\n%s", want, text)
	}
	return id
}

// posts counts the site's submissions to path whose field has value.
func posts(path, field, value string) int {
	n := 0
	for _, s := range env.Demo.Submissions() {
		if s.Path == path && (field == "" || s.Fields[field] == value) {
			n++
		}
	}
	return n
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// describe is the session's current run for a failure message: its status,
// pending activities and the types of its history events.
func (r *rig) describe() string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var b strings.Builder
	d, err := env.Client.DescribeWorkflowExecution(ctx, r.id, "")
	if err != nil {
		return "describe: " + err.Error()
	}
	fmt.Fprintf(&b, "run %s status %s\n", d.GetWorkflowExecutionInfo().GetExecution().GetRunId(), d.GetWorkflowExecutionInfo().GetStatus())
	for _, pa := range d.GetPendingActivities() {
		fmt.Fprintf(&b, "pending %s %s attempt %d last failure %v\n", pa.GetActivityType().GetName(), pa.GetState(), pa.GetAttempt(), pa.GetLastFailure().GetMessage())
	}
	it := env.Client.GetWorkflowHistory(ctx, r.id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			break
		}
		fmt.Fprintf(&b, "%d %s", ev.GetEventId(), ev.GetEventType())
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			fmt.Fprintf(&b, " %s on %s", a.GetActivityType().GetName(), a.GetTaskQueue().GetName())
		}
		if a := ev.GetWorkflowExecutionSignaledEventAttributes(); a != nil {
			fmt.Fprintf(&b, " %s", a.GetSignalName())
		}
		if f := ev.GetActivityTaskTimedOutEventAttributes().GetFailure(); f != nil {
			fmt.Fprintf(&b, " %s", f.GetMessage())
		}
		b.WriteString("\n")
	}
	return b.String()
}
