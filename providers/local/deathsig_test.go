//go:build linux

package local

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/durable-browser/durable-browser/internal/driver"
	"github.com/durable-browser/durable-browser/internal/egress"
	"github.com/durable-browser/durable-browser/internal/netguard"
	"github.com/durable-browser/durable-browser/providers"
)

const heldHelperEnv = "DURABLE_BROWSER_HELD_POST_HELPER"

// A worker dies (SIGKILL) while its request gate holds a POST for approval.
// Chrome sends a held request once its DevTools connection closes (driver
// TestHeldRequestReleasedWhenConnectionDrops), so the browser must not outlive
// the worker: its process group is gone within moments of the worker's death.
//
// What this does not prove: that the POST never leaves. The kernel closes the
// worker's sockets and sends the parent-death signal from different threads'
// exits, in no fixed order, and a Chrome that sees the connection close first
// forwards the held request to its network process within a millisecond; in
// measurements about 3 runs in 20 let it through (without startTied: every
// run). The test logs it; closing that window needs the browser dead before
// its DevTools socket closes (docs/security.md, Action policy).
func TestHeldPostDiesWithWorker(t *testing.T) {
	if n := heldPostRun(t, false); n != 0 {
		t.Logf("the held POST reached the server %d time(s): the browser saw its connection close before its death signal", n)
	}
}

// With the worker's egress proxy (as the activities give every local
// browser under the reach guard), the window above is closed: the held
// request Chrome passes on when its DevTools connection drops needs the
// proxy, which died with the worker, so it never reaches the site.
func TestHeldPostNeverLeavesWithEgress(t *testing.T) {
	for i := range 8 {
		if n := heldPostRun(t, true); n != 0 {
			t.Fatalf("run %d: the held POST reached the server %d time(s) through a dead worker's egress proxy", i, n)
		}
	}
}

// heldPostRun holds a POST in a worker process, kills the worker, and
// counts the POSTs the site received by the time the browser is gone.
func heldPostRun(t *testing.T, withEgress bool) int32 {
	t.Helper()
	var posts atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<!doctype html><title>order</title><script>fetch('/post', {method: 'POST', body: 'order'})</script>`))
	})
	mux.HandleFunc("POST /post", func(w http.ResponseWriter, r *http.Request) { posts.Add(1) })
	srv := httptest.NewServer(mux)
	defer srv.Close()

	root := t.TempDir()
	// The worker: this test binary, running only the helper below.
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), heldHelperEnv+"=1", "HELPER_ROOT="+root, "HELPER_URL="+srv.URL+"/",
		fmt.Sprintf("HELPER_EGRESS=%t", withEgress))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pidc := make(chan int, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "HELD "); ok {
				pid, _ := strconv.Atoi(rest)
				pidc <- pid
			}
		}
	}()
	var pid int
	select {
	case pid = <-pidc:
	case <-time.After(45 * time.Second):
		t.Fatal("the helper worker never held the POST")
	}
	// Whatever happens, the browser does not outlive the test.
	defer signalGroup(pid, sigKill)
	if n := posts.Load(); n != 0 {
		t.Fatalf("the held POST reached the server before the worker died (%d)", n)
	}

	// The worker dies without a chance to clean up.
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	gone := waitUntil(context.Background(), 20*time.Second, func() bool { return !pidAlive(pid) && !groupAlive(pid) })
	if !gone {
		t.Fatalf("the browser (pid %d) outlived its worker", pid)
	}
	// Close waits for requests in flight: any POST that left the browser is counted.
	srv.Close()
	return posts.Load()
}

// TestMain runs this test binary as the worker of TestHeldPostDiesWithWorker
// when that test starts it, and as the tests otherwise.
func TestMain(m *testing.M) {
	if os.Getenv(heldHelperEnv) == "1" {
		if err := heldPostWorker(); err != nil {
			fmt.Fprintln(os.Stderr, "held-post worker:", err)
			os.Exit(1)
		}
	}
	os.Exit(m.Run())
}

// heldPostWorker starts a browser through the provider, lets the page POST
// under a request gate that never decides, prints "HELD <browser pid>" and
// waits to be killed.
func heldPostWorker() error {
	ctx := context.Background()
	p, err := New(Options{ProfileRoot: os.Getenv("HELPER_ROOT"), BootID: "helper",
		Logger: zerolog.Nop()})
	if err != nil {
		return err
	}
	co := providers.CreateOptions{Tag: "held"}
	if os.Getenv("HELPER_EGRESS") == "true" {
		eg, err := egress.Start(egress.Options{Policy: &netguard.Policy{AllowPrivate: true}})
		if err != nil {
			return err
		}
		co.Egress = eg.Addr()
	}
	s, err := p.Create(ctx, co)
	if err != nil {
		return err
	}
	held := make(chan struct{}, 1)
	b, err := driver.Attach(ctx, driver.Options{CDPURL: s.CDPURL, RequestGate: func(ctx context.Context, r driver.GatedRequest) driver.GateDecision {
		held <- struct{}{}
		select {} // a person is still deciding when the worker dies
	}})
	if err != nil {
		return err
	}
	acts, err := driver.ParseActions(json.RawMessage(fmt.Sprintf(`[{"op":"goto","url":%q}]`, os.Getenv("HELPER_URL"))))
	if err != nil {
		return err
	}
	go func() { _, _ = b.Run(ctx, acts, driver.RunOptions{}) }()
	<-held
	fmt.Printf("HELD %d\n", s.PID)
	select {}
}
