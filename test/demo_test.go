package test

import (
	"context"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/internal/devstack"
	"github.com/durable-browser/durable-browser/internal/evidence"
	"github.com/durable-browser/durable-browser/test/harness"
)

// `durable-browser demo agent` runs to the end offline: the scripted agent
// signs in, searches, adds the lamp, checks out; the order waits for the
// person, who approves it with the command the demo printed; the agent
// reads the confirmation and cites its evidence. One order is placed.
func TestDemoAgent(t *testing.T) {
	env.StartWorker(t, harnessDefaults())
	before := len(env.Demo.Orders())
	out, exited, waitErr := startDemo(t, "agent")

	approveLine := regexp.MustCompile(`approve: durable-browser approvals approve (\S+) (\S+)`)
	harness.Eventually(t, 3*time.Minute, func() bool { return approveLine.MatchString(out.String()) },
		"the demo never asked for the order's approval:\n%s", out)
	if n := len(env.Demo.Orders()) - before; n != 0 {
		t.Fatalf("%d orders placed before the approval", n)
	}
	m := approveLine.FindStringSubmatch(out.String())
	if r := cli(t, "approvals", "approve", m[1], m[2]); r.code != 0 {
		t.Fatalf("approvals approve: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	select {
	case <-exited:
		if err := waitErr(); err != nil {
			t.Fatalf("demo agent: %v\n%s", err, out)
		}
	case <-time.After(3 * time.Minute):
		t.Fatalf("the demo did not finish:\n%s", out)
	}

	text := out.String()
	orders := env.Demo.Orders()[before:]
	if len(orders) != 1 || strings.Join(orders[0].Items, ",") != "Desk lamp" {
		t.Fatalf("orders: %+v\n%s", orders, text)
	}
	for _, want := range []string{"approved for you (demo): POST", "/shop/signin", "/shop/cart", "confirmed: Desk lamp"} {
		if !strings.Contains(text, want) {
			t.Fatalf("output lacks %q:\n%s", want, text)
		}
	}
	cite := regexp.MustCompile(`Order #(\d+) confirmed: Desk lamp\. Evidence: (\S+) \(sha256 ([0-9a-f]{64})\)`).FindStringSubmatch(text)
	if cite == nil {
		t.Fatalf("the agent's answer cites no order and evidence:\n%s", text)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	body, rec, err := evidence.GetVerified(ctx, env.Store, cite[2])
	if err != nil || rec == nil || rec.SHA256 != cite[3] || !strings.Contains(string(body), "Order #"+cite[1]+" confirmed") {
		t.Fatalf("the cited evidence %s: %v %+v\n%s", cite[2], err, rec, body)
	}
	t.Logf("demo output:\n%s", text)
	if strings.Contains(text, "demo-shop-pass") {
		t.Fatal("the test account's password reached the output")
	}
}

// startDemo runs `durable-browser demo <verb>` against the test stack until
// the test ends; exited closes when it has, and waitErr is then its exit.
func startDemo(t *testing.T, verb string) (*devstack.SyncBuffer, <-chan struct{}, func() error) {
	t.Helper()
	cmd := exec.Command(env.Bin, "demo", verb, "--address", env.Temporal.Address(), "--site", env.Demo.URL(), "--timeout", "4m")
	out := &devstack.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var err error
	exited := make(chan struct{})
	go func() { err = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	})
	return out, exited, func() error { <-exited; return err }
}

// `durable-browser demo handoff`: the agent cannot pass the person-only
// check, asks for a person and waits; the demo prints the command that
// answers; the answer (here: cancelled, with a note) reaches the agent.
func TestDemoHandoff(t *testing.T) {
	env.StartWorker(t, harnessDefaults())
	out, exited, waitErr := startDemo(t, "handoff")
	answer := regexp.MustCompile(`cancel: durable-browser handoff cancel (\S+) (\S+)`)
	harness.Eventually(t, 3*time.Minute, func() bool { return answer.MatchString(out.String()) },
		"the demo never printed how to answer the handoff:\n%s", out)
	select {
	case <-exited:
		t.Fatalf("the demo ended while the agent waited for a person:\n%s", out)
	default:
	}
	m := answer.FindStringSubmatch(out.String())
	if r := cli(t, "handoff", "cancel", m[1], m[2], "--note", "not now"); r.code != 0 {
		t.Fatalf("handoff cancel: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	select {
	case <-exited:
	case <-time.After(3 * time.Minute):
		t.Fatalf("the demo did not finish:\n%s", out)
	}
	if err := waitErr(); err != nil {
		t.Fatalf("demo handoff: %v\n%s", err, out)
	}
	text := out.String()
	t.Logf("demo output:\n%s", text)
	for _, want := range []string{"press and hold", "browser_request_handoff", `The person answered cancelled`, `(note: "not now")`, "the check is passed: false"} {
		if !strings.Contains(text, want) {
			t.Fatalf("output lacks %q:\n%s", want, text)
		}
	}
}
