package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/internal/chrome"
	"github.com/durable-browser/durable-browser/internal/config"
	"github.com/durable-browser/durable-browser/providers/local"
)

// SessionBrowser is what a test can see of a session's browser on a worker,
// in either isolation mode: a Chrome of its own (process) or a browser
// context of the worker's shared Chrome (context). Tests that check a
// browser is held or let go use it, so they prove the same in both modes.
type SessionBrowser struct {
	// Shared: a context of the shared Chrome (WS its DevTools address,
	// Context its id); else Profile is the session's own Chrome's
	// directory, which its processes name on their command lines.
	Shared  bool
	WS      string
	Context string
	Profile string
}

// FindSessionBrowser reads the local provider's record of tag under a
// worker's profile root (records/<tag>.json), while the worker holds it.
func FindSessionBrowser(root, tag string) (SessionBrowser, error) {
	raw, err := os.ReadFile(filepath.Join(root, "records", tag+".json"))
	if err != nil {
		return SessionBrowser{}, fmt.Errorf("no browser record for %s under %s: %w", tag, root, err)
	}
	var r local.Record
	if err := json.Unmarshal(raw, &r); err != nil {
		return SessionBrowser{}, fmt.Errorf("browser record for %s: %w", tag, err)
	}
	b := SessionBrowser{Shared: r.Shared, WS: r.WSURL, Context: r.Context, Profile: r.ProfileDir}
	if b.Shared && b.Context == "" {
		return b, fmt.Errorf("the record for %s is a shared browser's with no context yet", tag)
	}
	return b, nil
}

// HeldSessionBrowser is FindSessionBrowser for a browser the test needs
// running now; it fails t when there is none.
func HeldSessionBrowser(t testing.TB, root, tag string) SessionBrowser {
	t.Helper()
	b, err := FindSessionBrowser(root, tag)
	if err != nil {
		t.Fatal(err)
	}
	if !b.Running() {
		t.Fatalf("no browser runs for %s: %v", tag, b)
	}
	return b
}

// Running reports whether the browser is still there: its own Chrome's
// processes run, or the shared Chrome still lists its context.
func (b SessionBrowser) Running() bool {
	if !b.Shared {
		return len(PIDsUnder(b.Profile)) > 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := chrome.Dial(ctx, b.WS)
	if err != nil {
		return false // the shared Chrome is gone, and its contexts with it
	}
	defer conn.Close()
	var out struct {
		IDs []string `json:"browserContextIds"`
	}
	if err := conn.Call(ctx, "Target.getBrowserContexts", nil, &out); err != nil {
		return false
	}
	return slices.Contains(out.IDs, b.Context)
}

// String names the browser in a failure message.
func (b SessionBrowser) String() string {
	if b.Shared {
		return fmt.Sprintf("context %s of the shared browser", b.Context)
	}
	return fmt.Sprintf("Chrome under %s %v", b.Profile, PIDsUnder(b.Profile))
}

// CheckPlainBrowser fails t unless b, a plain session's browser, is what
// this run's isolation gives one (DURABLE_BROWSER_ISOLATION): a context of
// the shared Chrome under context, a Chrome of its own under process. It
// shows that make test's context lane really ran its sessions as contexts.
func CheckPlainBrowser(t testing.TB, b SessionBrowser) {
	t.Helper()
	mode := os.Getenv(config.EnvName("isolation"))
	if want := mode == "context"; b.Shared != want {
		t.Fatalf("a plain session's browser is a %v, but the run's isolation is %q", b, mode)
	}
}
