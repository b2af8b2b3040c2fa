package test

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/internal/devstack"
	"github.com/durable-browser/durable-browser/test/harness"
)

// `durable-browser demo crash` runs to the end offline on a stack of its
// own: the worker serving the agent's browser is killed (SIGKILL) once the
// order has reached the shop and before its answer does; another worker
// starts; the agent's run answers effect_unknown, the agent looks again
// (its browser was replaced), finds the order in the account and cites it.
// The shop counted exactly one order, and nothing the demo started is left
// running after it exits.
func TestDemoCrash(t *testing.T) {
	// The demo's stack, workers and browsers live under it; short, as
	// Chrome's socket path must be.
	tmp, err := os.MkdirTemp("", "dbc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(tmp) })
	cmd := exec.Command(env.Bin, "demo", "crash", "--timeout", "4m")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "OPENAI_API_KEY=", "ANTHROPIC_API_KEY=")
	out := &devstack.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		harness.KillUnder(tmp)
	})
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("demo crash: %v\n%s", err, out)
		}
	case <-time.After(5 * time.Minute):
		t.Fatalf("the demo did not finish:\n%s", out)
	}
	text := out.String()
	t.Logf("demo output:\n%s", text)

	for _, want := range []string{
		"approved for you (demo): POST", "/shop/order",
		"the order reached the shop (orders counted: 1)",
		"killing worker 1 (pid", "worker 2 started",
		"orders the shop counted: 1 #1001 (Desk lamp)",
		"exactly one order",
	} {
		if !strings.Contains(text, want) {
			t.Fatalf("output lacks %q", want)
		}
	}
	// The steps, in order: the run that clicked "Place order" answers
	// effect_unknown, the next look finds a new browser, and no second
	// "Place order" click follows.
	steps := regexp.MustCompile(`(?m)^\s+\d+\. (\S+)\s+(\S+)\s+(.*)$`).FindAllStringSubmatch(text, -1)
	unknown, replaced, clicksAfter := -1, -1, 0
	for i, s := range steps {
		switch {
		case s[2] == "effect_unknown" && unknown < 0:
			unknown = i
		case s[2] == "session_replaced" && replaced < 0:
			replaced = i
		}
	}
	if unknown < 0 || replaced != unknown+1 || steps[unknown][1] != "run" || !strings.Contains(steps[unknown][3], "wait text=confirmed") {
		t.Fatalf("want a run answering effect_unknown, then a look answering session_replaced; steps: %q", steps)
	}
	for _, s := range steps[unknown+1:] {
		if s[1] == "run" && strings.Contains(s[3], "wait text=Place order") {
			clicksAfter++
		}
	}
	if clicksAfter != 0 {
		t.Fatalf("the agent went back to the checkout after effect_unknown: %q", steps)
	}
	if !regexp.MustCompile(`agent: Order #1001 confirmed: Desk lamp\. Evidence: \S+ \(sha256 [0-9a-f]{64}\)`).MatchString(text) {
		t.Fatal("the agent's answer cites no order and evidence")
	}
	if strings.Contains(text, "demo-shop-pass") {
		t.Fatal("the test account's password reached the output")
	}
	// Everything the demo started (Temporal in it, S3, the workers, their
	// browsers) is gone once it has exited.
	if pids := devstack.PIDsUnder(tmp); len(pids) != 0 {
		t.Fatalf("processes left running after the demo: %v", pids)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("the demo left files in its temporary directory: %v", names)
	}
}
