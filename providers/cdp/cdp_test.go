//go:build unix

package cdp

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/chrome"
	"github.com/durable-browser/durable-browser/providers"
)

// runChrome starts a Chrome of the test's own, as a user would, and kills
// it (and its process group) in cleanup. It returns the pid and port.
func runChrome(t *testing.T) (int, int) {
	t.Helper()
	path, err := chrome.Find(chrome.FindOptions{})
	if err != nil {
		t.Fatalf("this test needs Chromium: %v", err)
	}
	dir := t.TempDir()
	args := []string{"--remote-debugging-port=0", "--user-data-dir=" + dir, "--headless=new",
		"--no-first-run", "--no-default-browser-check", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "about:blank"}
	if os.Geteuid() == 0 {
		args = append(args, "--no-sandbox")
	}
	cmd := exec.Command(path, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	})
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(filepath.Join(dir, "DevToolsActivePort")); err == nil {
			if port, _, err := chrome.ParseDevToolsActivePort(b); err == nil {
				return cmd.Process.Pid, port
			}
		}
		select {
		case <-done:
			t.Fatal("chrome exited at start")
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatal("chrome did not open its port")
	return 0, 0
}

// eventually polls cond until it holds or 10s pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		case <-tick.C:
		}
	}
}

func pageIDs(t *testing.T, ctx context.Context, ws string) map[string]targetInfo {
	t.Helper()
	c, err := chrome.Dial(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	all, err := targets(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	pages := map[string]targetInfo{}
	for id, ti := range all {
		if ti.Type == "page" {
			pages[id] = ti
		}
	}
	return pages
}

// openPopup makes the page open another through window.open.
func openPopup(t *testing.T, ctx context.Context, ws, target string) {
	t.Helper()
	c, err := chrome.Dial(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var att struct {
		SessionID string `json:"sessionId"`
	}
	if err := c.Call(ctx, "Target.attachToTarget", map[string]any{"targetId": target, "flatten": true}, &att); err != nil {
		t.Fatal(err)
	}
	if err := c.CallSession(ctx, att.SessionID, "Runtime.evaluate",
		map[string]any{"expression": "window.open('about:blank#popup'); 1", "userGesture": true}, nil); err != nil {
		t.Fatal(err)
	}
}

func TestAttachCreateFindRelease(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pid, port := runChrome(t)
	endpoint := "http://127.0.0.1:" + strconv.Itoa(port)
	p, err := New(Options{Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := chrome.ResolveWS(ctx, endpoint)
	if err != nil {
		t.Fatal(err)
	}
	before := pageIDs(t, ctx, ws)
	if len(before) == 0 {
		t.Fatal("the user's browser shows no page")
	}

	a, err := p.Create(ctx, providers.CreateOptions{Tag: "a", Stealth: true})
	if err != nil {
		t.Fatal(err)
	}
	again, err := p.Create(ctx, providers.CreateOptions{Tag: "a"})
	if err != nil || again.TargetID != a.TargetID || !again.Found || a.Found {
		t.Fatalf("second create: %v, target %s want %s", err, again.TargetID, a.TargetID)
	}
	if a.CDPURL != ws || a.Provider != Name || !a.Stealth || a.PID != 0 {
		t.Fatalf("session %+v", a)
	}
	b, err := p.Create(ctx, providers.CreateOptions{Tag: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if b.TargetID == a.TargetID {
		t.Fatal("two tags share a page")
	}
	openPopup(t, ctx, ws, a.TargetID)
	var popup string
	eventually(t, "the popup to appear", func() bool {
		for id, ti := range pageIDs(t, ctx, ws) {
			if ti.OpenerID == a.TargetID {
				popup = id
			}
		}
		return popup != ""
	})

	if err := p.Release(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	after := pageIDs(t, ctx, ws)
	for _, gone := range []string{a.TargetID, popup} {
		if _, ok := after[gone]; ok {
			t.Errorf("page %s of the released session is still open", gone)
		}
	}
	if _, ok := after[b.TargetID]; !ok {
		t.Error("release closed another session's page")
	}
	for id := range before {
		if _, ok := after[id]; !ok {
			t.Errorf("release closed the user's page %s", id)
		}
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("browser died: %v", err)
	}
	if _, err := p.Find(ctx, "a"); !errors.Is(err, providers.ErrNotFound) {
		t.Fatalf("Find after release: %v", err)
	}
	if err := p.Release(ctx, "a"); err != nil {
		t.Fatal(err)
	}

	// A restarted worker (a provider that remembers nothing) finds the
	// other session in the browser.
	p2, err := New(Options{Endpoint: ws})
	if err != nil {
		t.Fatal(err)
	}
	found, err := p2.Find(ctx, "b")
	if err != nil || found.TargetID != b.TargetID {
		t.Fatalf("restarted find: %v %+v", err, found)
	}
	if _, err := p2.Find(ctx, "b"); err != nil {
		t.Fatalf("status %v", err)
	}
	if err := p2.Release(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if _, err := p2.Find(ctx, "b"); !errors.Is(err, providers.ErrNotFound) {
		t.Fatalf("status after release %v", err)
	}
	if _, err := chrome.ResolveWS(ctx, endpoint); err != nil {
		t.Fatalf("browser stopped answering: %v", err)
	}
}

func TestPageClosedElsewhereIsGone(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, port := runChrome(t)
	p, err := New(Options{Endpoint: "http://127.0.0.1:" + strconv.Itoa(port)})
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Create(ctx, providers.CreateOptions{Tag: "x"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := chrome.Dial(ctx, s.CDPURL)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Call(ctx, "Target.closeTarget", map[string]any{"targetId": s.TargetID}, nil); err != nil {
		t.Fatal(err)
	}
	c.Close()
	eventually(t, "the closed page to be reported gone", func() bool {
		_, err := p.Find(ctx, "x")
		if err != nil && !errors.Is(err, providers.ErrNotFound) {
			t.Fatal(err)
		}
		return errors.Is(err, providers.ErrNotFound)
	})
	// Creating again opens a fresh page.
	s2, err := p.Create(ctx, providers.CreateOptions{Tag: "x"})
	if err != nil || s2.TargetID == s.TargetID {
		t.Fatalf("recreate: %v", err)
	}
	if err := p.Release(ctx, "x"); err != nil {
		t.Fatal(err)
	}
}

func TestRefusals(t *testing.T) {
	for _, ep := range []string{"", "127.0.0.1:9222", "ftp://x", "http://"} {
		if _, err := New(Options{Endpoint: ep}); !errors.Is(err, chrome.ErrBadEndpoint) {
			t.Errorf("New(%q) = %v", ep, err)
		}
	}
	p, err := New(Options{Endpoint: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := p.Create(ctx, providers.CreateOptions{Tag: "a", Profile: &contract.Profile{Name: "x"}}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("profile: %v", err)
	}
	if _, err := p.Create(ctx, providers.CreateOptions{Tag: "../a"}); !errors.Is(err, ErrBadTag) {
		t.Errorf("bad tag: %v", err)
	}
	// Nothing listens: unknown tags release fine, creating says so.
	if err := p.Release(ctx, "a"); err != nil {
		t.Errorf("release unknown: %v", err)
	}
	if _, err := p.Create(ctx, providers.CreateOptions{Tag: "a"}); err == nil {
		t.Error("create against a closed port succeeded")
	}
}
