package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"go.temporal.io/sdk/client"

	"github.com/durable-browser/durable-browser/cmd/internal/cli"
	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/config"
	"github.com/durable-browser/durable-browser/internal/demosite"
	"github.com/durable-browser/durable-browser/internal/devstack"
	"github.com/durable-browser/durable-browser/internal/logging"
	"github.com/durable-browser/durable-browser/workflows"
)

const crashUsage = `Usage: durable-browser demo crash [flags]

The demo agent's task (sign in to the demo shop, search, add a desk lamp to
the cart, check out under the ask policy, read the confirmation and cite it
with evidence), with the browser worker killed in the middle of it.

It needs no running stack: it starts one of its own on loopback (an
in-memory Temporal, an S3 server, the demo site), runs the browser worker
as a child process (durable-browser-worker, found beside this binary) and
demo agent --approve against it: every held request is approved for you. When the order has
reached the shop and its answer has not yet come back, it kills that worker
with SIGKILL, in the middle of the agent's run, and starts another. The
agent's run answers effect_unknown (the order may or may not have been
placed); the agent looks again, finds its browser replaced, signs in again,
sees the order in the account's orders and cites it instead of buying a
second time. The demo prints the shop's order count and exits 1 unless it
is exactly one. Everything it started is stopped before it exits.

The model: as for demo agent (OPENAI_API_KEY, ANTHROPIC_API_KEY, else the
scripted stand-in; --scripted forces the stand-in).

Flags:
`

// runDemo is `durable-browser demo crash`; the other demos run from the
// worker binary, against a running stack.
func runDemo(ctx context.Context, env *cliEnv, args []string) error {
	if len(args) > 0 && (args[0] == "agent" || args[0] == "handoff") {
		return fmt.Errorf("this binary runs `demo crash`; `demo agent` and `demo handoff` run from durable-browser-worker (`durable-browser demo agent`)")
	}
	if _, err := cli.Subverb(args, "demo", "`durable-browser demo crash`", func() { fmt.Fprint(env.Stderr, crashUsage) }, "crash"); err != nil {
		return err
	}
	fs := cli.Flags("demo crash", env, crashUsage)
	var (
		chrome, logLevel, openaiModel string
		scriptedOnly                  bool
		timeout                       time.Duration
	)
	fs.String(&chrome, "chrome", env.Getenv("CHROME_PATH"), "Chrome or Chromium executable for the workers (also $CHROME_PATH; default: discovered)")
	fs.Bool(&scriptedOnly, "scripted", false, "use the scripted stand-in even when OPENAI_API_KEY or ANTHROPIC_API_KEY is set")
	fs.String(&openaiModel, "openai-model", "", "the OpenAI-compatible model to ask (passed on to demo agent; default its default, or $OPENAI_MODEL)")
	fs.Duration(&timeout, "timeout", 10*time.Minute, "give up after this long")
	fs.String(&logLevel, "log-level", "warn", "this process's logs: trace, debug, info, warn or error (the workers' logs are printed only if the demo fails)")
	if err := cli.ParseNoArgs(fs, args[1:], "demo crash"); err != nil {
		return err
	}
	if timeout <= 0 {
		return &config.Error{Flag: "timeout", Problem: "must be positive", Fix: "e.g. 10m"}
	}
	log, err := logging.New(logging.Options{Level: logLevel, Out: env.Stderr})
	if err != nil {
		return &config.Error{Flag: "log-level", Problem: err.Error()}
	}
	workerBin, err := findWorkerBinary()
	if err != nil {
		return err
	}
	// The agent runs as `demo agent` does, with these flags passed on (the
	// model's keys come from the environment it inherits).
	agentArgs := []string{"--timeout", timeout.String(), "--log-level", logLevel}
	if scriptedOnly {
		agentArgs = append(agentArgs, "--scripted")
	}
	if openaiModel != "" {
		agentArgs = append(agentArgs, "--openai-model", openaiModel)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c := &crashDemo{out: env.Stdout, errOut: env.Stderr, log: log, workerBin: workerBin, chrome: chrome}
	defer c.stop()
	if err := c.start(ctx); err != nil {
		return err
	}
	return c.run(ctx, agentArgs)
}

// crashDemo is the demo's own stack and its worker processes.
type crashDemo struct {
	out, errOut       io.Writer
	log               zerolog.Logger
	workerBin, chrome string

	dir      string
	temporal *devstack.Temporal
	s3       *devstack.S3
	site     *demosite.Site
	hold     *orderHold
	srv      *http.Server
	siteURL  string
	client   client.Client
	workers  []*workerProc
}

// start brings up Temporal (in memory), S3, the demo site and the first
// worker. What it started is stopped by stop, also after an error.
func (c *crashDemo) start(ctx context.Context) error {
	var err error
	// Short: Chrome puts a unix socket (at most 107 bytes of path) in "t".
	if c.dir, err = os.MkdirTemp("", "db-crash-"); err != nil {
		return err
	}
	// Chrome's own temporary files (a killed one leaves them) stay in the
	// demo's directory.
	if err := os.Mkdir(filepath.Join(c.dir, "t"), 0o700); err != nil {
		return err
	}
	port, err := devstack.FreePort()
	if err != nil {
		return err
	}
	// The servers' warnings at start are about their embedding, not the demo.
	srvLog := c.log
	if c.log.GetLevel() >= zerolog.WarnLevel {
		srvLog = c.log.Level(zerolog.ErrorLevel)
	}
	c.temporal, err = devstack.StartTemporal(ctx, devstack.TemporalOptions{Address: fmt.Sprintf("127.0.0.1:%d", port),
		SearchAttributes: workflows.SearchAttributeTypes, Logger: srvLog})
	if err != nil {
		return err
	}
	if port, err = devstack.FreePort(); err != nil {
		return err
	}
	c.s3, err = devstack.StartS3(ctx, devstack.S3Options{Address: fmt.Sprintf("127.0.0.1:%d", port), Dir: filepath.Join(c.dir, "s3"),
		Bucket: devstack.DefaultS3Bucket, Logger: srvLog})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	c.site = demosite.New()
	c.hold = &orderHold{next: c.site, arrived: make(chan struct{}), release: make(chan struct{})}
	c.srv = &http.Server{Handler: c.hold, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = c.srv.Serve(ln) }()
	c.siteURL = "http://" + ln.Addr().String()
	c.client, err = client.DialContext(ctx, client.Options{HostPort: c.temporal.Address(), Namespace: "default",
		Logger: logging.NewSDKLogger(c.log.With().Str("component", "temporal-sdk").Logger())})
	if err != nil {
		return fmt.Errorf("connecting to the demo's Temporal at %s: %w", c.temporal.Address(), err)
	}
	fmt.Fprintf(c.out, "demo crash: a stack of its own on loopback: Temporal %s (in memory), S3 %s, the demo shop at %s/shop/\n",
		c.temporal.Address(), c.s3.Endpoint(), c.siteURL)
	_, err = c.startWorker(ctx)
	return err
}

// run runs `demo agent --approve` against the demo's stack (a child
// process of the worker binary, as `durable-browser demo agent` is), kills
// the first browser worker when the order has reached the shop, starts
// another, and checks the shop counted one order.
func (c *crashDemo) run(ctx context.Context, agentArgs []string) error {
	// A crash that went wrong (no second worker) ends the agent too, rather
	// than leaving it to wait out its timeout.
	agentCtx, stopAgent := context.WithCancel(ctx)
	defer stopAgent()
	crashed := make(chan error, 1)
	go func() {
		err := c.crash(ctx)
		if err != nil {
			stopAgent()
		}
		crashed <- err
	}()
	args := append([]string{"demo", "agent", "--address", c.temporal.Address(), "--namespace", "default",
		"--site", c.siteURL, "--approve"}, agentArgs...)
	agent := exec.CommandContext(agentCtx, c.workerBin, args...)
	agentOut := &devstack.SyncBuffer{}
	agent.Stdout, agent.Stderr = io.MultiWriter(c.out, agentOut), c.errOut
	if err := agent.Start(); err != nil {
		return fmt.Errorf("starting demo agent (%s): %w", c.workerBin, err)
	}
	agentErr := agent.Wait()
	close(c.hold.release)
	var crashErr error
	select {
	case <-c.hold.arrived:
		crashErr = <-crashed
	default:
		crashErr = errors.New("the agent ended before its order reached the shop, so no worker was killed")
	}
	orders := c.site.Orders()
	var placed []string
	for _, o := range orders {
		placed = append(placed, fmt.Sprintf("#%d (%s)", o.N, strings.Join(o.Items, ", ")))
	}
	fmt.Fprintf(c.out, "\norders the shop counted: %d %s\n", len(orders), strings.Join(placed, ", "))
	var problems []string
	if crashErr != nil {
		problems = append(problems, crashErr.Error())
	}
	if agentErr != nil {
		problems = append(problems, "demo agent: "+agentErr.Error())
	}
	if len(orders) != 1 {
		problems = append(problems, fmt.Sprintf("the shop counted %d orders, want exactly 1", len(orders)))
	}
	// What the agent saw and said, from its workflow's result.
	if m := agentID.FindStringSubmatch(agentOut.String()); m == nil {
		problems = append(problems, "demo agent named no workflow")
	} else {
		var res agentResult
		if err := c.client.GetWorkflow(ctx, m[1], "").Get(ctx, &res); err != nil {
			problems = append(problems, fmt.Sprintf("the agent's result: %v", err))
		} else {
			if !res.sawEffectUnknown() {
				problems = append(problems, "the agent never saw effect_unknown")
			}
			if len(orders) == 1 && !strings.Contains(res.Text, fmt.Sprintf("Order #%d confirmed", orders[0].N)) {
				problems = append(problems, fmt.Sprintf("the agent does not cite order #%d", orders[0].N))
			}
		}
	}
	if len(problems) > 0 {
		for i, w := range c.workers {
			fmt.Fprintf(c.errOut, "\n--- worker %d's log (last lines) ---\n%s\n", i+1, lastLines(w.log.String(), 30))
		}
		return fmt.Errorf("demo crash failed: %s", strings.Join(problems, "; "))
	}
	fmt.Fprintf(c.out, "exactly one order: the worker was killed after the order reached the shop, and the agent, told effect_unknown, looked instead of buying again.\n")
	return nil
}

var agentID = regexp.MustCompile(`(?m)^agent (\S+) started`)

// agentResult is what this demo reads of the DemoAgent workflow's result.
type agentResult struct {
	Text  string `json:"text"`
	Steps []struct {
		Output json.RawMessage `json:"output"`
	} `json:"steps"`
}

func (r agentResult) sawEffectUnknown() bool {
	for _, s := range r.Steps {
		var head struct {
			Code contract.Code `json:"code"`
		}
		if json.Unmarshal(s.Output, &head) == nil && head.Code == contract.CodeEffectUnknown {
			return true
		}
	}
	return false
}

// crash waits for the order to reach the shop, kills the worker serving the
// browser with SIGKILL (its run is in progress: the order's answer is held)
// and starts another.
func (c *crashDemo) crash(ctx context.Context) error {
	select {
	case <-c.hold.arrived:
	case <-ctx.Done():
		return fmt.Errorf("the order never reached the shop: %w", ctx.Err())
	}
	first := c.workers[0]
	fmt.Fprintf(c.out, "\nthe order reached the shop (orders counted: %d); its answer is held, so the agent's run is still going.\n", len(c.site.Orders()))
	fmt.Fprintf(c.out, "killing worker 1 (pid %d) with SIGKILL, mid-run: its browser goes with it\n", first.cmd.Process.Pid)
	first.kill()
	fmt.Fprintf(c.out, "worker 1 is gone; the run will answer effect_unknown once its heartbeat is missed (10 s)\n")
	if _, err := c.startWorker(ctx); err != nil {
		return err
	}
	return nil
}

// startWorker starts `durable-browser-worker` against the demo's stack and
// waits until it polls.
func (c *crashDemo) startWorker(ctx context.Context) (*workerProc, error) {
	n := len(c.workers) + 1
	args := []string{"--address", c.temporal.Address(), "--namespace", "default",
		"--s3-bucket", c.s3.Bucket(), "--s3-endpoint", c.s3.Endpoint(), "--s3-path-style", "--s3-region", "us-east-1",
		// Both workers share a profile root, as on one machine: the second
		// reaps what the first left.
		"--profile-root", filepath.Join(c.dir, "browsers"), "--reap-interval", "5s", "--stop-grace", "5s",
		// The demo shop is on loopback; Temporal and S3 stay out of reach.
		"--browser-allow-private", "--unsigned-approvals", "--log-level", "info"}
	if c.chrome != "" {
		args = append(args, "--chrome", c.chrome)
	}
	cmd := exec.Command(c.workerBin, args...)
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID="+c.s3.AccessKey(), "AWS_SECRET_ACCESS_KEY="+c.s3.SecretKey(), "AWS_REGION=us-east-1",
		"TMPDIR="+filepath.Join(c.dir, "t"))
	w := &workerProc{cmd: cmd, log: &devstack.SyncBuffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = w.log, w.log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting worker %d (%s): %w", n, c.workerBin, err)
	}
	c.workers = append(c.workers, w)
	go func() { _ = cmd.Wait(); close(w.exited) }()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !strings.Contains(w.log.String(), "worker polling") {
		select {
		case <-w.exited:
			return nil, fmt.Errorf("worker %d exited before polling:\n%s", n, lastLines(w.log.String(), 30))
		case <-ctx.Done():
			return nil, fmt.Errorf("worker %d did not start polling: %w", n, ctx.Err())
		case <-tick.C:
		}
	}
	queue := ""
	if m := hostQueue.FindStringSubmatch(w.log.String()); m != nil {
		queue = ", host queue " + m[1]
	}
	fmt.Fprintf(c.out, "worker %d started (pid %d%s)\n", n, cmd.Process.Pid, queue)
	return w, nil
}

var hostQueue = regexp.MustCompile(`"host_queue":"([^"]+)"`)

// stop stops everything start and crash started: the workers (SIGTERM, so
// they release their browsers; SIGKILL after a bound), then anything still
// running from the demo's directory, the site, S3 and Temporal.
func (c *crashDemo) stop() {
	if c.client != nil {
		c.client.Close()
	}
	for _, w := range c.workers {
		w.terminate(20 * time.Second)
	}
	if c.dir != "" {
		devstack.KillUnder(c.dir)
	}
	if c.srv != nil {
		_ = c.srv.Close()
	}
	if c.s3 != nil {
		_ = c.s3.Stop()
	}
	if c.temporal != nil {
		c.temporal.Stop()
	}
	if c.dir != "" {
		_ = os.RemoveAll(c.dir)
	}
}

// workerProc is a worker child process.
type workerProc struct {
	cmd    *exec.Cmd
	log    *devstack.SyncBuffer
	exited chan struct{}
}

// kill sends SIGKILL and waits for the process to be gone.
func (w *workerProc) kill() {
	_ = w.cmd.Process.Kill()
	<-w.exited
}

// terminate asks the worker to stop (it releases its browsers), and kills
// it if it has not within bound.
func (w *workerProc) terminate(bound time.Duration) {
	select {
	case <-w.exited:
		return
	default:
	}
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.exited:
	case <-time.After(bound):
		w.kill()
	}
}

// orderHold lets the first order through to the shop, where it is placed
// and counted, and then holds its answer until the browser's connection
// goes away (the worker was killed) or the demo ends: the moment the order
// has been made and nobody has seen it made.
type orderHold struct {
	next    http.Handler
	once    sync.Once
	arrived chan struct{}
	release chan struct{}
}

func (h *orderHold) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/shop/order" {
		h.next.ServeHTTP(w, r)
		return
	}
	first := false
	h.once.Do(func() { first = true })
	if !first {
		h.next.ServeHTTP(w, r)
		return
	}
	h.next.ServeHTTP(discard{}, r)
	close(h.arrived)
	select {
	case <-r.Context().Done():
	case <-h.release:
	}
}

// discard is a response nobody receives.
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}

// findWorkerBinary looks for durable-browser-worker beside this binary,
// then on PATH.
func findWorkerBinary() (string, error) {
	const name = "durable-browser-worker"
	if self, err := os.Executable(); err == nil {
		if resolved, err := filepath.EvalSymlinks(self); err == nil {
			self = resolved
		}
		beside := filepath.Join(filepath.Dir(self), name)
		if fi, err := os.Stat(beside); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return beside, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%s is not installed beside this binary nor on PATH, and demo crash runs its workers from it: run `make build`", name)
}

// lastLines is the end of a log.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
