// Command ui-screenshot takes the pictures of the Temporal Web UI that
// docs/operations.md shows: it builds durable-browser, starts `dev` on free
// loopback ports, runs a short session through `durable-browser call` (the
// demo shop's sign-in page, a snapshot, a sign-in, a screenshot, then a
// handoff left pending), and has headless Chromium photograph the session's
// page in the UI once the page shows the activities' summaries and the
// current details.
//
//	go run ./scripts/ui-screenshot              # writes docs/img/ui-session.png and docs/img/ui-details.png
//	go run ./scripts/ui-screenshot -out /tmp    # elsewhere
//	go run ./scripts/ui-screenshot -bin bin     # with the binaries of `make build` instead of building them
//
// Starting dev, the session and the pictures must be done within -timeout
// (building comes first and is not counted); the error names what it was
// waiting for. Whatever happens (success, error, deadline, Ctrl-C or
// SIGTERM) it stops dev and every process it started before it exits, and
// fails if any is left.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/sdk/client"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/chrome"
	"github.com/durable-browser/durable-browser/internal/demosite"
	"github.com/durable-browser/durable-browser/internal/devstack"
	"github.com/durable-browser/durable-browser/internal/logging"
	"github.com/durable-browser/durable-browser/internal/proctie"
)

type options struct {
	out     string
	chrome  string
	bin     string
	timeout time.Duration
	width   int
	height  int
}

func main() {
	var o options
	flag.StringVar(&o.out, "out", "docs/img", "directory the PNGs are written to")
	flag.StringVar(&o.chrome, "chromium", "", "Chromium executable (default: $CHROME_PATH, then chromium on PATH)")
	flag.StringVar(&o.bin, "bin", "", "directory holding durable-browser and its three companions (default: build them)")
	flag.DurationVar(&o.timeout, "timeout", 2*time.Minute, "deadline for starting dev, running the session and taking the pictures")
	flag.IntVar(&o.width, "width", 1400, "viewport width, CSS pixels")
	flag.IntVar(&o.height, "height", 1000, "viewport height, CSS pixels")
	flag.BoolVar(&verbose, "v", false, "print what every wait sees, as it polls")
	flag.Parse()
	// Ctrl-C, SIGTERM (timeout(1), a CI runner) and SIGHUP cancel ctx: every
	// wait returns and run's deferred cleanup stops what was started.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	err := run(ctx, o)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ui-screenshot:", err)
		os.Exit(1)
	}
}

var verbose bool

// DeadlineError is the cause of every wait cut short by -timeout.
type DeadlineError struct{ Timeout time.Duration }

func (e *DeadlineError) Error() string {
	return fmt.Sprintf("the %v deadline passed (-timeout)", e.Timeout)
}

// WaitError says what the script was waiting for when it gave up, and what it
// saw last.
type WaitError struct {
	What string
	Seen string
	Err  error
}

func (e *WaitError) Error() string {
	s := fmt.Sprintf("waiting for %s: %v", e.What, e.Err)
	if e.Seen != "" {
		s += "\nlast seen: " + e.Seen
	}
	return s
}

func (e *WaitError) Unwrap() error { return e.Err }

// waitUntil polls cond until it holds, fails, or ctx ends. cond says what it
// sees while it does not hold; an error from it (what it waits for can no
// longer happen) ends the wait at once.
func waitUntil(ctx context.Context, what string, cond func() (seen string, ok bool, err error)) error {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var seen string
	for {
		now, ok, err := cond()
		if verbose {
			fmt.Fprintln(os.Stderr, time.Now().Format("15:04:05.000"), what, "->", ok, now, err)
		}
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if ok {
			return nil
		}
		// What cond saw as ctx ended is mostly that it ended.
		if ctx.Err() == nil || seen == "" {
			seen = now
		}
		select {
		case <-ctx.Done():
			return &WaitError{What: what, Seen: seen, Err: context.Cause(ctx)}
		case <-tick.C:
		}
	}
}

func run(sigCtx context.Context, o options) (err error) {
	chromePath, err := chrome.Find(chrome.FindOptions{Explicit: o.chrome})
	if err != nil {
		return fmt.Errorf("%w (make tools installs Chromium; or pass -chromium PATH)", err)
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "ui-screenshot-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	ps := &procs{work: work}
	defer func() {
		if serr := ps.stop(); serr != nil {
			err = errors.Join(err, serr)
		}
	}()

	bin, err := filepath.Abs(o.bin)
	if err != nil {
		return err
	}
	if o.bin == "" {
		bin = filepath.Join(work, "bin")
		began := time.Now()
		if err := build(sigCtx, bin); err != nil {
			return err
		}
		fmt.Printf("built in %v\n", time.Since(began).Round(time.Second))
	}

	ctx, cancel := context.WithTimeoutCause(sigCtx, o.timeout, &DeadlineError{Timeout: o.timeout})
	defer cancel()
	began := time.Now()
	stack, err := startDev(ctx, ps, bin, work)
	if err != nil {
		return err
	}
	fmt.Printf("dev up in %v\n", time.Since(began).Round(100*time.Millisecond))
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w\ndev's last words:\n%s", err, lastLines(stack.stderr.String(), 8))
		}
	}()

	sessionBegan := time.Now()
	page, err := runSession(ctx, ps, bin, stack)
	if err != nil {
		return err
	}
	fmt.Printf("session ran in %v\n", time.Since(sessionBegan).Round(100*time.Millisecond))

	shotsBegan := time.Now()
	if err := takePictures(ctx, ps, chromePath, work, page, stack.demo, o); err != nil {
		return err
	}
	fmt.Printf("pictures taken in %v; %v from dev's start\n", time.Since(shotsBegan).Round(100*time.Millisecond), time.Since(began).Round(100*time.Millisecond))
	return nil
}

// build builds the client and its three companions into bin (dev execs them
// from beside the binary), with the Makefile's settings so the build cache
// of `make build` serves.
func build(ctx context.Context, bin string) error {
	for _, b := range []struct {
		env  []string
		pkgs []string
	}{
		{[]string{"CGO_ENABLED=0"}, []string{"./cmd/durable-browser", "./cmd/durable-browser-worker", "./cmd/durable-browser-mcp"}},
		{nil, []string{"./cmd/durable-browser-dev"}},
	} {
		cmd := exec.CommandContext(ctx, "go", append([]string{"build", "-o", bin + string(filepath.Separator)}, b.pkgs...)...)
		cmd.Env = append(os.Environ(), b.env...)
		cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
		cmd.WaitDelay = 10 * time.Second
		if out, err := cmd.CombinedOutput(); err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("building %s: %w", strings.Join(b.pkgs, " "), context.Cause(ctx))
			}
			return fmt.Errorf("building %s: %v\n%s", strings.Join(b.pkgs, " "), err, out)
		}
	}
	return nil
}

// stack is where the running dev answers.
type stack struct {
	temporal, ui, demo string
	stderr             *devstack.SyncBuffer
}

func startDev(ctx context.Context, ps *procs, bin, work string) (*stack, error) {
	addr := func() (string, error) {
		p, err := devstack.FreePort()
		return fmt.Sprintf("127.0.0.1:%d", p), err
	}
	var s stack
	var s3 string
	for _, a := range []*string{&s.temporal, &s.ui, &s3, &s.demo} {
		var err error
		if *a, err = addr(); err != nil {
			return nil, err
		}
	}
	// durable-browser-dev itself, not `durable-browser dev`: the client execs
	// the companion from one of its threads, and a parent-death signal does
	// not survive an exec from a thread other than the first.
	dev := exec.Command(filepath.Join(bin, "durable-browser-dev"), "--state-dir", filepath.Join(work, "state"),
		"--temporal-address", s.temporal, "--ui-address", s.ui, "--s3-address", s3, "--demo-address", s.demo)
	stdout := &devstack.SyncBuffer{}
	s.stderr = &devstack.SyncBuffer{}
	dev.Stdout, dev.Stderr = stdout, s.stderr
	// SIGTERM lets dev stop its workers (and their browsers) and servers.
	if err := ps.start("dev", dev, syscall.SIGTERM, 20*time.Second); err != nil {
		return nil, err
	}
	pid := dev.Process.Pid
	err := waitUntil(ctx, `dev to print "Press Ctrl-C to stop." (Temporal, the UI, S3, the demo site and a worker up)`, func() (string, bool, error) {
		if strings.Contains(stdout.String(), "Press Ctrl-C to stop.") {
			return "", true, nil
		}
		if !stillRunning(pid) {
			return "", false, errors.New("dev exited")
		}
		return lastLine(s.stderr.String()), false, nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w\ndev's stderr:\n%s", err, lastLines(s.stderr.String(), 20))
	}
	return &s, nil
}

// session drives a session the way an agent and an operator would: the shop's
// sign-in page, a snapshot, a sign-in whose form POST the "ask" policy holds
// until an operator approves it, a screenshot, and a handoff left pending so
// that the current details have something to ask of a person.
type session struct {
	id  string
	bin string
	s   *stack
	c   client.Client
}

func runSession(ctx context.Context, ps *procs, bin string, s *stack) (page string, err error) {
	c, err := client.DialContext(ctx, client.Options{HostPort: s.temporal, Namespace: "default", Logger: logging.NewSDKLogger(zerolog.Nop())})
	if err != nil {
		return "", err
	}
	defer c.Close()
	se := &session{id: "checkout-" + time.Now().UTC().Format("150405"), bin: bin, s: s, c: c}
	site := "http://" + s.demo
	if _, err := se.cli(ctx, "call run (goto)", "call", "--address", s.temporal, "--policy", "ask", se.id, "run",
		fmt.Sprintf(`{"actions":[{"op":"goto","url":%q}]}`, site+"/shop/?utm_source=newsletter")); err != nil {
		return "", err
	}
	o, err := se.cli(ctx, "call snapshot", "call", "--address", s.temporal, se.id, "snapshot", `{"mode":"interactive"}`)
	if err != nil {
		return "", err
	}
	var snap contract.SnapshotResult
	if err := json.Unmarshal(o, &snap); err != nil {
		return "", fmt.Errorf("snapshot: %v\n%s", err, o)
	}
	email, password := ref(snap.Text, `textbox "Email"`), ref(snap.Text, `textbox "Password"`)
	if email == "" || password == "" {
		return "", fmt.Errorf("no Email and Password boxes on the demo shop's page:\n%s", snap.Text)
	}
	if err := se.signIn(ctx, email, password); err != nil {
		return "", err
	}
	if _, err := se.cli(ctx, "call screenshot", "call", "--address", s.temporal, se.id, "screenshot", `{}`); err != nil {
		return "", err
	}
	// The handoff's call returns when a person answers: it stays pending
	// while the pictures are taken, and procs.stop ends it.
	handoff := exec.Command(filepath.Join(bin, "durable-browser"), "call", "--address", s.temporal, se.id,
		"browser_request_handoff", `{"instruction":"Confirm the new device in the shop's e-mail","completion_condition":{"url":"*/shop/order/*"},"expires_in_s":900}`)
	handoffOut := &devstack.SyncBuffer{}
	handoff.Stdout, handoff.Stderr = handoffOut, handoffOut
	if err := ps.start("the handoff's call", handoff, 0, 0); err != nil {
		return "", err
	}
	return se.waitDetails(ctx, handoff, handoffOut)
}

// cli runs durable-browser with args and returns its stdout; name says
// which step it is.
func (se *session) cli(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(se.bin, "durable-browser"), args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	// Killed with this process, however it dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	err := proctie.Start(cmd)
	if err == nil {
		err = cmd.Wait()
	}
	if err != nil {
		if ctx.Err() != nil {
			return o.Bytes(), &WaitError{What: "durable-browser " + name, Err: context.Cause(ctx)}
		}
		// The step's name, not its arguments: they hold what was typed.
		return o.Bytes(), fmt.Errorf("durable-browser %s: %v\n%s%s", name, err, o.String(), e.String())
	}
	return o.Bytes(), nil
}

// signIn fills the form and clicks Sign in; the form's POST is held, and
// approved as an operator would, so the run goes on.
func (se *session) signIn(ctx context.Context, email, password string) error {
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		o, err := se.cli(ctx, "call run (sign in)", "call", "--address", se.s.temporal, se.id, "run", fmt.Sprintf(
			`{"actions":[{"op":"fill","id":%q,"value":%q},{"op":"fill","id":%q,"value":%q},{"op":"click","locator":{"role":"button","name":"Sign in"}}]}`,
			email, demosite.ShopEmail, password, demosite.ShopPassword))
		done <- result{o, err}
	}()
	var hold string
	err := waitUntil(ctx, "the sign-in's POST to be held for approval (query state)", func() (string, bool, error) {
		select {
		case r := <-done:
			return "", false, fmt.Errorf("the sign-in's run returned before its POST was held: %v\n%s", r.err, r.out)
		default:
		}
		var st contract.SessionState
		if err := se.query(ctx, contract.QueryState, &st); err != nil {
			return err.Error(), false, nil
		}
		if len(st.Holds) > 0 {
			hold = st.Holds[0].HoldID
			return "", true, nil
		}
		return "state " + st.State + ", no hold", false, nil
	})
	if err != nil {
		return err
	}
	if _, err := se.cli(ctx, "approvals approve", "approvals", "approve", "--address", se.s.temporal, "--by", "ann", se.id, hold); err != nil {
		return err
	}
	select {
	case r := <-done:
		if r.err != nil {
			return r.err
		}
		var res struct {
			OK bool `json:"ok"`
		}
		if json.Unmarshal(r.out, &res) != nil || !res.OK {
			return fmt.Errorf("the sign-in's run failed:\n%s", r.out)
		}
		return nil
	case <-ctx.Done():
		return &WaitError{What: "the sign-in's run to finish once approved", Err: context.Cause(ctx)}
	}
}

func (se *session) query(ctx context.Context, name string, out any) error {
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	v, err := se.c.QueryWorkflow(qctx, se.id, "", name)
	if err != nil {
		return err
	}
	return v.Get(out)
}

// waitDetails waits until the session's current details show the pending
// handoff, and returns the session's page in the UI.
func (se *session) waitDetails(ctx context.Context, handoff *exec.Cmd, handoffOut *devstack.SyncBuffer) (string, error) {
	err := waitUntil(ctx, "the session's current details to name the pending handoff (query __temporal_workflow_metadata)", func() (string, bool, error) {
		if !stillRunning(handoff.Process.Pid) {
			return "", false, fmt.Errorf("the handoff's call returned: %s", handoffOut)
		}
		var md sdkpb.WorkflowMetadata
		if err := se.query(ctx, "__temporal_workflow_metadata", &md); err != nil {
			return err.Error(), false, nil
		}
		return lastLine(md.GetCurrentDetails()), strings.Contains(md.GetCurrentDetails(), "waiting for a person"), nil
	})
	if err != nil {
		return "", err
	}
	desc, err := se.c.DescribeWorkflowExecution(ctx, se.id, "")
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("http://%s/namespaces/default/workflows/%s/%s/history", se.s.ui, se.id, desc.GetWorkflowExecutionInfo().GetExecution().GetRunId()), nil
}

// ref finds a snapshot line's element id: `[e4] textbox "Email"` → e4.
func ref(text, want string) string {
	for _, line := range strings.Split(text, "\n") {
		if !strings.Contains(line, want) {
			continue
		}
		i, j := strings.Index(line, "["), strings.Index(line, "]")
		if i >= 0 && j > i {
			return line[i+1 : j]
		}
	}
	return ""
}

func lastLine(s string) string {
	return lastLines(s, 1)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
