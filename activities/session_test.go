package activities

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/providers"
	"github.com/durable-browser/durable-browser/providers/remote"
)

func TestCreateIsIdempotentPerTag(t *testing.T) {
	h := newHarness(t, nil)
	h.setup = func(b *fakeBrowser) { b.title = "Blank" }

	first, err := call[contract.CreateResult](h, contract.ActivityCreate, contract.CreateRequest{Tag: "t-1"})
	if err != nil {
		t.Fatal(err)
	}
	want := contract.SessionRef{Tag: "t-1", Provider: "local", HostQueue: testHostQueue}
	if first.Session != want || first.Found {
		t.Fatalf("first create = %+v, want session %+v, not found", first, want)
	}
	if first.Title != "Blank" || first.URL != "about:blank" {
		t.Fatalf("first create page = %q %q", first.URL, first.Title)
	}

	second, err := call[contract.CreateResult](h, contract.ActivityCreate, contract.CreateRequest{Tag: "t-1"})
	if err != nil {
		t.Fatal(err)
	}
	if second.Session != want || !second.Found {
		t.Fatalf("second create = %+v, want session %+v, found", second, want)
	}
	if created, _ := h.prov.calls(); len(created) != 1 {
		t.Fatalf("provider created %v, want one browser", created)
	}
	if h.attached() != 1 {
		t.Fatalf("attached %d browsers, want 1", h.attached())
	}

	// Another tag is another browser.
	h.create("t-2", contract.SessionOptions{})
	if got := h.a.Sessions(); !reflect.DeepEqual(got, []string{"t-1", "t-2"}) {
		t.Fatalf("sessions = %v", got)
	}
}

func TestCreatePassesSessionToDriver(t *testing.T) {
	h := newHarness(t, nil)
	h.prov.downloads = "/tmp/dl-x"
	h.create("t-1", contract.SessionOptions{Stealth: true, Headed: true, Viewport: &contract.Viewport{Width: 390, Height: 844}})
	b := h.browser(0)
	if b.opts.CDPURL != "ws://127.0.0.1:9222/devtools/browser/t-1" || b.opts.DownloadDir != "/tmp/dl-x" || !b.opts.Stealth ||
		b.opts.ViewportWidth != 390 || b.opts.ViewportHeight != 844 {
		t.Fatalf("driver options = %+v", b.opts)
	}
	if b.opts.ActionTimeout <= 0 {
		t.Fatalf("action timeout not defaulted: %v", b.opts.ActionTimeout)
	}
	h.prov.mu.Lock()
	got := h.prov.created[0]
	h.prov.mu.Unlock()
	made := contract.SessionOptions{Provider: "local", Stealth: true, Headed: true, ActionPolicy: contract.PolicyAllow, Viewport: &contract.Viewport{Width: 390, Height: 844}}
	if want := (providers.CreateOptions{Tag: "t-1", Stealth: true, Headed: true, Session: &made}); !reflect.DeepEqual(got, want) {
		t.Fatalf("provider create options = %+v, want %+v", got, want)
	}
}

func TestCreateStartURL(t *testing.T) {
	h := newHarness(t, nil)
	res, err := call[contract.CreateResult](h, contract.ActivityCreate, contract.CreateRequest{Tag: "t-1", Options: contract.SessionOptions{StartURL: "https://example.com/"}})
	if err != nil {
		t.Fatal(err)
	}
	b := h.browser(0)
	if len(b.runs) != 1 || len(b.runs[0]) != 1 || b.runs[0][0].Op != "goto" || b.runs[0][0].URL != "https://example.com/" {
		t.Fatalf("start url runs = %+v", b.runs)
	}
	if res.URL != "https://example.com/" {
		t.Fatalf("create url = %q", res.URL)
	}
}

type conflictErr struct{}

func (conflictErr) Error() string { return "profile shop is in use by session t-0" }
func (conflictErr) Refusal() bool { return true }

func TestCreateFailures(t *testing.T) {
	tests := []struct {
		name      string
		req       contract.CreateRequest
		createErr error
		attachErr error
		code      contract.Code
		retryable bool
		// released is what the provider must have released afterwards.
		released []string
	}{
		{name: "no tag", req: contract.CreateRequest{}, code: contract.CodeRefused},
		{name: "unknown provider", req: contract.CreateRequest{Tag: "t-1", Options: contract.SessionOptions{Provider: "nope"}}, code: contract.CodeRefused},
		{name: "provider fails", req: contract.CreateRequest{Tag: "t-1"}, createErr: errors.New("chrome exited"), code: contract.CodeBrowserUnavailable, retryable: true},
		{name: "profile conflict", req: contract.CreateRequest{Tag: "t-1"}, createErr: conflictErr{}, code: contract.CodeRefused},
		{name: "rented provider not configured", req: contract.CreateRequest{Tag: "t-1", Options: contract.SessionOptions{Provider: "browserbase"}}, code: contract.CodeRefused},
		{name: "service refuses the key", req: contract.CreateRequest{Tag: "t-1"}, createErr: remote.StatusError("kernel", "create browser", 401, 0, ""), code: contract.CodeAuth},
		{name: "service rate limits", req: contract.CreateRequest{Tag: "t-1"}, createErr: remote.StatusError("kernel", "create browser", 429, 7*time.Second, ""), code: contract.CodeRateLimited, retryable: true},
		{name: "service down", req: contract.CreateRequest{Tag: "t-1"}, createErr: remote.StatusError("kernel", "create browser", 502, 0, ""), code: contract.CodeBrowserUnavailable, retryable: true},
		{name: "attach fails", req: contract.CreateRequest{Tag: "t-1"}, attachErr: errors.New("websocket refused"), code: contract.CodeBrowserUnavailable, retryable: true, released: []string{"t-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.prov.createErr = tt.createErr
			h.attachErr = tt.attachErr
			_, err := call[contract.CreateResult](h, contract.ActivityCreate, tt.req)
			wantCode(t, err, tt.code, tt.retryable)
			{
				msg := fmt.Sprint(err)
				switch tt.name {
				case "rented provider not configured":
					if !strings.Contains(msg, "BROWSERBASE_API_KEY") {
						t.Fatalf("the refusal should name the key to set: %s", msg)
					}
				case "service rate limits":
					if !strings.Contains(msg, "try again in 7 s") {
						t.Fatalf("the failure should carry the retry-after: %s", msg)
					}
				case "service refuses the key":
					if !strings.Contains(msg, "KERNEL_API_KEY") {
						t.Fatalf("the failure should name the key: %s", msg)
					}
				}
			}
			if _, rel := h.prov.calls(); !reflect.DeepEqual(rel, tt.released) {
				t.Fatalf("released %v, want %v", rel, tt.released)
			}
			if len(h.a.Sessions()) != 0 {
				t.Fatalf("a failed create left sessions %v", h.a.Sessions())
			}
		})
	}
}

func TestUnknownSessionEnded(t *testing.T) {
	h := newHarness(t, nil)
	held := h.create("t-1", contract.SessionOptions{})
	gone := contract.SessionRef{Tag: "t-9", Provider: "local", HostQueue: testHostQueue}
	// The right tag on another process's queue is not this process's session.
	elsewhere := contract.SessionRef{Tag: held.Tag, Provider: "local", HostQueue: "durable-browser@other-host"}
	call := contract.Call{Session: gone}
	other := contract.Call{Session: elsewhere}
	actions := contract.RunArgs{Actions: []byte(`[{"op":"goto","url":"https://example.com"}]`)}
	tests := []struct {
		name string
		act  string
		req  any
	}{
		{"snapshot", contract.ActivitySnapshot, contract.SnapshotRequest{Call: call}},
		{"run", contract.ActivityRun, contract.RunRequest{Call: call, Args: actions}},
		{"run on another host", contract.ActivityRun, contract.RunRequest{Call: other, Args: actions}},
		{"screenshot", contract.ActivityScreenshot, contract.ScreenshotRequest{Call: call}},
		{"read", contract.ActivityRead, contract.ReadRequest{Call: call}},
		{"downloads", contract.ActivityDownloads, contract.DownloadsRequest{Call: call}},
		{"upload", contract.ActivityUpload, contract.UploadRequest{Call: call}},
		{"reconcile", contract.ActivityReconcile, contract.ReleaseRequest{Session: gone}},
		{"reconcile on another host", contract.ActivityReconcile, contract.ReleaseRequest{Session: elsewhere}},
		{"notify", contract.ActivityNotify, contract.NotifyRequest{Session: gone}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.env.ExecuteActivity(tt.act, tt.req)
			wantCode(t, err, contract.CodeSessionEnded, false)
		})
	}
	if runs := h.browser(0).runs; len(runs) != 0 {
		t.Fatalf("a call for another session reached the browser: %v", runs)
	}
}

func TestReconcileHeld(t *testing.T) {
	h := newHarness(t, nil)
	ref := h.create("t-1", contract.SessionOptions{})
	res, err := call[contract.ReleaseResult](h, contract.ActivityReconcile, contract.ReleaseRequest{Session: ref})
	if err != nil || !res.OK || res.Tag != "t-1" {
		t.Fatalf("reconcile = %+v, %v", res, err)
	}
}

func TestReleaseIsIdempotent(t *testing.T) {
	h := newHarness(t, nil)
	ref := h.create("t-1", contract.SessionOptions{})

	res, err := call[contract.ReleaseResult](h, contract.ActivityRelease, contract.ReleaseRequest{Session: ref})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || !res.Released || res.Tag != "t-1" {
		t.Fatalf("first release = %+v", res)
	}
	if n := h.browser(0).closedCount(); n != 1 {
		t.Fatalf("browser closed %d times, want 1", n)
	}
	if len(h.a.Sessions()) != 0 {
		t.Fatalf("sessions after release = %v", h.a.Sessions())
	}

	// Again: this process holds nothing, so the provider confirms.
	res, err = call[contract.ReleaseResult](h, contract.ActivityRelease, contract.ReleaseRequest{Session: ref})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.Released {
		t.Fatalf("second release = %+v, want ok and not released here", res)
	}
	if _, rel := h.prov.calls(); !reflect.DeepEqual(rel, []string{"t-1", "t-1"}) {
		t.Fatalf("provider released %v, want t-1 twice", rel)
	}
	if n := h.browser(0).closedCount(); n != 1 {
		t.Fatalf("browser closed %d times, want 1", n)
	}

	// A call after the release finds the session ended.
	_, err = h.env.ExecuteActivity(contract.ActivitySnapshot, contract.SnapshotRequest{Call: contract.Call{Session: ref}})
	wantCode(t, err, contract.CodeSessionEnded, false)
}

func TestReleaseUnknownProvider(t *testing.T) {
	h := newHarness(t, nil)
	res, err := call[contract.ReleaseResult](h, contract.ActivityRelease, contract.ReleaseRequest{Session: contract.SessionRef{Tag: "t-1", Provider: "gone"}})
	if err != nil || !res.OK || res.Released {
		t.Fatalf("release = %+v, %v", res, err)
	}
	if _, rel := h.prov.calls(); len(rel) != 0 {
		t.Fatalf("released through the wrong provider: %v", rel)
	}
}

func TestReleaseProviderFails(t *testing.T) {
	h := newHarness(t, nil)
	ref := h.create("t-1", contract.SessionOptions{})
	h.prov.releaseErr = errors.New("chrome would not die")
	_, err := call[contract.ReleaseResult](h, contract.ActivityRelease, contract.ReleaseRequest{Session: ref})
	wantCode(t, err, contract.CodeBrowserUnavailable, true)

	// The retry releases by tag through the provider named in the ref.
	h.prov.releaseErr = nil
	res, err := call[contract.ReleaseResult](h, contract.ActivityRelease, contract.ReleaseRequest{Session: ref})
	if err != nil || !res.OK {
		t.Fatalf("retried release = %+v, %v", res, err)
	}
	if _, rel := h.prov.calls(); !reflect.DeepEqual(rel, []string{"t-1", "t-1"}) {
		t.Fatalf("provider released %v", rel)
	}
}

func TestRelaunch(t *testing.T) {
	h := newHarness(t, nil)
	ref := h.create("t-1", contract.SessionOptions{})
	_, err := call[contract.CreateResult](h, contract.ActivityRelaunch, RelaunchRequest{Session: ref, Tag: "t-1"})
	wantCode(t, err, contract.CodeRefused, false)

	res, err := call[contract.CreateResult](h, contract.ActivityRelaunch, RelaunchRequest{Session: ref, Tag: "t-2"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Session.Tag != "t-2" || res.Found {
		t.Fatalf("relaunch = %+v", res)
	}
	if got := h.a.Sessions(); !reflect.DeepEqual(got, []string{"t-2"}) {
		t.Fatalf("sessions = %v", got)
	}
	if _, rel := h.prov.calls(); !reflect.DeepEqual(rel, []string{"t-1"}) {
		t.Fatalf("released %v", rel)
	}
}

// A worker at --max-browsers answers a further create browser_unavailable,
// retryable, without starting anything; a release frees the slot.
func TestMaxBrowsers(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.MaxBrowsers = 2 })
	h.create("cap-1", contract.SessionOptions{})
	ref := h.create("cap-2", contract.SessionOptions{})
	_, err := call[contract.CreateResult](h, contract.ActivityCreate, contract.CreateRequest{Tag: "cap-3"})
	wantCode(t, err, contract.CodeBrowserUnavailable, true)
	if created, _ := h.prov.calls(); len(created) != 2 {
		t.Fatalf("the provider was asked for %v", created)
	}
	// The same tag again is found, not counted.
	if _, err := call[contract.CreateResult](h, contract.ActivityCreate, contract.CreateRequest{Tag: "cap-2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := call[contract.ReleaseResult](h, contract.ActivityRelease, contract.ReleaseRequest{Session: ref}); err != nil {
		t.Fatal(err)
	}
	h.create("cap-3", contract.SessionOptions{})
}

// A retry of a create whose first attempt is still starting its browser
// here (the server judged it lost while it went on, its heartbeats late)
// waits for it and takes the same browser: it is neither refused as one
// browser too many nor given a second one.
func TestCreateRetryWaitsForStartingBrowser(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.MaxBrowsers = 1 })
	h.prov.gate, h.prov.entered = make(chan struct{}), make(chan struct{}, 2)
	type answer struct {
		res *contract.CreateResult
		err error
	}
	first, retry := make(chan answer, 1), make(chan answer, 1)
	req := contract.CreateRequest{Tag: "t-1"}
	go func() { r, err := h.a.Create(context.Background(), req); first <- answer{r, err} }()
	<-h.prov.entered
	go func() { r, err := h.a.Create(context.Background(), req); retry <- answer{r, err} }()
	select {
	case a := <-retry:
		t.Fatalf("the retry answered while the first attempt was starting: %+v %v", a.res, a.err)
	case <-time.After(300 * time.Millisecond):
	}
	close(h.prov.gate)
	a, b := <-first, <-retry
	if a.err != nil || b.err != nil {
		t.Fatalf("first: %v; retry: %v", a.err, b.err)
	}
	if !b.res.Found || b.res.Session.Tag != "t-1" {
		t.Fatalf("retry = %+v, want the first attempt's browser, found", b.res)
	}
	if created, _ := h.prov.calls(); len(created) != 1 {
		t.Fatalf("provider created %d browsers, want 1", len(created))
	}
}
