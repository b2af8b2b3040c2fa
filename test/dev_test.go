package test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/devstack"
	"github.com/durable-browser/durable-browser/internal/evidence"
	"github.com/durable-browser/durable-browser/internal/logging"
	"github.com/durable-browser/durable-browser/test/harness"
)

// devAddrs are free loopback addresses for every service dev runs.
type devAddrs struct{ temporal, ui, s3, demo string }

func freeDevAddrs(t *testing.T) devAddrs {
	t.Helper()
	addr := func() string {
		p, err := devstack.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("127.0.0.1:%d", p)
	}
	return devAddrs{temporal: addr(), ui: addr(), s3: addr(), demo: addr()}
}

func (a devAddrs) flags() []string {
	return []string{"--temporal-address", a.temporal, "--ui-address", a.ui, "--s3-address", a.s3, "--demo-address", a.demo}
}

// cleanEnv is the test's environment without any DURABLE_BROWSER_ setting,
// so only what a test sets reaches the binary.
func cleanEnv(extra ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DURABLE_BROWSER_") {
			out = append(out, kv)
		}
	}
	return append(out, extra...)
}

// devProc is `durable-browser dev` running as a child process.
type devProc struct {
	cmd            *exec.Cmd
	stdout, stderr *devstack.SyncBuffer
	done           chan struct{}
	err            error
}

// startDev starts dev in its own process group; cleanup stops it and, as a
// last resort, kills anything still naming the state directory.
func startDev(t *testing.T, stateDir string, args ...string) *devProc {
	t.Helper()
	cmd := exec.Command(env.Bin, append([]string{"dev", "--state-dir", stateDir, "--log-level", "info"}, args...)...)
	cmd.Env = cleanEnv()
	p := &devProc{cmd: cmd, stdout: &devstack.SyncBuffer{}, stderr: &devstack.SyncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
		}
		harness.KillUnder(stateDir)
	})
	return p
}

// exited reports whether the process has ended.
func (p *devProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// waitOut waits for stdout to contain want, failing early if dev exits.
func (p *devProc) waitOut(t *testing.T, timeout time.Duration, want string) {
	t.Helper()
	harness.Eventually(t, timeout, func() bool {
		return strings.Contains(p.stdout.String(), want) || p.exited()
	}, "dev did not print %q\nstdout:\n%s\nstderr:\n%s", want, p.stdout, p.stderr)
	if !strings.Contains(p.stdout.String(), want) {
		t.Fatalf("dev exited (%v) before printing %q\nstdout:\n%s\nstderr:\n%s", p.err, want, p.stdout, p.stderr)
	}
}

// interrupt sends Ctrl-C and waits for a clean exit.
func (p *devProc) interrupt(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("dev did not exit within 60s of Ctrl-C\nstderr:\n%s", p.stderr)
	}
	if p.err != nil {
		t.Fatalf("dev exited with %v after Ctrl-C\nstderr:\n%s", p.err, p.stderr)
	}
}

// alive reports whether pid still runs (a zombie does not count).
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

var smokeID = regexp.MustCompile(`Smoke workflow (smoke-\d+) opened`)

// `dev --smoke` starts the whole stack, runs the smoke workflow against the
// demo site, serves the UI, and on Ctrl-C stops everything, a live browser
// session included, leaving no process behind. A second start on the same
// state directory still knows the first run's workflows.
func TestDevSmokeStopAndRestart(t *testing.T) {
	state := t.TempDir()
	addrs := freeDevAddrs(t)
	p := startDev(t, state, append(addrs.flags(), "--smoke")...)
	p.waitOut(t, 3*time.Minute, "title: Durable Browser Demo")
	p.waitOut(t, 30*time.Second, "Press Ctrl-C to stop.")
	out := p.stdout.String()
	m := smokeID.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no smoke workflow id in stdout:\n%s", out)
	}
	smoke := m[1]
	for _, want := range []string{"http://" + addrs.ui, addrs.temporal, "http://" + addrs.s3, "http://" + addrs.demo,
		// The commands to try name the binary as started and this stack's address.
		env.Bin + " call --address " + addrs.temporal + " demo", env.Bin + " sessions --address " + addrs.temporal,
		"approvals are UNSIGNED: anyone who can signal this namespace can approve"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout does not mention %q:\n%s", want, out)
		}
	}

	resp, err := http.Get("http://" + addrs.ui + "/namespaces/default/workflows")
	if err != nil {
		t.Fatalf("UI: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("UI answered %s", resp.Status)
	}

	// A session left open when Ctrl-C comes: its Chrome must go too.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	call := exec.CommandContext(ctx, env.Bin, "call", "--address", addrs.temporal, "dev-e2e",
		"run", fmt.Sprintf(`{"actions":[{"op":"goto","url":"http://%s/"}]}`, addrs.demo))
	call.Env = cleanEnv()
	if o, err := call.CombinedOutput(); err != nil {
		t.Fatalf("call: %v\n%s", err, o)
	}

	// dev files evidence into its own bucket; `evidence get` with no bucket named reads it
	// back with dev's credentials.
	shot := exec.CommandContext(ctx, env.Bin, "call", "--address", addrs.temporal, "dev-e2e", "screenshot")
	shot.Env = cleanEnv()
	o, err := shot.Output()
	var res contract.ScreenshotResult
	if err != nil || json.Unmarshal(o, &res) != nil || res.Evidence.Key == "" {
		t.Fatalf("screenshot: %v\n%s", err, o)
	}
	file := filepath.Join(t.TempDir(), "shot.png")
	get := exec.CommandContext(ctx, env.Bin, "evidence", "get", "--s3-endpoint", "http://"+addrs.s3, "-o", file, res.Evidence.Key)
	get.Env = cleanEnv("AWS_ACCESS_KEY_ID=", "AWS_EC2_METADATA_DISABLED=true")
	if o, err := get.CombinedOutput(); err != nil {
		t.Fatalf("evidence get: %v\n%s", err, o)
	}
	if b, err := os.ReadFile(file); err != nil || evidence.SHA256Hex(b) != res.Evidence.SHA256 {
		t.Fatalf("evidence get wrote %d bytes (%v), want sha256 %s", len(b), err, res.Evidence.SHA256)
	}

	var s3pid, chromePIDs []int
	pids := harness.PIDsUnder(state)
	for _, pid := range pids {
		switch c := cmdline(pid); {
		case strings.Contains(c, "versitygw"):
			s3pid = append(s3pid, pid)
		case strings.Contains(c, "chrom"):
			chromePIDs = append(chromePIDs, pid)
		}
	}
	t.Logf("while running: %d processes under the state dir, S3 server %v, Chromium %d", len(pids), s3pid, len(chromePIDs))
	if len(s3pid) == 0 || len(chromePIDs) == 0 {
		t.Fatalf("while running, want the S3 server and Chromium under %s; found %d processes:\n%v", state, len(pids), pids)
	}

	p.interrupt(t)
	if left := harness.PIDsUnder(state); len(left) > 0 {
		var desc []string
		for _, pid := range left {
			desc = append(desc, fmt.Sprintf("%d: %.200s", pid, cmdline(pid)))
		}
		t.Fatalf("processes left after Ctrl-C:\n%s", strings.Join(desc, "\n"))
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Fatalf("pid %d (%.200s) still runs after Ctrl-C", pid, cmdline(pid))
		}
	}

	// Second start, same state: the first smoke workflow is still there.
	addrs2 := freeDevAddrs(t)
	p2 := startDev(t, state, addrs2.flags()...)
	p2.waitOut(t, 3*time.Minute, "Press Ctrl-C to stop.")
	c, err := client.Dial(client.Options{HostPort: addrs2.temporal, Namespace: "default", Logger: logging.NewSDKLogger(zerolog.Nop())})
	if err != nil {
		t.Fatal(err)
	}
	desc, err := c.DescribeWorkflowExecution(ctx, smoke, "")
	c.Close()
	if err != nil {
		t.Fatalf("the first run's smoke workflow %s is gone after a restart: %v", smoke, err)
	}
	if st := desc.GetWorkflowExecutionInfo().GetStatus(); st != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		t.Fatalf("smoke workflow %s is %s", smoke, st)
	}
	p2.interrupt(t)
	if left := harness.PIDsUnder(state); len(left) > 0 {
		t.Fatalf("processes left after the second Ctrl-C: %v", left)
	}
}

// runRefused runs the binary, expecting it to exit non-zero promptly, and
// returns its stderr.
func runRefused(t *testing.T, stateDir string, environ []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, env.Bin, args...)
	cmd.Env = environ
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr, stdout devstack.SyncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if stateDir != "" {
		defer harness.KillUnder(stateDir)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() == 0 {
		t.Fatalf("%v: want a non-zero exit, got %v\nstdout:\n%s\nstderr:\n%s", args, err, &stdout, &stderr)
	}
	return stderr.String()
}

// dev and worker refuse a taken port and bad configuration at start, naming
// the flag (and its environment variable) and the fix.
func TestDevRefusals(t *testing.T) {
	t.Run("taken port", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		state := t.TempDir()
		addrs := freeDevAddrs(t)
		addrs.s3 = l.Addr().String()
		stderr := runRefused(t, state, cleanEnv(), append([]string{"dev", "--state-dir", state}, addrs.flags()...)...)
		for _, want := range []string{addrs.s3, "already in use", "--s3-address"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr does not name %q:\n%s", want, stderr)
			}
		}
		if left := harness.PIDsUnder(state); len(left) > 0 {
			t.Fatalf("a refused start left processes: %v", left)
		}
	})

	cases := []struct {
		name    string
		environ []string
		args    []string
		want    []string
	}{
		{"duration from env", cleanEnv("DURABLE_BROWSER_REAP_INTERVAL=nonsense"), []string{"worker"},
			[]string{"--reap-interval", "DURABLE_BROWSER_REAP_INTERVAL", `"nonsense" is not a duration`, "e.g. 90s"}},
		{"bool from env", cleanEnv("DURABLE_BROWSER_HEADED=maybe"), []string{"dev"},
			[]string{"--headed", "DURABLE_BROWSER_HEADED", `"maybe" is not a boolean`, "use true or false"}},
		{"log level", cleanEnv(), []string{"dev", "--log-level=loud"},
			[]string{"--log-level", "DURABLE_BROWSER_LOG_LEVEL", `"loud"`, "use trace, debug, info, warn or error"}},
		{"worker without bucket", cleanEnv(), []string{"worker", "--address", "127.0.0.1:1"},
			[]string{"--s3-bucket", "DURABLE_BROWSER_S3_BUCKET", "no evidence bucket", "name an S3 bucket"}},
		{"worker bad endpoint", cleanEnv(), []string{"worker", "--address", "127.0.0.1:1", "--s3-bucket", "b", "--s3-endpoint", "127.0.0.1:9000"},
			[]string{"--s3-endpoint", "is not a URL", "http://127.0.0.1:9000"}},
		{"worker bad encryption", cleanEnv("DURABLE_BROWSER_S3_BUCKET=b"), []string{"worker", "--address", "127.0.0.1:1", "--s3-sse", "rot13"},
			[]string{"--s3-sse", "not a known encryption", "use AES256 or aws:kms"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			state := t.TempDir()
			args := c.args
			if args[0] == "dev" {
				// Free ports and a private state dir, so a start that was
				// wrongly allowed cannot touch anything else.
				args = append(append(append([]string{}, args...), "--state-dir", state), freeDevAddrs(t).flags()...)
			}
			stderr := runRefused(t, state, c.environ, args...)
			for _, want := range c.want {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr does not contain %q:\n%s", want, stderr)
				}
			}
		})
	}
}
