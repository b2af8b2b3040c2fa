//go:build unix

package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/chrome"
	"github.com/durable-browser/durable-browser/providers"
)

func newContextProvider(tb testing.TB, root string) *Provider {
	tb.Helper()
	chromePath(tb) // these tests need a browser; New finds it as a worker does
	p, err := New(Options{
		ProfileRoot: root,
		BootID:      "ctx1",
		Isolation:   IsolationContext,
		Logger:      zerolog.New(zerolog.NewTestWriter(tb)).Level(zerolog.WarnLevel),
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		recs, _ := p.Records()
		for _, r := range recs {
			if err := p.Release(ctx, r.Tag); err != nil {
				tb.Errorf("cleanup release %s: %v", r.Tag, err)
			}
		}
		p.Close(ctx)
	})
	return p
}

// contextsAndPages lists the browser's contexts, and its page targets by context.
func contextsAndPages(t *testing.T, ws string) (map[string]bool, map[string]int) {
	t.Helper()
	ids, ts := contextsAndTargets(t, ws)
	pages := map[string]int{}
	for _, ti := range ts {
		if ti.Type == "page" {
			pages[ti.ContextID]++
		}
	}
	return ids, pages
}

// browserUITargets lists the URLs of the browser's browser_ui targets
// (Chrome's own WebUI, such as the omnibox popup).
func browserUITargets(t *testing.T, ws string) []string {
	t.Helper()
	_, ts := contextsAndTargets(t, ws)
	var out []string
	for _, ti := range ts {
		if ti.Type == "browser_ui" {
			out = append(out, ti.URL)
		}
	}
	return out
}

// contextsAndTargets is browserContexts and targets on a connection of
// the test's own.
func contextsAndTargets(t *testing.T, ws string) (map[string]bool, []target) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := chrome.Dial(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ids, err := browserContexts(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := targets(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	return ids, ts
}

// renderersSettle waits up to 10 s for the renderer processes of the
// browser's process group to be at most max (a closed page's renderer ends
// a moment after it), and returns the last count. Where there is no /proc
// it reports ok.
func renderersSettle(pgid, max int) (int, bool) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := renderers(pgid)
		if err != nil {
			return 0, true
		}
		if n <= max || time.Now().After(deadline) {
			return n, n <= max
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func renderers(pgid int) (int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pg, err := syscall.Getpgid(pid); err != nil || pg != pgid {
			continue
		}
		cl, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if strings.Contains(strings.ReplaceAll(string(cl), "\x00", " "), "--type=renderer") {
			n++
		}
	}
	return n, nil
}

func TestParseIsolation(t *testing.T) {
	for in, want := range map[string]Isolation{"": IsolationProcess, "process": IsolationProcess, " Context ": IsolationContext} {
		if got, err := ParseIsolation(in); err != nil || got != want {
			t.Errorf("ParseIsolation(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseIsolation("thread"); err == nil {
		t.Error("ParseIsolation(thread) = nil error")
	}
}

// TestContextSessions: under context isolation plain sessions are contexts
// of one shared browser, each with its own downloads directory and page;
// a session needing launch options of its own gets its own browser;
// release disposes of the context alone; a crash of the shared browser
// ends its sessions, and the next create starts a new one; the release of
// its last session ends it, and so does Close.
func TestContextSessions(t *testing.T) {
	root := t.TempDir()
	p := newContextProvider(t, root)
	ctx := testCtx(t)

	a, err := p.Create(ctx, providers.CreateOptions{Tag: "ctx-a"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Create(ctx, providers.CreateOptions{Tag: "ctx-b", Session: &contract.SessionOptions{ActionPolicy: contract.PolicyAllow}})
	if err != nil {
		t.Fatal(err)
	}
	if a.Isolation != "context" || b.Isolation != "context" {
		t.Fatalf("isolation = %q, %q; want context for plain sessions", a.Isolation, b.Isolation)
	}
	if a.PID != b.PID || a.CDPURL != b.CDPURL {
		t.Errorf("plain sessions are in different browsers: pids %d and %d", a.PID, b.PID)
	}
	if a.BrowserContextID == "" || a.BrowserContextID == b.BrowserContextID || a.TargetID == "" || a.TargetID == b.TargetID {
		t.Errorf("contexts %q/%q, pages %q/%q: want one of each per session", a.BrowserContextID, b.BrowserContextID, a.TargetID, b.TargetID)
	}
	if a.DownloadDir == b.DownloadDir {
		t.Errorf("both sessions download to %s", a.DownloadDir)
	}
	for _, d := range []string{a.DownloadDir, b.DownloadDir} {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			t.Errorf("download directory %s: %v", d, err)
		}
	}
	ids, pages := contextsAndPages(t, a.CDPURL)
	if !ids[a.BrowserContextID] || !ids[b.BrowserContextID] || pages[a.BrowserContextID] != 1 || pages[b.BrowserContextID] != 1 {
		t.Errorf("the shared browser has contexts %v and pages %v; want both sessions' with one page each", ids, pages)
	}
	// No page but the sessions' (no start window is opened), no omnibox
	// WebUI, and so one renderer per session, and at most Chrome's spare.
	if len(pages) != 2 {
		t.Errorf("the shared browser has pages in %d contexts %v; want the two sessions' only", len(pages), pages)
	}
	if ui := browserUITargets(t, a.CDPURL); len(ui) > 0 {
		t.Errorf("the shared browser has browser_ui targets %v: each holds a renderer of its own", ui)
	}
	if n, ok := renderersSettle(a.PID, 3); !ok {
		t.Errorf("the shared browser has %d renderer processes for 2 sessions; want one each and at most a spare", n)
	}

	// Found again by tag: the same context and page.
	again, err := p.Create(ctx, providers.CreateOptions{Tag: "ctx-a"})
	if err != nil {
		t.Fatal(err)
	}
	if !again.Found || again.BrowserContextID != a.BrowserContextID || again.TargetID != a.TargetID {
		t.Errorf("create again = found %v context %q page %q; want the first", again.Found, again.BrowserContextID, again.TargetID)
	}

	// A recording needs its own process.
	own, err := p.Create(ctx, providers.CreateOptions{Tag: "ctx-rec", Record: true})
	if err != nil {
		t.Fatal(err)
	}
	if own.Isolation != "process" || own.PID == a.PID {
		t.Errorf("recorded session: isolation %q pid %d (shared %d); want a browser of its own", own.Isolation, own.PID, a.PID)
	}
	if err := p.Release(ctx, "ctx-rec"); err != nil {
		t.Fatal(err)
	}
	processGone(t, own.PID)

	// Release disposes of a's context and directory; b and the browser stay.
	if err := p.Release(ctx, "ctx-a"); err != nil {
		t.Fatal(err)
	}
	ids, pages = contextsAndPages(t, b.CDPURL)
	if ids[a.BrowserContextID] || pages[a.BrowserContextID] != 0 {
		t.Errorf("released context %s is still there (pages %d)", a.BrowserContextID, pages[a.BrowserContextID])
	}
	if _, err := os.Stat(filepath.Dir(a.DownloadDir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("released session directory: %v; want it gone", err)
	}
	if _, err := p.Find(ctx, "ctx-b"); err != nil {
		t.Fatalf("b after releasing a: %v", err)
	}

	// The shared browser crashes: its sessions are gone, the next create
	// starts a new shared browser.
	if err := syscall.Kill(b.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for pidAlive(b.PID) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := p.Find(ctx, "ctx-b"); !errors.Is(err, providers.ErrNotFound) {
		t.Errorf("find after the shared browser died = %v; want ErrNotFound", err)
	}
	c, err := p.Create(ctx, providers.CreateOptions{Tag: "ctx-c"})
	if err != nil {
		t.Fatal(err)
	}
	if c.PID == b.PID || c.Isolation != "context" {
		t.Errorf("after the crash: pid %d isolation %q; want a new shared browser", c.PID, c.Isolation)
	}
	if err := p.Release(ctx, "ctx-b"); err != nil {
		t.Fatalf("releasing a session of the dead browser: %v", err)
	}
	processGone(t, b.PID)
	left, _ := os.ReadDir(filepath.Join(root, "shared"))
	if len(left) != 1 {
		t.Errorf("shared directories after the crash: %d; want the new browser's only", len(left))
	}

	// Releasing its last session ends the shared browser and its directory.
	if err := p.Release(ctx, "ctx-c"); err != nil {
		t.Fatal(err)
	}
	processGone(t, c.PID)
	if left, _ := os.ReadDir(filepath.Join(root, "shared")); len(left) != 0 {
		t.Errorf("shared directories after the last release: %d", len(left))
	}
	// Close ends a running one too.
	d, err := p.Create(ctx, providers.CreateOptions{Tag: "ctx-d"})
	if err != nil {
		t.Fatal(err)
	}
	p.Close(ctx)
	processGone(t, d.PID)
	if left, _ := os.ReadDir(filepath.Join(root, "shared")); len(left) != 0 {
		t.Errorf("shared directories after Close: %d", len(left))
	}
	if _, err := os.Stat(filepath.Dir(d.DownloadDir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Close left the session directory: %v", err)
	}
	if _, err := p.Create(ctx, providers.CreateOptions{Tag: "ctx-e"}); err == nil {
		t.Error("create after Close succeeded")
	}
}
