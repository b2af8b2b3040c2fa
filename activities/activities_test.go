package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/driver"
	"github.com/durable-browser/durable-browser/internal/redact"
)

// age makes a session look untouched for d.
func (h *harness) age(tag string, d time.Duration) {
	h.a.mu.Lock()
	defer h.a.mu.Unlock()
	h.a.sessions[tag].lastUsed.Store(time.Now().Add(-d).UnixNano())
}

// blockRuns makes every run wait, after announcing itself on started, until
// release is closed.
func blockRuns(started chan<- string, release <-chan struct{}) func(*fakeBrowser) {
	return func(b *fakeBrowser) {
		b.runFn = func(ctx context.Context, actions []driver.Action) (*contract.RunResult, error) {
			started <- b.opts.CDPURL
			<-release
			return &contract.RunResult{Completed: len(actions), Total: len(actions)}, nil
		}
	}
}

func TestReleaseOrphans(t *testing.T) {
	h := newHarness(t, nil)
	started, release := make(chan string, 1), make(chan struct{})
	h.setup = blockRuns(started, release)
	idle := h.create("idle", contract.SessionOptions{})
	h.create("fresh", contract.SessionOptions{})
	busy := h.create("busy", contract.SessionOptions{})
	h.create("almost", contract.SessionOptions{})

	// A run on "busy" is in flight; it started long after the session was
	// last touched, so only the call itself says it is no orphan.
	runDone := make(chan error, 1)
	go func() {
		_, err := h.a.Run(context.Background(), runReq(busy, []byte(`[{"op":"click","id":"3"}]`)))
		runDone <- err
	}()
	<-started
	h.age("idle", time.Hour)
	h.age("busy", time.Hour)
	h.age("almost", 30*time.Second)

	got := h.a.ReleaseOrphans(context.Background(), time.Minute)
	if !reflect.DeepEqual(got, []string{idle.Tag}) {
		t.Fatalf("released %v, want only %s", got, idle.Tag)
	}
	if _, rel := h.prov.calls(); !reflect.DeepEqual(rel, []string{"idle"}) {
		t.Fatalf("provider released %v", rel)
	}
	if got := h.a.Sessions(); !reflect.DeepEqual(got, []string{"almost", "busy", "fresh"}) {
		t.Fatalf("sessions left = %v", got)
	}
	for i, name := range []string{"idle", "fresh", "busy", "almost"} {
		want := 0
		if name == "idle" {
			want = 1
		}
		if n := h.browser(i).closedCount(); n != want {
			t.Fatalf("%s browser closed %d times, want %d", name, n, want)
		}
	}

	close(release)
	if err := <-runDone; err != nil {
		t.Fatalf("the run in flight failed: %v", err)
	}
	// Its call has just ended, so it is no orphan now either.
	if got := h.a.ReleaseOrphans(context.Background(), time.Minute); len(got) != 0 {
		t.Fatalf("released %v after the run ended", got)
	}
	h.age("busy", time.Hour)
	if got := h.a.ReleaseOrphans(context.Background(), time.Minute); !reflect.DeepEqual(got, []string{"busy"}) {
		t.Fatalf("released %v, want busy once idle", got)
	}
}

func TestReleaseOrphansProviderFails(t *testing.T) {
	h := newHarness(t, nil)
	h.create("idle", contract.SessionOptions{})
	h.age("idle", time.Hour)
	h.prov.releaseErr = errors.New("chrome would not die")
	if got := h.a.ReleaseOrphans(context.Background(), time.Minute); len(got) != 0 {
		t.Fatalf("reported %v released though the provider failed", got)
	}
	// The process lets go of it either way; the provider's own reaper is
	// what finds the browser again.
	if got := h.a.Sessions(); len(got) != 0 {
		t.Fatalf("sessions = %v", got)
	}
}

func TestCloseReleasesEverything(t *testing.T) {
	h := newHarness(t, nil)
	started, release := make(chan string, 1), make(chan struct{})
	h.setup = blockRuns(started, release)
	h.create("a", contract.SessionOptions{})
	busy := h.create("b", contract.SessionOptions{})
	h.create("c", contract.SessionOptions{})

	runDone := make(chan error, 1)
	go func() {
		_, err := h.a.Run(context.Background(), runReq(busy, []byte(`[{"op":"click","id":"3"}]`)))
		runDone <- err
	}()
	<-started

	closed := make(chan struct{})
	go func() {
		h.a.Close(context.Background())
		close(closed)
	}()
	// Close waits for the call in flight before its browser goes.
	time.Sleep(200 * time.Millisecond)
	if n := h.browser(1).closedCount(); n != 0 {
		t.Fatal("Close closed a browser in the middle of a call")
	}
	close(release)
	if err := <-runDone; err != nil {
		t.Fatalf("the run in flight failed: %v", err)
	}
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return")
	}
	for i := range 3 {
		if n := h.browser(i).closedCount(); n != 1 {
			t.Fatalf("browser %d closed %d times, want 1", i, n)
		}
	}
	_, rel := h.prov.calls()
	sort.Strings(rel)
	if !reflect.DeepEqual(rel, []string{"a", "b", "c"}) {
		t.Fatalf("provider released %v", rel)
	}
	if got := h.a.Sessions(); len(got) != 0 {
		t.Fatalf("sessions after Close = %v", got)
	}
}

// secret is registered with each harness's redactor in the redaction tests.
const secret = "sk-live-9f8e7d6c5b4a"

func TestFailuresAreRedacted(t *testing.T) {
	leak := errors.New("upstream said: token " + secret + " rejected")
	tests := []struct {
		name string
		prep func(h *harness)
		// do makes the failing call; the session "t-1" is open unless prep
		// broke its creation.
		do func(h *harness, ref contract.SessionRef) error
	}{
		{
			name: "provider create",
			prep: func(h *harness) { h.prov.createErr = leak },
			do: func(h *harness, _ contract.SessionRef) error {
				_, err := h.env.ExecuteActivity(contract.ActivityCreate, contract.CreateRequest{Tag: "t-2"})
				return err
			},
		},
		{
			name: "attach",
			do: func(h *harness, _ contract.SessionRef) error {
				h.attachErr = leak
				_, err := h.env.ExecuteActivity(contract.ActivityCreate, contract.CreateRequest{Tag: "t-2"})
				return err
			},
		},
		{
			name: "release",
			do: func(h *harness, ref contract.SessionRef) error {
				h.prov.releaseErr = leak
				_, err := h.env.ExecuteActivity(contract.ActivityRelease, contract.ReleaseRequest{Session: ref})
				return err
			},
		},
		{
			name: "snapshot",
			prep: func(h *harness) { h.setup = func(b *fakeBrowser) { b.snapErr = leak } },
			do: func(h *harness, ref contract.SessionRef) error {
				_, err := h.env.ExecuteActivity(contract.ActivitySnapshot, contract.SnapshotRequest{Call: contract.Call{Session: ref}})
				return err
			},
		},
		{
			name: "run stopped partway",
			prep: func(h *harness) {
				h.setup = func(b *fakeBrowser) {
					b.runFn = func(context.Context, []driver.Action) (*contract.RunResult, error) {
						return &contract.RunResult{Page: contract.Page{URL: "https://example.com/?key=" + secret, Title: "Key " + secret}, Completed: 1, Total: 2,
								Sent: []contract.SentRequest{{Method: "POST", Origin: "https://example.com", Path: "/t/" + secret}}},
							&driver.ActionError{Index: 1, Op: "click", Kind: driver.KindCovered, Reason: "covered by " + secret, Err: leak}
					}
				}
			},
			do: func(h *harness, ref contract.SessionRef) error {
				_, err := h.env.ExecuteActivity(contract.ActivityRun, runReq(ref, gotoBatch))
				return err
			},
		},
		{
			name: "run lost the browser",
			prep: func(h *harness) {
				h.setup = func(b *fakeBrowser) {
					b.runFn = func(context.Context, []driver.Action) (*contract.RunResult, error) { return nil, leak }
				}
			},
			do: func(h *harness, ref contract.SessionRef) error {
				_, err := h.env.ExecuteActivity(contract.ActivityRun, runReq(ref, gotoBatch))
				return err
			},
		},
		{
			name: "notify",
			prep: func(h *harness) { h.a.o.Notifier = &fakeNotifier{err: leak} },
			do: func(h *harness, ref contract.SessionRef) error {
				_, err := h.env.ExecuteActivity(contract.ActivityNotify, contract.NotifyRequest{Session: ref})
				return err
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.red.Register(secret)
			if tt.prep != nil {
				tt.prep(h)
			}
			var ref contract.SessionRef
			if h.prov.createErr == nil {
				ref = h.create("t-1", contract.SessionOptions{})
			}
			err := tt.do(h, ref)
			f := failure(t, err)
			raw, _ := json.Marshal(f)
			for what, s := range map[string]string{"error": err.Error(), "chain": fmt.Sprintf("%+v", err), "envelope": string(raw)} {
				if strings.Contains(s, secret) {
					t.Fatalf("the %s carries the secret: %s", what, s)
				}
			}
			if !strings.Contains(string(raw), redact.Placeholder) {
				t.Fatalf("nothing was redacted; did the fake's error reach the failure? %s", raw)
			}
		})
	}
}

func TestResultsAreRedacted(t *testing.T) {
	h := newHarness(t, nil)
	h.red.Register(secret)
	h.setup = func(b *fakeBrowser) {
		b.url = "https://example.com/account?session=" + secret
		b.title = "Hello " + secret
		b.requests = []driver.GatedRequest{{Method: "POST", Origin: "https://example.com", Path: "/api/" + secret}}
		b.snap = &contract.SnapshotResult{OK: true, Page: contract.Page{URL: b.url, Title: b.title}, Observation: contract.Observation{Text: "- text \"" + secret + "\""}}
	}
	ref := h.create("t-1", contract.SessionOptions{ActionPolicy: contract.PolicyDeny})
	snap, err := call[contract.SnapshotResult](h, contract.ActivitySnapshot, contract.SnapshotRequest{Call: contract.Call{Session: ref}})
	if err != nil {
		t.Fatal(err)
	}
	run, err := call[contract.RunResult](h, contract.ActivityRun, runReq(ref, []byte(`[{"op":"click","id":"3"}]`)))
	if err != nil {
		t.Fatal(err)
	}
	found, err := call[contract.CreateResult](h, contract.ActivityCreate, contract.CreateRequest{Tag: "t-1", Options: contract.SessionOptions{ActionPolicy: contract.PolicyDeny}})
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]any{"snapshot": snap, "run": run, "create": found} {
		if containsAnywhere(v, secret) {
			t.Fatalf("the %s result carries the secret: %+v", name, v)
		}
	}
	if len(run.Held) != 1 || !strings.Contains(run.Held[0].Path, redact.Placeholder) {
		t.Fatalf("held = %+v, want the denied request with its path redacted", run.Held)
	}
}

type nameRegistry []string

func (r *nameRegistry) RegisterActivityWithOptions(_ any, o activity.RegisterOptions) {
	*r = append(*r, o.Name)
}

func TestRegistrationNames(t *testing.T) {
	a := New(Options{})
	var shared, host nameRegistry
	a.RegisterShared(&shared)
	a.RegisterHost(&host)
	wantShared := []string{contract.ActivityCreate, contract.ActivityRelease, contract.ActivityWebFetch, contract.ActivityWebSearch, contract.ActivityEvidence, contract.ActivityAgentResult}
	wantHost := []string{
		contract.ActivitySnapshot, contract.ActivityRun, contract.ActivityScreenshot, contract.ActivityRead, contract.ActivityCheck,
		contract.ActivityDownloads, contract.ActivityUpload, contract.ActivityRelease, contract.ActivityRelaunch,
		contract.ActivityReconcile, contract.ActivityNotify,
	}
	if !reflect.DeepEqual([]string(shared), wantShared) {
		t.Fatalf("shared queue = %v, want %v", shared, wantShared)
	}
	if !reflect.DeepEqual([]string(host), wantHost) {
		t.Fatalf("host queue = %v, want %v", host, wantHost)
	}
}

func TestNewDefaults(t *testing.T) {
	a := New(Options{})
	if a.o.DefaultProvider != "local" || a.o.Holds == nil || a.o.HoldTimeout != 5*time.Minute ||
		a.o.Heartbeat != 2*time.Second || a.o.ActionTimeout != 10*time.Second || a.o.Now == nil || a.o.Attach == nil {
		t.Fatalf("defaults = %+v", a.o)
	}
	// The default attach is the driver's, and a failed attach is a nil
	// interface, not a nil *driver.Browser inside one.
	b, err := a.o.Attach(context.Background(), driver.Options{})
	if err == nil || b != nil {
		t.Fatalf("attach with no address = %v, %v", b, err)
	}
}

// A browser whose workflow let go of it (ended, or moved to another tag after
// judging this worker lost) is released once idle; one another worker took
// over (same tag, another host) is only let go of, never released; one whose
// workflow still holds it, whose owner cannot be asked, or that is fresh, is
// kept.
func TestReleaseDisowned(t *testing.T) {
	asked := map[string]Owner{}
	h := newHarness(t, func(o *Options) {
		o.Owners = func(_ context.Context, ow Owner) (Ownership, error) {
			asked[ow.Tag] = ow
			switch ow.Tag {
			case "moved-on":
				return MovedTag, nil
			case "ended":
				return Ended, nil
			case "taken-over":
				return MovedHost, nil
			case "unknown":
				return Holds, errors.New("the service is unreachable")
			default:
				return Holds, nil
			}
		}
	})
	for _, tag := range []string{"moved-on", "ended", "taken-over", "held", "unknown", "fresh"} {
		h.create(tag, contract.SessionOptions{})
	}
	for _, tag := range []string{"moved-on", "ended", "taken-over", "held", "unknown"} {
		h.age(tag, time.Minute)
	}
	got := h.a.ReleaseDisowned(context.Background(), 30*time.Second)
	sort.Strings(got)
	if !reflect.DeepEqual(got, []string{"ended", "moved-on", "taken-over"}) {
		t.Fatalf("let go of %v, want ended, moved-on and taken-over", got)
	}
	_, rel := h.prov.calls()
	sort.Strings(rel)
	if !reflect.DeepEqual(rel, []string{"ended", "moved-on"}) {
		t.Fatalf("provider released %v; a browser another worker took over must not be released", rel)
	}
	if _, ok := asked["fresh"]; ok {
		t.Fatal("asked about a session used within the idle bound")
	}
	if ow := asked["held"]; ow.WorkflowID == "" || ow.WorkflowType == "" || ow.HostQueue != testHostQueue {
		t.Fatalf("the owner of a session was not recorded at create: %+v", ow)
	}
	if got := h.a.Sessions(); !reflect.DeepEqual(got, []string{"fresh", "held", "unknown"}) {
		t.Fatalf("sessions left = %v", got)
	}
}
