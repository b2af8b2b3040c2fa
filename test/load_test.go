package test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	dbclient "github.com/durable-browser/durable-browser/client"
	"github.com/google/uuid"
	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/proccpu"
	"github.com/durable-browser/durable-browser/test/harness"
)

// Load: N sessions make M tool calls each, concurrently, through one worker
// process, cycling through what an agent does on the demo site: goto,
// snapshot, fill+click submit (a unique email per call), screenshot,
// browser_read. Every call carries its own update id. Afterwards the
// invariants are checked: every submit reached the site exactly once (at most
// once for one that answered effect_unknown), no call was lost, and every
// worker and Chrome process is gone. docs/reliability.md#load has the figures.

// The tools of the mix, in the order a cycle sends them.
const (
	loadGoto       = "goto"
	loadSnapshot   = "snapshot"
	loadSubmit     = "submit"
	loadScreenshot = "screenshot"
	loadRead       = "browser_read"
	// loadOpen labels the latency of a session's first call, a goto that
	// starts the session workflow and its Chrome.
	loadOpen = "goto (first: starts Chrome)"
)

var loadTools = []string{loadGoto, loadSnapshot, loadSubmit, loadScreenshot, loadRead}

type loadOptions struct {
	Sessions, Calls int
	// Kill starts a second worker process once half the calls are answered
	// and every session has its browser, then kills the first with SIGKILL.
	Kill bool
	// Starved: the host is expected to be CPU-starved (many sessions
	// starting at once on a shared machine). A call may then answer
	// timeout, or a run effect_unknown (each checked against the site),
	// but never aborted nor browser_unavailable: the worker took it.
	Starved bool
	// Checkpoints gives the workers a state key, so every session keeps a
	// checkpoint after each call that can change it (as a production worker
	// with a key does), and the run reports what that cost; a killed
	// worker's sessions then answer session_restored.
	Checkpoints bool
}

// loadCall is one call the driver sent: a unique update id, its tool and
// what came back.
type loadCall struct {
	session  int
	updateID string
	tool     string
	email    string // submits only
	elapsed  time.Duration
	ok       bool
	code     contract.Code
	err      error  // transport error: the call got no answer
	answer   string // the raw answer
	args     json.RawMessage
	toolName string // the tool as sent: run, snapshot, ...
	opens    bool   // the session's first call: it starts the session and its browser
	began    time.Time
	resend   string // after effect_unknown: the answer to the same update id re-sent at once
}

type memSample struct {
	chromeRSS, chromePSS int64 // KiB, summed over every session's process group
	perSessionPSS        []int64
	perSessionRSS        []int64
}

type loadResult struct {
	opts     loadOptions
	calls    []*loadCall
	wall     time.Duration
	killedAt int // calls answered when the first worker was killed
	// peaks over the run, KiB
	workerPeakRSS, workerPeakPSS map[string]int64 // by worker name (A, B)
	chromePeakPSS, chromePeakRSS int64
	final                        memSample // taken after the last call, before closing
	// startWaits are the activities' schedule-to-start waits, read from the
	// sessions' histories, by queue kind ("host", "shared"): what the
	// ScheduleToStart bounds must stay above on a loaded host.
	startWaits map[string][]time.Duration
	// firstSteps is where the sessions' first calls' time went (one-worker
	// runs only).
	firstSteps string
	// checkpoints is what keeping the sessions' checkpoints cost, read from
	// the workers' logs (Checkpoints runs only).
	checkpoints checkpointCost
	problems    []string
}

func (r *loadResult) problem(format string, args ...any) {
	r.problems = append(r.problems, fmt.Sprintf(format, args...))
}

// runLoad drives the load and checks the invariants; it fails t (after
// cleaning up) when one does not hold.
func runLoad(t testing.TB, o loadOptions) *loadResult {
	t.Helper()
	res := &loadResult{opts: o, workerPeakRSS: map[string]int64{}, workerPeakPSS: map[string]int64{}}
	run := uuid.NewString()[:8]
	rootA, err := os.MkdirTemp(env.Dir, "load-a-")
	if err != nil {
		t.Fatal(err)
	}
	// The worker's --max-browsers defaults to 2 per core (4 here): lift it
	// to the session count, or the sessions past it never get a browser.
	bound := []string{fmt.Sprintf("DURABLE_BROWSER_MAX_BROWSERS=%d", o.Sessions)}
	if o.Checkpoints {
		bound = append(bound, "DURABLE_BROWSER_STATE_KEY="+loadStateKey)
	}
	a := env.StartWorkerProcess(t, harness.ProcessOptions{ProfileRoot: rootA, Env: bound})
	waitWarm(t, a)
	workers := &workerSet{procs: map[string]*harness.Process{"A": a}, roots: []string{rootA}}

	ids := make([]string, o.Sessions)
	for i := range ids {
		ids[i] = fmt.Sprintf("load-%s-s%02d", run, i)
	}

	// Progress the coordinator (kill) and the sampler watch.
	var mu sync.Mutex
	answered, started := 0, 0
	// paused holds new calls at half the calls while B is still starting,
	// so the kill lands with calls left to make on A.
	paused, bReady := false, false
	progress := sync.NewCond(&mu)

	stopSampler := make(chan struct{})
	samplerDone := make(chan struct{})
	go func() {
		defer close(samplerDone)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			s := workers.sample()
			mu.Lock()
			for name, v := range s.rss {
				res.workerPeakRSS[name] = max(res.workerPeakRSS[name], v)
			}
			for name, v := range s.pss {
				res.workerPeakPSS[name] = max(res.workerPeakPSS[name], v)
			}
			res.chromePeakPSS = max(res.chromePeakPSS, s.chrome.chromePSS)
			res.chromePeakRSS = max(res.chromePeakRSS, s.chrome.chromeRSS)
			mu.Unlock()
			select {
			case <-stopSampler:
				return
			case <-tick.C:
			}
		}
	}()

	killDone := make(chan struct{})
	if o.Kill {
		go func() {
			defer close(killDone)
			// B comes up once every session has its browser on A, so
			// none is created on B before the kill.
			mu.Lock()
			for started < o.Sessions {
				progress.Wait()
			}
			mu.Unlock()
			rootB, err := os.MkdirTemp(env.Dir, "load-b-")
			if err != nil {
				panic(err)
			}
			b := env.StartWorkerProcess(t, harness.ProcessOptions{ProfileRoot: rootB, Env: bound})
			workers.add("B", b, rootB)
			mu.Lock()
			bReady = true
			for answered < o.Sessions*o.Calls/2 {
				progress.Wait()
			}
			res.killedAt = answered
			paused = false
			progress.Broadcast()
			mu.Unlock()
			workers.kill("A")
		}()
	} else {
		close(killDone)
	}

	t0 := time.Now()
	var wg sync.WaitGroup
	perSession := make([][]*loadCall, o.Sessions)
	for k := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			first := true
			perSession[k] = driveSession(loadTarget{env.Client, env.Demo.URL()}, k, ids[k], run, o.Calls, func() {
				mu.Lock()
				for paused {
					progress.Wait()
				}
				mu.Unlock()
			}, func(c *loadCall) {
				mu.Lock()
				answered++
				if o.Kill && !bReady && answered == o.Sessions*o.Calls/2 {
					paused = true
				}
				if first {
					started++
					first = false
				}
				progress.Broadcast()
				mu.Unlock()
			})
		}()
	}
	wg.Wait()
	res.wall = time.Since(t0)
	<-killDone
	for _, cs := range perSession {
		res.calls = append(res.calls, cs...)
	}
	close(stopSampler)
	<-samplerDone
	res.final = workers.sample().chrome
	if o.Checkpoints {
		for _, p := range workers.procs {
			res.checkpoints.add(p.Stderr.String())
		}
		if res.checkpoints.calls() == 0 {
			res.problem("the workers have a state key but logged no checkpoint")
		}
	}

	// Every session ran on the first worker until the kill, and only there
	// when nothing was killed.
	if !o.Kill {
		for _, id := range ids {
			st, err := dbclient.State(context.Background(), env.Client, id)
			if err != nil {
				res.problem("%s: state: %v", id, err)
			} else if st.HostQueue != a.HostQueue() {
				res.problem("%s ran on %q, not on the one worker %q", id, st.HostQueue, a.HostQueue())
			}
		}
	}

	res.checkAnswers()
	res.checkResends(ids)
	res.checkSubmissions(run)

	// Close every session, stop the workers, and see that nothing is left.
	for _, id := range ids {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_ = env.Client.SignalWorkflow(ctx, id, "", contract.SignalClose, nil)
		if err := env.Client.GetWorkflow(ctx, id, "").Get(ctx, nil); err != nil {
			res.problem("%s did not end after close: %v", id, err)
		}
		cancel()
	}
	res.startWaits = startWaits(ids)
	if !o.Kill {
		res.firstSteps = firstCallSteps(ids, res.calls, a.Stderr.String())
	}
	for _, p := range workers.stopAll() {
		res.problem("%s", p)
	}
	for _, root := range workers.roots {
		deadline := time.Now().Add(time.Minute)
		for len(harness.PIDsUnder(root)) > 0 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if left := harness.PIDsUnder(root); len(left) > 0 {
			res.problem("processes of %s outlived the test: %v", root, left)
			harness.KillUnder(root)
		}
	}
	for _, p := range res.problems {
		t.Error(p)
	}
	if len(res.problems) > 0 {
		// What the workers said about cancelled or failed calls: the cause
		// a wrong answer came from.
		for name, p := range workers.procs {
			for _, line := range strings.Split(p.Stderr.String(), "\n") {
				if strings.Contains(line, "Heartbeat") || strings.Contains(line, "cancel") || strings.Contains(line, `"level":"error"`) || strings.Contains(line, `"level":"warn"`) {
					t.Logf("worker %s: %s", name, line)
				}
			}
		}
	}
	return res
}

// waitWarm waits until a worker process that keeps warm browsers (under
// context isolation by default: --warm-browsers -1) has them all ready, as
// a worker running before a burst of creates has.
func waitWarm(t testing.TB, p *harness.Process) {
	t.Helper()
	harness.Eventually(t, 2*time.Minute, func() bool {
		out := p.Stderr.String()
		if !strings.Contains(out, `"isolation":"context"`) && strings.Contains(out, "worker polling") {
			return true // process isolation: no warm browsers unless set
		}
		return strings.Contains(out, "warm browsers all ready")
	}, "the worker's warm browsers did not all start:\n%s", p.Stderr)
}

// loadTarget is where a load's calls go: a Temporal client and the demo
// site's address.
type loadTarget struct {
	client client.Client
	site   string
}

// driveSession sends calls calls on session id, one at a time, and returns
// them. The next tool follows from the last answer: a cycle goes goto,
// snapshot, submit, screenshot, browser_read; a replaced session starts the
// cycle again with goto; after effect_unknown the same update id is re-sent
// (it must answer the same) and the cycle goes on with a snapshot.
func driveSession(tg loadTarget, k int, id, run string, calls int, gate func(), answered func(*loadCall)) []*loadCall {
	var out []*loadCall
	next := loadGoto
	var email, submit string // refs from this cycle's snapshot
	for i := 0; i < calls; i++ {
		gate()
		c := &loadCall{session: k, updateID: fmt.Sprintf("%s-c%03d", id, i), tool: next, opens: i == 0}
		var args any
		switch next {
		case loadGoto:
			// A query unique to the call keeps every run distinct, as an
			// agent's calls are: no guard sees a repeat.
			c.toolName, args = "run", actions(map[string]any{"op": "goto", "url": fmt.Sprintf("%s/?visit=%s-%d", tg.site, id, i)})
		case loadSnapshot:
			c.toolName, args = "snapshot", map[string]any{"mode": "interactive"}
		case loadSubmit:
			c.email = fmt.Sprintf("%s-s%02d-c%03d@load.example", run, k, i)
			c.toolName, args = "run", actions(
				map[string]any{"op": "fill", "id": email, "value": c.email},
				map[string]any{"op": "click", "id": submit},
				map[string]any{"op": "wait", "text": "Thanks"},
			)
		case loadScreenshot:
			c.toolName, args = "screenshot", map[string]any{}
		case loadRead:
			c.toolName, args = "browser_read", map[string]any{}
		}
		c.args, _ = json.Marshal(args)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		t0 := time.Now()
		c.began = t0
		raw, err := dbclient.Call(ctx, tg.client, id, contract.ToolCall{Name: c.toolName, Args: c.args}, dbclient.CallOptions{UpdateID: c.updateID})
		c.elapsed = time.Since(t0)
		cancel()
		c.err, c.answer = err, string(raw)
		if err == nil {
			var head struct {
				OK   bool          `json:"ok"`
				Code contract.Code `json:"code"`
				Text string        `json:"text"`
			}
			if jerr := json.Unmarshal(raw, &head); jerr != nil {
				c.err = fmt.Errorf("answer is not JSON: %q", raw)
			} else {
				c.ok, c.code = head.OK, head.Code
				if c.tool == loadSnapshot && c.ok {
					email, submit = findRef(head.Text, `textbox "Email"`), findRef(head.Text, `button "Create account"`)
				}
			}
		}
		if c.code == contract.CodeEffectUnknown {
			// The same update id again: the recorded answer, nothing run.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			again, err := dbclient.Call(ctx, tg.client, id, contract.ToolCall{Name: c.toolName, Args: c.args}, dbclient.CallOptions{UpdateID: c.updateID})
			cancel()
			c.resend = string(again)
			if err != nil {
				c.resend = "error: " + err.Error()
			}
		}
		out = append(out, c)
		answered(c)

		switch {
		case c.ok && c.tool == loadSnapshot:
			next = loadSubmit
			if email == "" || submit == "" {
				next = loadGoto
			}
		case c.ok:
			next = loadTools[(slices.Index(loadTools, c.tool)+1)%len(loadTools)]
		case c.code == contract.CodeEffectUnknown:
			next = loadSnapshot
		default:
			next = loadGoto
		}
		if !c.ok || c.tool != loadSnapshot {
			email, submit = "", "" // ids belong to the latest snapshot only
		}
	}
	return out
}

// findRef returns the id on the first snapshot line holding what, or "".
func findRef(text, what string) string {
	if id, ok := harness.Ref(text, what); ok {
		return "[" + id + "]"
	}
	return ""
}

// checkAnswers: every call was answered; ok, or (only when a worker was
// killed) session_replaced for any tool or effect_unknown for a run, or
// (only on a starved host) timeout or effect_unknown for a run.
func (r *loadResult) checkAnswers() {
	for _, c := range r.calls {
		switch {
		case c.err != nil:
			r.problem("lost call %s (%s): %v", c.updateID, c.tool, c.err)
		case c.ok:
		case r.opts.Kill && (c.code == contract.CodeSessionReplaced || c.code == contract.CodeSessionRestored):
		case r.opts.Starved && c.code == contract.CodeTimeout:
		case (r.opts.Kill || r.opts.Starved) && c.code == contract.CodeEffectUnknown && c.toolName == "run":
			if c.resend != c.answer {
				r.problem("effect_unknown %s re-sent with its update id answered\n%s\nnot the recorded\n%s", c.updateID, c.resend, c.answer)
			}
		default:
			r.problem("call %s (%s) failed: %s", c.updateID, c.tool, c.answer)
		}
	}
}

// checkResends re-sends every run (goto and submit) with its update id and
// arguments: the answer must be the first one, byte for byte, and nothing
// may run again (checkSubmissions counts the site afterwards).
func (r *loadResult) checkResends(ids []string) {
	for _, c := range r.calls {
		if c.err != nil || c.toolName != "run" {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		raw, err := dbclient.Call(ctx, env.Client, ids[c.session], contract.ToolCall{Name: c.toolName, Args: c.args}, dbclient.CallOptions{UpdateID: c.updateID})
		cancel()
		if err != nil {
			r.problem("resend of %s: %v", c.updateID, err)
		} else if string(raw) != c.answer {
			r.problem("resend of %s (%s) answered\n%s\nnot the recorded\n%s", c.updateID, c.tool, raw, c.answer)
		}
	}
}

// checkSubmissions matches the site's submissions of this run against the
// submits sent: exactly once for an ok submit, at most once for an
// effect_unknown one, never for one that failed before acting, and nothing
// the driver did not send.
func (r *loadResult) checkSubmissions(run string) {
	seen := map[string]int{}
	for _, s := range env.Demo.Submissions() {
		if e := s.Fields["email"]; strings.HasPrefix(e, run+"-") {
			seen[e]++
		}
	}
	sent := map[string]bool{}
	for _, c := range r.calls {
		if c.tool != loadSubmit {
			continue
		}
		sent[c.email] = true
		n := seen[c.email]
		switch {
		case c.ok && n != 1:
			r.problem("submit %s answered ok and reached the site %d times, want exactly 1", c.updateID, n)
		case c.code == contract.CodeEffectUnknown && n > 1:
			r.problem("submit %s answered effect_unknown and reached the site %d times, want at most 1", c.updateID, n)
		case !c.ok && c.code != contract.CodeEffectUnknown && n != 0:
			r.problem("submit %s answered %s (nothing ran) but reached the site %d times", c.updateID, c.code, n)
		}
	}
	for e, n := range seen {
		if !sent[e] {
			r.problem("the site received %q %d times, which no call sent", e, n)
		}
	}
}

// workerSet holds the worker processes of a load run by name.
type workerSet struct {
	mu     sync.Mutex
	procs  map[string]*harness.Process
	roots  []string
	killed map[string]bool
}

func (w *workerSet) add(name string, p *harness.Process, root string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.procs[name] = p
	w.roots = append(w.roots, root)
}

func (w *workerSet) kill(name string) {
	w.mu.Lock()
	p := w.procs[name]
	if w.killed == nil {
		w.killed = map[string]bool{}
	}
	w.killed[name] = true
	w.mu.Unlock()
	p.Kill()
}

type workersSample struct {
	rss, pss map[string]int64
	chrome   memSample
}

// sample reads the live workers' memory and every live session browser's
// process group (a browser leads its own group; its record names its pid).
func (w *workerSet) sample() workersSample {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := workersSample{rss: map[string]int64{}, pss: map[string]int64{}}
	var leaders []int
	for name, p := range w.procs {
		if w.killed[name] {
			continue
		}
		if m, ok := readMem(p.Cmd.Process.Pid); ok {
			s.rss[name], s.pss[name] = m.rss, m.pss
		}
	}
	for _, root := range w.roots {
		recs, _ := filepath.Glob(filepath.Join(root, "records", "*.json"))
		for _, f := range recs {
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			var rec struct {
				PID int `json:"pid"`
			}
			if json.Unmarshal(b, &rec) == nil && rec.PID > 0 {
				leaders = append(leaders, rec.PID)
			}
		}
	}
	groups := map[int]*procMem{}
	for _, l := range leaders {
		groups[l] = &procMem{}
	}
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range procs {
		pid, _ := strconv.Atoi(filepath.Base(d))
		g, ok := groups[proccpu.Group(pid)]
		if !ok {
			continue
		}
		if m, ok := readMem(pid); ok {
			g.rss += m.rss
			g.pss += m.pss
		}
	}
	for _, g := range groups {
		if g.rss == 0 {
			continue
		}
		s.chrome.chromeRSS += g.rss
		s.chrome.chromePSS += g.pss
		s.chrome.perSessionRSS = append(s.chrome.perSessionRSS, g.rss)
		s.chrome.perSessionPSS = append(s.chrome.perSessionPSS, g.pss)
	}
	return s
}

// stopAll sends SIGTERM to the workers still running, waits for them, and
// reports any whose pid is still there.
func (w *workerSet) stopAll() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var problems []string
	for name, p := range w.procs {
		if !w.killed[name] {
			select {
			case <-p.Terminate():
			case <-time.After(time.Minute):
				problems = append(problems, "worker "+name+" did not exit within a minute of SIGTERM")
			}
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", p.Cmd.Process.Pid)); err == nil {
			problems = append(problems, fmt.Sprintf("worker %s (pid %d) is still there", name, p.Cmd.Process.Pid))
		}
	}
	return problems
}

type procMem struct{ rss, pss int64 }

// readMem reads VmRSS (status) and Pss (smaps_rollup) of pid, in KiB.
func readMem(pid int) (procMem, bool) {
	var m procMem
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return m, false
	}
	defer f.Close()
	found := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			m.rss, found = kib(v), true
			break
		}
	}
	if roll, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid)); err == nil {
		for _, line := range strings.Split(string(roll), "\n") {
			if v, ok := strings.CutPrefix(line, "Pss:"); ok {
				m.pss = kib(v)
				break
			}
		}
	}
	return m, found
}

func kib(v string) int64 {
	n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
	return n
}

// percentile is the nearest-rank percentile of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(i, 0)]
}

// latencies returns the sorted latencies of the ok calls per tool, and of
// every ok call.
func (r *loadResult) latencies() (map[string][]time.Duration, []time.Duration) {
	by := map[string][]time.Duration{}
	var all []time.Duration
	for _, c := range r.calls {
		if c.ok {
			tool := c.tool
			if c.opens {
				tool = loadOpen
			}
			by[tool] = append(by[tool], c.elapsed)
			all = append(all, c.elapsed)
		}
	}
	for _, v := range by {
		slices.Sort(v)
	}
	slices.Sort(all)
	return by, all
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f", float64(d)/1e6) }
func mib(k int64) string        { return fmt.Sprintf("%.0f", float64(k)/1024) }

// startWaits reads each session's history (its latest run) and returns how
// long every activity's first attempt waited between being scheduled and a
// worker starting it, by queue kind.
func startWaits(ids []string) map[string][]time.Duration {
	out := map[string][]time.Duration{}
	for _, id := range ids {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		scheduled := map[int64]*historypb.HistoryEvent{}
		it := env.Client.GetWorkflowHistory(ctx, id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				break
			}
			if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
				scheduled[ev.GetEventId()] = ev
			}
			if a := ev.GetActivityTaskStartedEventAttributes(); a != nil {
				sch := scheduled[a.GetScheduledEventId()]
				// A retry's start is measured from the first attempt's
				// schedule, backoff included: not a queue wait.
				if sch == nil || a.GetAttempt() > 1 {
					continue
				}
				kind := "host"
				// The create queue is shared by every worker too (one a
				// worker past its bounds leaves to others).
				if q := sch.GetActivityTaskScheduledEventAttributes().GetTaskQueue().GetName(); q == contract.SharedQueue || q == contract.CreateQueue {
					kind = "shared"
				}
				out[kind] = append(out[kind], ev.GetEventTime().AsTime().Sub(sch.GetEventTime().AsTime()))
			}
		}
		cancel()
	}
	for _, v := range out {
		slices.Sort(v)
	}
	return out
}

// report renders the run as markdown tables.
func (r *loadResult) report() string {
	var b strings.Builder
	by, all := r.latencies()
	codes := map[contract.Code]int{}
	slowest := map[contract.Code]time.Duration{}
	for _, c := range r.calls {
		if !c.ok && c.err == nil {
			codes[c.code]++
			slowest[c.code] = max(slowest[c.code], c.elapsed)
		}
	}
	title := "one worker"
	if r.opts.Kill {
		title = fmt.Sprintf("worker killed after %d of %d calls answered, a second worker took over", r.killedAt, r.opts.Sessions*r.opts.Calls)
	}
	fmt.Fprintf(&b, "\n%d sessions x %d calls, %s: %d calls in %.1f s (%.1f calls/s)\n\n", r.opts.Sessions, r.opts.Calls, title, len(r.calls), r.wall.Seconds(), float64(len(r.calls))/r.wall.Seconds())
	fmt.Fprintf(&b, "| tool | ok calls | p50 ms | p95 ms | p99 ms | max ms |\n|---|---|---|---|---|---|\n")
	for _, tool := range append([]string{loadOpen}, append(slices.Clone(loadTools), "all")...) {
		v := by[tool]
		if tool == "all" {
			v = all
		}
		if len(v) == 0 {
			continue
		}
		label := tool
		if tool == "all" {
			label = "all (first calls included)"
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s |\n", label, len(v), ms(percentile(v, .5)), ms(percentile(v, .95)), ms(percentile(v, .99)), ms(v[len(v)-1]))
	}
	if len(codes) > 0 {
		var parts []string
		for c, n := range codes {
			parts = append(parts, fmt.Sprintf("%s: %d (slowest answer %s ms)", c, n, ms(slowest[c])))
		}
		slices.Sort(parts)
		fmt.Fprintf(&b, "\nfailed calls (legitimate for the scenario): %s\n", strings.Join(parts, ", "))
	}
	if len(r.startWaits) > 0 {
		b.WriteString("\n| activity schedule-to-start | activities | p50 ms | p99 ms | max ms |\n|---|---|---|---|---|\n")
		for _, kind := range []string{"host", "shared"} {
			if v := r.startWaits[kind]; len(v) > 0 {
				fmt.Fprintf(&b, "| %s queue | %d | %s | %s | %s |\n", kind, len(v), ms(percentile(v, .5)), ms(percentile(v, .99)), ms(v[len(v)-1]))
			}
		}
	}
	b.WriteString(r.firstSteps)
	b.WriteString("\n| memory | MiB |\n|---|---|\n")
	for _, name := range []string{"A", "B"} {
		if v, ok := r.workerPeakRSS[name]; ok {
			fmt.Fprintf(&b, "| worker %s peak VmRSS / Pss | %s / %s |\n", name, mib(v), mib(r.workerPeakPSS[name]))
		}
	}
	fmt.Fprintf(&b, "| Chrome, all sessions, peak VmRSS / Pss | %s / %s |\n", mib(r.chromePeakRSS), mib(r.chromePeakPSS))
	if n := len(r.final.perSessionPSS); n > 0 {
		pss, rss := slices.Clone(r.final.perSessionPSS), slices.Clone(r.final.perSessionRSS)
		slices.Sort(pss)
		slices.Sort(rss)
		fmt.Fprintf(&b, "| Chrome per session at the end (%d browsers), Pss median / max | %s / %s |\n", n, mib(pss[n/2]), mib(pss[n-1]))
		fmt.Fprintf(&b, "| Chrome per session at the end, VmRSS summed over its processes, median / max | %s / %s |\n", mib(rss[n/2]), mib(rss[n-1]))
	}
	b.WriteString(r.checkpoints.report())
	return b.String()
}

// The short version, in make test: invariants only, never timing.
func TestLoad(t *testing.T) {
	r := runLoad(t, loadOptions{Sessions: 4, Calls: 10, Checkpoints: true})
	t.Log(r.report())
}

// Many sessions started at once on one busy worker: every first call waits
// for its browser rather than failing, and every answer is classified by
// what happened (checkAnswers, checkSubmissions).
func TestLoadInvariants(t *testing.T) {
	r := runLoad(t, loadOptions{Sessions: 8, Calls: 10, Starved: true})
	t.Log(r.report())
}

func TestLoadWorkerKilled(t *testing.T) {
	r := runLoad(t, loadOptions{Sessions: 4, Calls: 10, Kill: true})
	t.Log(r.report())
	replaced := 0
	for _, c := range r.calls {
		if c.code == contract.CodeSessionReplaced {
			replaced++
		}
	}
	if replaced == 0 {
		t.Errorf("no call answered session_replaced after the kill: the kill did not reach the sessions")
	}
}

// BenchmarkLoad is the full load (make bench, one iteration): 16 sessions x
// 50 calls on one worker, the same with the worker killed halfway, and a
// sweep of session counts for the p95 of every tool. DURABLE_BROWSER_LOAD_SWEEP (default 1,4,8,16) and DURABLE_BROWSER_LOAD_CALLS
// (default 50) change its shape.
func BenchmarkLoad(b *testing.B) {
	calls := 50
	if v, err := strconv.Atoi(os.Getenv("DURABLE_BROWSER_LOAD_CALLS")); err == nil && v > 0 {
		calls = v
	}
	sweep := []int{1, 4, 8, 16}
	if v := os.Getenv("DURABLE_BROWSER_LOAD_SWEEP"); v != "" {
		sweep = nil
		for _, f := range strings.Split(v, ",") {
			if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
				sweep = append(sweep, n)
			}
		}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "load run %s, %d cores, load average %s\n", time.Now().Format(time.RFC3339), runtime.NumCPU(), loadAvg())
	full := runLoad(b, loadOptions{Sessions: 16, Calls: calls, Checkpoints: true})
	out.WriteString(full.report())
	killed := runLoad(b, loadOptions{Sessions: 16, Calls: calls, Kill: true, Checkpoints: true})
	out.WriteString(killed.report())

	out.WriteString("\nsessions vs p95 (ms) on one worker, ok calls\n\n| sessions | calls/s | goto | snapshot | submit | screenshot | browser_read | all | every tool p95 < 1 s | load avg after |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, n := range sweep {
		r := full
		if n != 16 || full.opts.Calls != calls {
			r = runLoad(b, loadOptions{Sessions: n, Calls: calls, Checkpoints: true})
		}
		by, all := r.latencies()
		under := true
		fmt.Fprintf(&out, "| %d | %.1f |", n, float64(len(r.calls))/r.wall.Seconds())
		for _, tool := range loadTools {
			p := percentile(by[tool], .95)
			under = under && p < time.Second
			fmt.Fprintf(&out, " %s |", ms(p))
		}
		fmt.Fprintf(&out, " %s | %v | %s |\n", ms(percentile(all, .95)), under, loadAvg())
	}
	b.Log(out.String())
	if f := os.Getenv("DURABLE_BROWSER_LOAD_OUT"); f != "" {
		_ = os.WriteFile(f, []byte(out.String()), 0o644)
	}
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// loadStateKey seals the load workers' checkpoints (Checkpoints runs).
var loadStateKey = func() string {
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		panic(err)
	}
	return base64.StdEncoding.EncodeToString(k)
}()

// checkpointCost is what the workers logged of their checkpoints: per call
// that kept one, how long its answer was held back (reading the state out
// of Chrome, then the save, bounded by the worker's state save wait), and
// per save, the write's time and the state's size.
type checkpointCost struct {
	held, export, write []time.Duration
	bytes               []int
	wrote, unchanged    int
	bounded             int // calls answered at the wait's bound, the save still going
}

func (c *checkpointCost) calls() int { return len(c.held) }

// add reads one worker's log.
func (c *checkpointCost) add(log string) {
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, `"checkpoint":true`) {
			continue
		}
		var e struct {
			Message string  `json:"message"`
			Held    float64 `json:"held_ms"`
			Export  float64 `json:"export_ms"`
			Waited  string  `json:"waited"`
			Write   float64 `json:"write_ms"`
			Bytes   int     `json:"bytes"`
			Wrote   bool    `json:"wrote"`
		}
		if json.Unmarshal([]byte(line), &e) != nil {
			continue
		}
		switch e.Message {
		case "state kept":
			c.held = append(c.held, msDuration(e.Held))
			c.export = append(c.export, msDuration(e.Export))
			if e.Waited == "bound" {
				c.bounded++
			}
		case "state saved":
			c.write = append(c.write, msDuration(e.Write))
			c.bytes = append(c.bytes, e.Bytes)
			if e.Wrote {
				c.wrote++
			} else {
				c.unchanged++
			}
		}
	}
	for _, v := range [][]time.Duration{c.held, c.export, c.write} {
		slices.Sort(v)
	}
	slices.Sort(c.bytes)
}

func msDuration(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

// ms1 is d in milliseconds to a tenth: checkpoints take a few.
func ms1(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/1e6) }

// report is the checkpoint rows of a load run's table.
func (c *checkpointCost) report() string {
	if c.calls() == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\ncheckpoints: %d calls kept one (%d answered at the wait's bound); %d saves wrote a version, %d found it unchanged\n\n", c.calls(), c.bounded, c.wrote, c.unchanged)
	fmt.Fprintf(&b, "| checkpoint | p50 | p95 | max |\n|---|---|---|---|\n")
	for _, row := range []struct {
		name string
		v    []time.Duration
	}{{"a call held back by it (export + save)", c.held}, {"reading the state out of Chrome", c.export}, {"the save (seal, S3 put; a first save lists and reads the newest first)", c.write}} {
		if len(row.v) > 0 {
			fmt.Fprintf(&b, "| %s | %s ms | %s ms | %s ms |\n", row.name, ms1(percentile(row.v, .5)), ms1(percentile(row.v, .95)), ms1(row.v[len(row.v)-1]))
		}
	}
	if n := len(c.bytes); n > 0 {
		fmt.Fprintf(&b, "| state size (JSON, before sealing) | %d B | %d B | %d B |\n", c.bytes[n/2], c.bytes[n*95/100], c.bytes[n-1])
	}
	return b.String()
}
