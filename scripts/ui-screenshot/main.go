// Command ui-screenshot takes the pictures of the Temporal Web UI that
// docs/operations.md shows: it builds durable-browser, starts `dev` on free
// loopback ports, runs a short session through `durable-browser call` (a
// page, a snapshot, a typed e-mail address, then a handoff left pending),
// and has headless Chromium photograph the session's page in the UI.
//
//	go run ./scripts/ui-screenshot            # writes docs/img/ui-session-*.png
//	go run ./scripts/ui-screenshot -out /tmp  # elsewhere
//
// It stops dev (and with it every browser and server) before it exits.
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
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/sdk/client"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/devstack"
	"github.com/durable-browser/durable-browser/internal/logging"
)

func main() {
	out := flag.String("out", "docs/img", "directory the PNGs are written to")
	chrome := flag.String("chromium", "/usr/bin/chromium", "Chromium executable")
	flag.Parse()
	if err := run(*out, *chrome); err != nil {
		fmt.Fprintln(os.Stderr, "ui-screenshot:", err)
		os.Exit(1)
	}
}

func run(out, chrome string) error {
	if _, err := os.Stat(chrome); err != nil {
		return fmt.Errorf("no Chromium at %s (make tools installs it; or pass -chromium PATH): %w", chrome, err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "ui-screenshot-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	bin := filepath.Join(work, "bin")
	// dev execs its companions from beside the binary.
	for _, name := range []string{"durable-browser", "durable-browser-worker", "durable-browser-mcp", "durable-browser-dev"} {
		if o, err := exec.Command("go", "build", "-o", filepath.Join(bin, name), "./cmd/"+name).CombinedOutput(); err != nil {
			return fmt.Errorf("building %s: %v\n%s", name, err, o)
		}
	}
	addr := func() string {
		p, err := devstack.FreePort()
		if err != nil {
			panic(err)
		}
		return fmt.Sprintf("127.0.0.1:%d", p)
	}
	temporal, ui, s3, demo := addr(), addr(), addr(), addr()
	dev := exec.Command(filepath.Join(bin, "durable-browser"), "dev", "--state-dir", filepath.Join(work, "state"),
		"--temporal-address", temporal, "--ui-address", ui, "--s3-address", s3, "--demo-address", demo)
	stdout, stderr := &devstack.SyncBuffer{}, &devstack.SyncBuffer{}
	dev.Stdout, dev.Stderr = stdout, stderr
	dev.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := dev.Start(); err != nil {
		return err
	}
	defer func() {
		devstack.StopGroup(dev, syscall.SIGINT, 60*time.Second)
		devstack.KillUnder(work)
	}()
	if err := waitFor(3*time.Minute, func() bool { return strings.Contains(stdout.String(), "Press Ctrl-C to stop.") }); err != nil {
		return fmt.Errorf("dev did not come up: %v\n%s", err, stderr)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	id := "checkout-" + time.Now().UTC().Format("150405")
	call := func(args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "durable-browser"), append([]string{"call", "--address", temporal}, args...)...)
		var e bytes.Buffer
		cmd.Stderr = &e
		o, err := cmd.Output()
		if err != nil {
			return o, fmt.Errorf("call %s: %v\n%s%s", strings.Join(args, " "), err, o, e.String())
		}
		return o, nil
	}
	site := "http://" + demo
	if _, err := call("--policy", "ask", id, "run", fmt.Sprintf(`{"actions":[{"op":"goto","url":%q}]}`, site+"/shop/?utm_source=newsletter")); err != nil {
		return err
	}
	o, err := call(id, "snapshot", `{"mode":"interactive"}`)
	var snap contract.SnapshotResult
	if err != nil || json.Unmarshal(o, &snap) != nil {
		return fmt.Errorf("snapshot: %v %s", err, o)
	}
	email := ref(snap.Text, `textbox "Email"`)
	if email == "" {
		return fmt.Errorf("no Email box on the demo shop's page:\n%s", snap.Text)
	}
	if _, err := call(id, "run", fmt.Sprintf(`{"actions":[{"op":"fill","id":%q,"value":"ann@example.com"}]}`, email)); err != nil {
		return err
	}
	if _, err := call(id, "screenshot", `{}`); err != nil {
		return err
	}
	// The handoff waits for a person: left pending while the pictures are taken.
	handoff := exec.CommandContext(ctx, filepath.Join(bin, "durable-browser"), "call", "--address", temporal, id,
		"browser_request_handoff", `{"instruction":"Sign in with 2FA","completion_condition":{"text":"Signed in"},"expires_in_s":900}`)
	if err := handoff.Start(); err != nil {
		return err
	}
	defer func() { _ = handoff.Process.Kill(); _ = handoff.Wait() }()

	c, err := client.Dial(client.Options{HostPort: temporal, Namespace: "default", Logger: logging.NewSDKLogger(zerolog.Nop())})
	if err != nil {
		return err
	}
	defer c.Close()
	if err := waitFor(2*time.Minute, func() bool {
		v, err := c.QueryWorkflow(ctx, id, "", "__temporal_workflow_metadata")
		var md sdkpb.WorkflowMetadata
		return err == nil && v.Get(&md) == nil && strings.Contains(md.GetCurrentDetails(), "waiting for a person")
	}); err != nil {
		return fmt.Errorf("the handoff never showed in the current details: %v\n%s", err, stderr)
	}
	desc, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return err
	}
	page := fmt.Sprintf("http://%s/namespaces/default/workflows/%s/%s/history", ui, id, desc.GetWorkflowExecutionInfo().GetExecution().GetRunId())
	for _, shot := range []struct {
		name   string
		width  int
		height int
	}{{"ui-session.png", 1400, 1500}} {
		if err := screenshot(ctx, chrome, work, page, filepath.Join(out, shot.name), shot.width, shot.height); err != nil {
			return err
		}
		fmt.Println("wrote", filepath.Join(out, shot.name))
	}
	return nil
}

// screenshot has headless Chromium load url and write a PNG. The UI is a
// JavaScript app: the virtual time budget lets it fetch and render first.
func screenshot(ctx context.Context, chrome, work, url, file string, w, h int) error {
	abs, err := filepath.Abs(file)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, chrome, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--user-data-dir="+filepath.Join(work, "shot-profile"), fmt.Sprintf("--window-size=%d,%d", w, h),
		"--virtual-time-budget=20000", "--screenshot="+abs, url)
	if o, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("chromium: %v\n%s", err, o)
	}
	if _, err := os.Stat(abs); err != nil {
		return errors.New("chromium wrote no screenshot")
	}
	return nil
}

// ref finds a snapshot line's element id: `[e4] textbox "Email"` → e4.
func ref(text, want string) string {
	if ids := contract.LineIDs(text, want); len(ids) > 0 {
		return ids[0]
	}
	return ""
}

func waitFor(timeout time.Duration, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %v", timeout)
		}
		time.Sleep(250 * time.Millisecond)
	}
	return nil
}
