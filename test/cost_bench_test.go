package test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"
	"go.temporal.io/sdk/client"

	dbclient "github.com/durable-browser/durable-browser/client"
	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/demosite"
	"github.com/durable-browser/durable-browser/internal/devstack"
	"github.com/durable-browser/durable-browser/internal/dial"
	"github.com/durable-browser/durable-browser/internal/logging"
	"github.com/durable-browser/durable-browser/internal/proccpu"
	"github.com/durable-browser/durable-browser/test/harness"
	"github.com/durable-browser/durable-browser/workflows"
)

// A call's cost under load, split by process (docs/benchmarks.md, "A call's
// cost by process"): the Temporal server and the demo site each run in a
// child process of their own (this test binary, re-executed), the worker
// is the built worker binary writing a CPU profile, Chrome is every session
// browser's process group, S3 is versitygw, and the caller is this process
// (the load test's sessions, driven through the Temporal client).

// costChildEnv makes a re-executed test binary a Temporal server ("temporal")
// or the demo site ("demo") until its stdin closes, instead of running tests.
const costChildEnv = "DURABLE_BROWSER_COST_CHILD"

// runCostChild serves a child's role when this binary was started as one.
func runCostChild() bool {
	role := os.Getenv(costChildEnv)
	if role == "" {
		return false
	}
	var addr string
	var stop func()
	switch role {
	case "temporal":
		port, err := devstack.FreePort()
		if err != nil {
			panic(err)
		}
		t, err := devstack.StartTemporal(context.Background(), devstack.TemporalOptions{
			Address: fmt.Sprintf("127.0.0.1:%d", port), SearchAttributes: workflows.SearchAttributeTypes, Logger: zerolog.Nop()})
		if err != nil {
			panic(err)
		}
		addr, stop = t.Address(), t.Stop
		// The server's own profile (whole run), when asked for: where its
		// share of a call goes.
		if f := os.Getenv("DURABLE_BROWSER_COST_SERVER_PROFILE"); f != "" {
			pf, err := os.Create(f)
			if err != nil {
				panic(err)
			}
			if err := pprof.StartCPUProfile(pf); err != nil {
				panic(err)
			}
			stopServer := stop
			stop = func() { pprof.StopCPUProfile(); _ = pf.Close(); stopServer() }
		}
	case "demo":
		s, err := demosite.Listen("127.0.0.1:0")
		if err != nil {
			panic(err)
		}
		addr, stop = s.URL(), func() { _ = s.Close() }
	default:
		panic("unknown " + costChildEnv + " " + role)
	}
	fmt.Println("ready", addr)
	_, _ = io.Copy(io.Discard, os.Stdin)
	stop()
	return true
}

// costChild is a child process of this test binary in a role.
type costChild struct {
	cmd   *exec.Cmd
	stdin io.Closer
	addr  string
}

func startCostChild(tb testing.TB, role string) *costChild {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), costChildEnv+"="+role)
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	c := &costChild{cmd: cmd, stdin: in}
	tb.Cleanup(func() {
		_ = c.stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ready ") {
		tb.Fatalf("%s child did not start: %q %v", role, line, err)
	}
	c.addr = strings.TrimSpace(strings.TrimPrefix(line, "ready "))
	return c
}

// chromeCPU sums the CPU of every session browser's process group under
// root (a browser leads its own group; its record names its pid).
func chromeCPU(root string) time.Duration {
	leaders := map[int]bool{}
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
			leaders[rec.PID] = true
		}
	}
	return proccpu.Groups(leaders)
}

// selfCPU is this process's CPU time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type costSample struct {
	chrome, worker, temporal, site, s3, caller time.Duration
	at                                         time.Time
}

// minus is what each process spent from s0 to s: Chrome, worker, Temporal,
// caller (less the idle rate of the suite's own embedded server), site, S3.
func (s costSample) minus(s0 costSample, idleRate float64) [6]time.Duration {
	caller := s.caller - s0.caller - time.Duration(idleRate*float64(s.at.Sub(s0.at)))
	return [6]time.Duration{s.chrome - s0.chrome, s.worker - s0.worker, s.temporal - s0.temporal, max(caller, 0), s.site - s0.site, s.s3 - s0.s3}
}

// BenchmarkCost runs the load test's cycle (goto, snapshot, submit,
// screenshot, browser_read) on DURABLE_BROWSER_COST_SESSIONS sessions (4)
// x DURABLE_BROWSER_COST_CALLS calls (40) against a worker process, and
// reports each process's CPU per call, the calls' wall time, and the top of
// the worker's CPU profile; first, one more session alone goes round the
// cycle call by call, for each tool's CPU by process. The sessions are opened (their browsers
// started) before the measured window. DURABLE_BROWSER_COST_CHECKPOINTS=1
// gives the worker a state key, so each session keeps a checkpoint as in
// the load test; DURABLE_BROWSER_COST_SERVER_PROFILE=<file> has the
// Temporal server's process write its CPU profile there.
func BenchmarkCost(b *testing.B) {
	sessions, calls := envInt("DURABLE_BROWSER_COST_SESSIONS", 4), envInt("DURABLE_BROWSER_COST_CALLS", 40)
	// How many times the one-session phase goes round the cycle: the
	// clock tick is 10 ms, so a tool's figure needs tens of calls.
	seqCycles := envInt("DURABLE_BROWSER_COST_CYCLES", 20)
	temporal := startCostChild(b, "temporal")
	site := startCostChild(b, "demo")
	// Dialled as the product's clients (the CLI, the MCP server) dial.
	c, err := client.Dial(client.Options{HostPort: temporal.addr, Namespace: "default", Logger: logging.NewSDKLogger(zerolog.Nop()),
		ConnectionOptions: client.ConnectionOptions{GrpcCompression: dial.Compression(temporal.addr)}})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	root, err := os.MkdirTemp(env.Dir, "cost-")
	if err != nil {
		b.Fatal(err)
	}
	prof := filepath.Join(root, "worker.cpu.pprof")
	wenv := []string{fmt.Sprintf("DURABLE_BROWSER_MAX_BROWSERS=%d", sessions+1)}
	if os.Getenv("DURABLE_BROWSER_COST_CHECKPOINTS") != "" {
		// As the load test's workers: every session keeps a checkpoint.
		wenv = append(wenv, "DURABLE_BROWSER_STATE_KEY="+loadStateKey)
	}
	w := env.StartWorkerProcess(b, harness.ProcessOptions{ProfileRoot: root, Address: temporal.addr,
		Args: []string{"--cpuprofile", prof, "--log-level", "info"}, Env: wenv})
	s3 := devstack.PIDsUnder(filepath.Join(env.Dir, "s3"))
	tg := loadTarget{c, site.addr}
	run := uuid.NewString()[:8]
	ids := make([]string, sessions+1) // the last one is the sequential phase's
	for i := range ids {
		ids[i] = fmt.Sprintf("cost-%s-s%02d", run, i)
	}
	defer func() {
		for _, id := range ids {
			_ = c.SignalWorkflow(context.Background(), id, "", contract.SignalClose, nil)
		}
	}()
	// Open every session (its browser started) outside the window.
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			out, err := dbclient.Call(ctx, c, id, contract.ToolCall{Name: "snapshot", Args: json.RawMessage(`{}`)}, dbclient.CallOptions{})
			if err != nil || !strings.Contains(string(out), `"ok":true`) {
				b.Errorf("opening %s: %v %.300s", id, err, out)
			}
		}()
	}
	wg.Wait()
	if b.Failed() {
		return
	}
	// The caller's process also holds the suite's idle embedded Temporal
	// server: its idle rate is taken out of the caller's figure.
	// The Temporal server and the worker also spend CPU with nothing to
	// do (timers, polls); their idle rates are taken too, and reported.
	idle0, idleT := selfCPU(), time.Now()
	tIdle0, _, _ := proccpu.Of(temporal.cmd.Process.Pid)
	wIdle0, _, _ := proccpu.Of(w.Cmd.Process.Pid)
	cIdle0 := chromeCPU(root)
	time.Sleep(5 * time.Second)
	idleFor := time.Since(idleT)
	idleRate := float64(selfCPU()-idle0) / float64(idleFor)
	tIdle1, _, _ := proccpu.Of(temporal.cmd.Process.Pid)
	wIdle1, _, _ := proccpu.Of(w.Cmd.Process.Pid)
	cIdle1 := chromeCPU(root)

	sample := func() costSample {
		s := costSample{at: time.Now(), chrome: chromeCPU(root), caller: selfCPU()}
		s.worker, _, _ = proccpu.Of(w.Cmd.Process.Pid)
		s.temporal, _, _ = proccpu.Of(temporal.cmd.Process.Pid)
		s.site, _, _ = proccpu.Of(site.cmd.Process.Pid)
		for _, pid := range s3 {
			own, _, _ := proccpu.Of(pid)
			s.s3 += own
		}
		return s
	}
	// One session alone, call by call: each tool's CPU by process.
	type cost struct {
		n       int
		by      [6]time.Duration
		elapsed time.Duration
	}
	perTool := map[string]*cost{}
	var prev costSample
	seq := driveSession(tg, 0, ids[sessions], run, 5*seqCycles, func() { prev = sample() }, func(cl *loadCall) {
		now := sample()
		c := perTool[cl.tool]
		if c == nil {
			c = &cost{}
			perTool[cl.tool] = c
		}
		c.n++
		c.elapsed += cl.elapsed
		for i, d := range now.minus(prev, idleRate) {
			c.by[i] += d
		}
	})
	for _, cl := range seq {
		if !cl.ok {
			b.Errorf("sequential %s answered %s: %s", cl.tool, cl.code, cl.answer)
		}
	}
	ids = ids[:sessions]

	load0 := loadAvg()
	before := sample()
	perSession := make([][]*loadCall, sessions)
	for k, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			perSession[k] = driveSession(tg, k, id, run, calls, func() {}, func(*loadCall) {})
		}()
	}
	wg.Wait()
	after := sample()
	load1 := loadAvg()
	var all []*loadCall
	for _, cs := range perSession {
		all = append(all, cs...)
	}
	n := len(all)
	var walls []time.Duration
	failed := 0
	byTool := map[string][]time.Duration{}
	for _, cl := range all {
		if !cl.ok {
			failed++
			continue
		}
		walls = append(walls, cl.elapsed)
		byTool[cl.tool] = append(byTool[cl.tool], cl.elapsed)
	}
	sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
	window := after.at.Sub(before.at)
	d := after.minus(before, idleRate)
	rows := []struct {
		name string
		d    time.Duration
	}{
		{"Chrome (browser, renderers, GPU, utility)", d[0]},
		{"worker (durable-browser-worker)", d[1]},
		{"Temporal server", d[2]},
		{"caller (Temporal client, the load's driver)", d[3]},
		{"demo site", d[4]},
		{"S3 (versitygw)", d[5]},
	}
	var out strings.Builder
	fmt.Fprintf(&out, "cost run %s, %d cores, %d sessions x %d calls (%d answered not ok), window %.1f s, %.1f calls/s, load average %s before, %s after\n\n",
		time.Now().UTC().Format(time.RFC3339), runtime.NumCPU(), sessions, calls, failed, window.Seconds(), float64(n)/window.Seconds(), load0, load1)
	fmt.Fprintf(&out, "| process | CPU per call | share |\n|---|---|---|\n")
	var total time.Duration
	for _, r := range rows {
		total += r.d
	}
	for _, r := range rows {
		fmt.Fprintf(&out, "| %s | %.1f ms | %.0f%% |\n", r.name, float64(r.d)/float64(n)/1e6, 100*float64(r.d)/float64(total))
	}
	fmt.Fprintf(&out, "| all | %.1f ms | |\n", float64(total)/float64(n)/1e6)
	fmt.Fprintf(&out, "\nidle, %d sessions open and no call (%.0f s): Chrome %.1f ms/s, Temporal server %.1f ms/s, worker %.1f ms/s, caller %.1f ms/s; over the window the last three are %.1f, %.1f and (taken out above) %.1f ms per call\n",
		sessions+1, idleFor.Seconds(), float64(cIdle1-cIdle0)/idleFor.Seconds()/1e6, float64(tIdle1-tIdle0)/idleFor.Seconds()/1e6, float64(wIdle1-wIdle0)/idleFor.Seconds()/1e6, idleRate*1e3,
		float64(tIdle1-tIdle0)/idleFor.Seconds()*window.Seconds()/float64(n)/1e6, float64(wIdle1-wIdle0)/idleFor.Seconds()*window.Seconds()/float64(n)/1e6, idleRate*window.Seconds()*1e3/float64(n))
	for _, cl := range all {
		if !cl.ok {
			fmt.Fprintf(&out, "not ok: session %d %s after %s: code %q err %v answer %.300s\n", cl.session, cl.tool, cl.elapsed.Round(time.Millisecond), cl.code, cl.err, cl.answer)
		}
	}
	fmt.Fprintf(&out, "\nwall per call (caller, ok calls): p50 %s ms, p95 %s ms; per tool p50:", ms(percentile(walls, .5)), ms(percentile(walls, .95)))
	for _, tool := range loadTools {
		d := byTool[tool]
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		fmt.Fprintf(&out, " %s %s ms,", tool, ms(percentile(d, .5)))
	}
	out.WriteString("\n")
	fmt.Fprintf(&out, "\none session alone, %d cycles call by call: CPU per call by process (ms), and wall\n\n| tool | Chrome | worker | Temporal | caller | site | S3 | all | wall |\n|---|---|---|---|---|---|---|---|---|\n", seqCycles)
	for _, tool := range loadTools {
		c := perTool[tool]
		if c == nil {
			continue
		}
		fmt.Fprintf(&out, "| %s |", tool)
		var all time.Duration
		for _, d := range c.by {
			all += d
			fmt.Fprintf(&out, " %.1f |", float64(d)/float64(c.n)/1e6)
		}
		fmt.Fprintf(&out, " %.1f | %.0f |\n", float64(all)/float64(c.n)/1e6, float64(c.elapsed)/float64(c.n)/1e6)
	}
	ids = append(ids, fmt.Sprintf("cost-%s-s%02d", run, sessions))

	// Close the sessions and stop the worker, so its profile is written.
	for _, id := range ids {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_ = c.SignalWorkflow(ctx, id, "", contract.SignalClose, nil)
		_ = c.GetWorkflow(ctx, id, "").Get(ctx, nil)
		cancel()
	}
	select {
	case <-w.Terminate():
	case <-time.After(time.Minute):
		b.Fatal("worker did not stop")
	}
	top, err := exec.Command("go", "tool", "pprof", "-top", "-nodecount=35", prof).CombinedOutput()
	if err != nil {
		b.Fatalf("pprof: %v\n%s", err, top)
	}
	fmt.Fprintf(&out, "\nworker CPU profile (whole run: start, opens, the window, stop)\n%s", top)
	cum, _ := exec.Command("go", "tool", "pprof", "-top", "-cum", "-nodecount=60", prof).CombinedOutput()
	fmt.Fprintf(&out, "\nby cumulative\n%s", cum)
	b.Log(out.String())
	if f := os.Getenv("DURABLE_BROWSER_COST_OUT"); f != "" {
		_ = os.WriteFile(f, []byte(out.String()), 0o644)
		_ = exec.Command("cp", prof, f+".pprof").Run()
	}
	if failed > n/10 {
		b.Errorf("%d of %d calls answered not ok", failed, n)
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
