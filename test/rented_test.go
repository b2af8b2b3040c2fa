package test

import (
	"context"
	"encoding/base64"
	"regexp"
	"strings"
	"testing"
	"time"

	dbclient "github.com/durable-browser/durable-browser/client"
	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/providers/rentfake"
	"github.com/durable-browser/durable-browser/test/harness"
	"github.com/durable-browser/durable-browser/workflows"
)

// rentedService is a loopback stand-in for a browser-renting service and
// what a worker needs to use it.
type rentedService struct {
	name string
	env  []string
	// secrets must appear in no answer, history or log: the key, the
	// live-view token and every connect URL handed out.
	secrets func() []string
	running func() int
}

func startRented(t *testing.T, name string) rentedService {
	t.Helper()
	browsers, err := rentfake.NewBrowsers(t.TempDir())
	if err != nil {
		t.Fatalf("this test needs Chromium: %v", err)
	}
	switch name {
	case "browserbase":
		key := "bb_live_e2e_0f9e8d7c6b5a4f3e2d1c"
		f := rentfake.NewBrowserbase(browsers, key, "proj-e2e")
		t.Cleanup(f.Close)
		return rentedService{name: name,
			env: []string{"DURABLE_BROWSER_PROVIDERS=browserbase", "BROWSERBASE_API_KEY=" + key,
				"BROWSERBASE_PROJECT_ID=proj-e2e", "BROWSERBASE_BASE_URL=" + f.URL(),
				"DURABLE_BROWSER_PRICE_PER_MINUTE=browserbase=0.5"},
			secrets: func() []string { return append(f.ConnectURLs(), key, f.LiveViewSecret) },
			running: f.Running,
		}
	case "kernel":
		key := "sk_kernel_e2e_a1b2c3d4e5f6a7b8"
		f := rentfake.NewKernel(browsers, key)
		t.Cleanup(f.Close)
		return rentedService{name: name,
			env: []string{"DURABLE_BROWSER_PROVIDERS=kernel", "KERNEL_API_KEY=" + key, "KERNEL_BASE_URL=" + f.URL(),
				"DURABLE_BROWSER_PRICE_PER_MINUTE=kernel=0.5"},
			secrets: func() []string { return append(f.ConnectURLs(), key, f.LiveViewSecret) },
			running: f.Active,
		}
	}
	t.Fatalf("no fake for %s", name)
	return rentedService{}
}

var payloadData = regexp.MustCompile(`"data":\s*"([A-Za-z0-9+/=]+)"`)

// decodedHistory is a history's JSON with every payload's data decoded
// beside it.
func decodedHistory(t *testing.T, id string) string {
	raw := historyJSON(t, id)
	var b strings.Builder
	b.WriteString(raw)
	for _, m := range payloadData.FindAllStringSubmatch(raw, -1) {
		if d, err := base64.StdEncoding.DecodeString(m[1]); err == nil {
			b.WriteByte('\n')
			b.Write(d)
		}
	}
	return b.String()
}

// A session on a rented browser outlives its worker: the worker holding it
// is killed between two calls; the second call is served by another
// worker, which attaches to the browser by tag, and sees the page (and the
// text typed into it) as the first call left it, with no session_replaced.
// The whole tool flow runs on the fake service's real Chromium.
func TestRentedSurvivesWorker(t *testing.T) {
	for _, name := range []string{"browserbase", "kernel"} {
		t.Run(name, func(t *testing.T) {
			svc := startRented(t, name)
			a := env.StartWorkerProcess(t, harness.ProcessOptions{Env: svc.env})
			b := env.StartWorkerProcess(t, harness.ProcessOptions{Env: svc.env})
			s := newSession(t, workflows.SessionConfig{
				Session:  contract.SessionOptions{Provider: name},
				Timeouts: workflows.Timeouts{ScheduleToStart: 3 * time.Second},
			})
			var run contract.RunResult
			s.must("run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/"}), &run)
			if run.Title != "Durable Browser Demo" {
				t.Fatalf("title after goto: %q", run.Title)
			}
			var snap contract.SnapshotResult
			s.must("snapshot", map[string]any{"mode": "interactive"}, &snap)
			email := refFor(t, snap.Text, `textbox "Email"`)
			s.must("run", actions(map[string]any{"op": "fill", "id": email, "value": "left-by-the-first-worker@example.com"}), &run)

			st, err := dbclient.State(context.Background(), env.Client, s.id)
			if err != nil {
				t.Fatal(err)
			}
			holder, other := a, b
			if st.HostQueue == b.HostQueue() {
				holder, other = b, a
			} else if st.HostQueue != a.HostQueue() {
				t.Fatalf("session on unknown queue %q", st.HostQueue)
			}
			holder.Kill()

			// The next call finds the holder's queue unpolled, has the
			// other worker take the browser over, and runs there.
			s.must("snapshot", map[string]any{}, &snap)
			if snap.SessionS <= 0 && snap.Title == "" {
				t.Fatalf("snapshot after the worker died: %+v", snap)
			}
			if !strings.Contains(snap.Text, "left-by-the-first-worker@example.com") || snap.Title != "Durable Browser Demo" {
				t.Fatalf("the page is not as the first worker left it:\n%s", snap.Text)
			}
			st2, err := dbclient.State(context.Background(), env.Client, s.id)
			if err != nil {
				t.Fatal(err)
			}
			if st2.Tag != st.Tag || st2.HostQueue != other.HostQueue() {
				t.Fatalf("session should keep its tag %s on the other worker %s: %+v", st.Tag, other.HostQueue(), st2)
			}
			if n := svc.running(); n != 1 {
				t.Fatalf("%d rented browsers run; the session should still have its one", n)
			}
			var shot contract.ScreenshotResult
			s.must("screenshot", map[string]any{}, &shot)
			if shot.SessionS <= 0 {
				t.Fatalf("results should carry the session's running time: %+v", shot.Page)
			}

			var rel contract.ReleaseResult
			s.must("browser_release", map[string]any{}, &rel)
			if rel.RanS <= 0 || rel.Cost <= 0 {
				t.Fatalf("the release should record the minutes and their price: %+v", rel)
			}
			harness.Eventually(t, 30*time.Second, func() bool { return svc.running() == 0 }, "the rented browser was not released")
			recordHistory(t, s.id, "rented-survives-worker-"+name)

			corpus := decodedHistory(t, s.id) + other.Stderr.String() + holder.Stderr.String()
			for _, secret := range svc.secrets() {
				if secret != "" && strings.Contains(corpus, secret) {
					t.Fatalf("a credential of the rented browser (%d chars) is in the history or a worker's log", len(secret))
				}
			}
		})
	}
}
