package capture

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"
)

// browser is the one Chromium shared by every test in the package.
var browser *rod.Browser

func TestMain(m *testing.M) {
	os.Exit(runWithChrome(m))
}

func runWithChrome(m *testing.M) int {
	dir, err := os.MkdirTemp("", "capture-chrome-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	cmd, ws, err := startChrome(ctx, dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "start chromium:", err)
		return 1
	}
	defer func() {
		// Kill the whole process group (Chrome's helpers too) and reap it.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	}()
	browser = rod.New().ControlURL(ws).Context(ctx)
	if err := browser.Connect(); err != nil {
		fmt.Fprintln(os.Stderr, "connect:", err)
		return 1
	}
	return m.Run()
}

// startChrome starts /usr/bin/chromium headless on a free port and returns
// its DevTools websocket address, read from its stderr.
func startChrome(ctx context.Context, dir string) (*exec.Cmd, string, error) {
	cmd := exec.Command("/usr/bin/chromium",
		"--headless=new", "--remote-debugging-port=0", "--user-data-dir="+dir,
		"--no-sandbox", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--no-first-run", "--hide-scrollbars", "--disable-gpu", "about:blank")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			if i := strings.Index(line, "ws://"); !sent && strings.Contains(line, "DevTools listening on") && i >= 0 {
				found <- strings.TrimSpace(line[i:])
				sent = true
			}
		}
		// Keep draining until exit so Chrome never blocks on a full pipe.
		close(found)
	}()
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	select {
	case ws, ok := <-found:
		if ok {
			return cmd, ws, nil
		}
		err = fmt.Errorf("chromium exited before listening")
	case <-wait.Done():
		err = fmt.Errorf("chromium did not listen: %w", wait.Err())
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Wait()
	return nil, "", err
}

// serve serves pages (path -> HTML) on loopback.
func serve(t *testing.T, pages map[string]string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// openPage opens url in a new tab with an 800x600 viewport at dpr and
// waits for it to load.
func openPage(t *testing.T, url string, dpr float64) *rod.Page {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	p, err := browser.Context(ctx).Page(proto.TargetCreateTarget{URL: "about:blank"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	if err := (proto.EmulationSetDeviceMetricsOverride{Width: 800, Height: 600, DeviceScaleFactor: dpr}).Call(p); err != nil {
		t.Fatal(err)
	}
	if err := p.Navigate(url); err != nil {
		t.Fatal(err)
	}
	if err := p.WaitLoad(); err != nil {
		t.Fatal(err)
	}
	return p
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}
