package workflows

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/envelope"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

var (
	snap     = step{Tool: contract.ToolSnapshot, Args: json.RawMessage(`{}`)}
	runClick = step{Tool: contract.ToolRun, Args: json.RawMessage(`{"actions":[{"op":"click","id":"[2]"}]}`)}
	runOther = step{Tool: contract.ToolRun, Args: json.RawMessage(`{"actions":[{"op":"click","id":"[1]"}]}`)}
	upload   = step{Tool: contract.ToolUpload, Args: json.RawMessage(`{"id":"[3]","path":"a.txt"}`)}
	read     = step{Tool: contract.ToolRead, Args: json.RawMessage(`{"what":"text"}`)}
)

func fail(code contract.Code) error {
	return envelope.Error(contract.Fail(code, "fake %s", code))
}

func TestReadRetries(t *testing.T) {
	cases := []struct {
		name     string
		fails    int   // attempts that fail before success
		err      error // the failure
		want     string
		attempts int
	}{
		{"retried then succeeding", 2, fail(contract.CodeTimeout), "ok", 3},
		{"retryable code exhausting attempts", 5, fail(contract.CodeTimeout), "timeout", 3},
		{"non-retryable code stops at once", 5, fail(contract.CodeNotContent), "not_content", 1},
		{"code the workflow never retries", 5, envelope.Error(contract.Fail(contract.CodeStaleSnapshot, "x")), "stale_snapshot", 1},
		{"lost worker on a read is a timeout", 5, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil), "timeout", 3},
		{"untyped error is command_failed", 5, temporal.NewApplicationError("boom", "SomethingElse"), "command_failed", 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeWorker()
			inner := f.behave[contract.ActivityRead]
			f.behave[contract.ActivityRead] = func(n int, in json.RawMessage) (any, error) {
				if n <= tc.fails {
					return nil, tc.err
				}
				return inner(n, in)
			}
			out := runScript(t, f, read)
			if got := code(out[0]); got != tc.want {
				t.Fatalf("code %q, want %q (%v)", got, tc.want, out[0])
			}
			if got := f.calls(contract.ActivityRead); got != tc.attempts {
				t.Fatalf("%d attempts, want %d", got, tc.attempts)
			}
		})
	}
}

func TestRunHeartbeatTimeoutIsEffectUnknown(t *testing.T) {
	f := newFakeWorker()
	inner := f.behave[contract.ActivityRun]
	progress := contract.RunProgress{Completed: 1, URL: "https://shop.example/checkout",
		Sent: []contract.SentRequest{{Method: "POST", Origin: "https://shop.example", Path: "/order"}}}
	f.behave[contract.ActivityRun] = func(n int, in json.RawMessage) (any, error) {
		if n == 1 {
			return nil, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil, progress)
		}
		return inner(n, in)
	}
	// The run is lost; the identical run is refused once; the next identical
	// run runs; a different run is never held back.
	out := runScript(t, f, runClick, runClick, runClick, runOther)
	want := []string{"effect_unknown", "effect_unknown", "ok", "ok"}
	for i, w := range want {
		if got := code(out[i]); got != w {
			t.Fatalf("step %d: %q, want %q (%v)", i, got, w, out[i])
		}
	}
	if out[0]["effect"] != "possibly_effected" || out[0]["last_url"] != progress.URL {
		t.Fatalf("effect_unknown lacks effect or last url: %v", out[0])
	}
	sent, _ := out[0]["sent"].([]any)
	if len(sent) != 1 || sent[0].(map[string]any)["path"] != "/order" {
		t.Fatalf("sent = %v", out[0]["sent"])
	}
	if !strings.Contains(out[1]["message"].(string), "snapshot") {
		t.Fatalf("refusal does not say how to check: %v", out[1]["message"])
	}
	if got := f.calls(contract.ActivityRun); got != 3 {
		t.Fatalf("run ran %d times, want 3 (the refused call must not run)", got)
	}
}

func TestUploadRefusedUntilLookedAgain(t *testing.T) {
	f := newFakeWorker()
	inner := f.behave[contract.ActivityUpload]
	f.behave[contract.ActivityUpload] = func(n int, in json.RawMessage) (any, error) {
		if n == 1 {
			return nil, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_START_TO_CLOSE, nil)
		}
		return inner(n, in)
	}
	out := runScript(t, f, upload, upload, upload, snap, upload)
	want := []string{"effect_unknown", "effect_unknown", "effect_unknown", "ok", "ok"}
	for i, w := range want {
		if got := code(out[i]); got != w {
			t.Fatalf("step %d: %q, want %q (%v)", i, got, w, out[i])
		}
	}
	if got := f.calls(contract.ActivityUpload); got != 2 {
		t.Fatalf("upload ran %d times, want 2", got)
	}
}

func TestNeverStartedCallReplacesSession(t *testing.T) {
	f := newFakeWorker()
	inner := f.behave[contract.ActivitySnapshot]
	f.behave[contract.ActivitySnapshot] = func(n int, in json.RawMessage) (any, error) {
		if n == 1 {
			return nil, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil)
		}
		return inner(n, in)
	}
	out := runScript(t, f, snap, snap)
	if code(out[0]) != "session_replaced" || out[0]["effect"] != "none" {
		t.Fatalf("first call: %v", out[0])
	}
	if msg := out[0]["message"].(string); !strings.Contains(msg, "conv-1-2") || !strings.Contains(msg, "about:blank") {
		t.Fatalf("message does not name the new session: %q", msg)
	}
	if code(out[1]) != "ok" {
		t.Fatalf("second call: %v", out[1])
	}
	var c1, c2 contract.CreateRequest
	f.input(t, contract.ActivityCreate, 0, &c1)
	f.input(t, contract.ActivityCreate, 1, &c2)
	if c1.Tag != "conv-1-1" || c2.Tag != "conv-1-2" {
		t.Fatalf("tags %q, %q", c1.Tag, c2.Tag)
	}
	var req contract.SnapshotRequest
	f.input(t, contract.ActivitySnapshot, 1, &req)
	if req.Session.HostQueue != "host-B" || req.Session.Tag != "conv-1-2" {
		t.Fatalf("second snapshot went to %+v", req.Session)
	}
}

// A browser that runs elsewhere (any provider but local) outlives a lost
// worker: the next call has another worker take it over by the same tag and
// runs there. A local one is replaced under the next tag (session_replaced)
// and left to its machine's reaper. A remote browser that had ended (the
// create finds none) answers session_replaced under the same tag; a second
// lost worker in the same call falls back to replacing, releasing the lost
// browser through any worker.
func TestLostSessionElsewhereIsTakenOver(t *testing.T) {
	tests := []struct {
		name     string
		provider string
		// found: what the takeover's create answers; lostTwice: the retried
		// call never starts either.
		found, lostTwice bool
		want             string
		wantTags         []string
		wantReleases     int
	}{
		{name: "local", provider: "local", want: "session_replaced", wantTags: []string{"conv-1-1", "conv-1-2"}},
		{name: "rented, taken over", provider: "browserbase", found: true, want: "ok", wantTags: []string{"conv-1-1", "conv-1-1"}},
		{name: "cdp, taken over", provider: "cdp", found: true, want: "ok", wantTags: []string{"conv-1-1", "conv-1-1"}},
		{name: "rented, had ended", provider: "kernel", want: "session_replaced", wantTags: []string{"conv-1-1", "conv-1-1"}},
		{name: "rented, lost twice", provider: "browserbase", found: true, lostTwice: true, want: "session_replaced",
			wantTags: []string{"conv-1-1", "conv-1-1", "conv-1-2"}, wantReleases: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeWorker()
			create := f.behave[contract.ActivityCreate]
			f.behave[contract.ActivityCreate] = func(n int, in json.RawMessage) (any, error) {
				out, err := create(n, in)
				res := out.(contract.CreateResult)
				res.Session.Provider = tt.provider
				res.Found = n > 1 && tt.found
				return res, err
			}
			inner := f.behave[contract.ActivitySnapshot]
			f.behave[contract.ActivitySnapshot] = func(n int, in json.RawMessage) (any, error) {
				if n == 1 || (n == 2 && tt.lostTwice) {
					return nil, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil)
				}
				return inner(n, in)
			}
			out := runScript(t, f, snap)
			if code(out[0]) != tt.want {
				t.Fatalf("got %v, want %s", out[0], tt.want)
			}
			var tags []string
			for i := 0; i < f.calls(contract.ActivityCreate); i++ {
				var req contract.CreateRequest
				f.input(t, contract.ActivityCreate, i, &req)
				tags = append(tags, req.Tag)
			}
			if strings.Join(tags, " ") != strings.Join(tt.wantTags, " ") {
				t.Fatalf("creates %v, want %v", tags, tt.wantTags)
			}
			if n := f.calls(contract.ActivityRelease); n != tt.wantReleases {
				t.Fatalf("%d releases, want %d", n, tt.wantReleases)
			}
			if tt.want == "ok" {
				var req contract.SnapshotRequest
				f.input(t, contract.ActivitySnapshot, 1, &req)
				if req.Session.HostQueue != "host-B" || req.Session.Tag != "conv-1-1" {
					t.Fatalf("the retried snapshot went to %+v, want conv-1-1 on host-B", req.Session)
				}
			}
		})
	}
}

// A release whose worker is lost counts as done; a browser that runs
// elsewhere is released through any worker.
func TestReleaseOfLostRemoteSession(t *testing.T) {
	for _, provider := range []string{"local", "kernel"} {
		t.Run(provider, func(t *testing.T) {
			f := newFakeWorker()
			create := f.behave[contract.ActivityCreate]
			f.behave[contract.ActivityCreate] = func(n int, in json.RawMessage) (any, error) {
				out, err := create(n, in)
				res := out.(contract.CreateResult)
				res.Session.Provider = provider
				return res, err
			}
			inner := f.behave[contract.ActivityRelease]
			f.behave[contract.ActivityRelease] = func(n int, in json.RawMessage) (any, error) {
				if n == 1 {
					return nil, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil)
				}
				return inner(n, in)
			}
			out := runScript(t, f, snap, step{Tool: contract.ToolRelease, Args: json.RawMessage(`{}`)})
			if code(out[1]) != "ok" {
				t.Fatalf("release: %v", out[1])
			}
			want := 1
			if provider != "local" {
				want = 2
			}
			if n := f.calls(contract.ActivityRelease); n != want {
				t.Fatalf("%d release activities, want %d", n, want)
			}
		})
	}
}

func TestReplacementFailingIsBrowserUnavailable(t *testing.T) {
	f := newFakeWorker()
	create := f.behave[contract.ActivityCreate]
	f.behave[contract.ActivityCreate] = func(n int, in json.RawMessage) (any, error) {
		if n > 1 {
			return nil, fail(contract.CodeBrowserUnavailable)
		}
		return create(n, in)
	}
	f.behave[contract.ActivitySnapshot] = func(int, json.RawMessage) (any, error) {
		return nil, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil)
	}
	out := runScript(t, f, snap)
	if code(out[0]) != "browser_unavailable" {
		t.Fatalf("got %v", out[0])
	}
}

func TestRepeatGuard(t *testing.T) {
	f := newFakeWorker()
	f.behave[contract.ActivityRead] = func(int, json.RawMessage) (any, error) {
		return nil, fail(contract.CodeBlocked)
	}
	out := runScript(t, f, read, read, read, snap)
	want := []string{"blocked", "blocked", "refused", "ok"}
	for i, w := range want {
		if got := code(out[i]); got != w {
			t.Fatalf("step %d: %q, want %q (%v)", i, got, w, out[i])
		}
	}
	if msg := out[2]["message"].(string); !strings.Contains(msg, "blocked") {
		t.Fatalf("refusal does not name the repeated code: %q", msg)
	}
	if got := f.calls(contract.ActivityRead); got != 2 {
		t.Fatalf("read ran %d times, want 2", got)
	}
}

func TestCallToolValidation(t *testing.T) {
	f := newFakeWorker()
	out := runScript(t, f,
		step{Tool: contract.ToolSnapshot, Args: json.RawMessage(`{"bogus":1}`)},
		step{Tool: "no_such_tool", Args: json.RawMessage(`{}`)},
		step{Tool: contract.ToolUpload, Args: json.RawMessage(`{"id":"[3]"}`)},
	)
	for i, field := range []string{"bogus", "no_such_tool", "path"} {
		if code(out[i]) != "refused" || !strings.Contains(out[i]["message"].(string), field) {
			t.Fatalf("step %d: want refused naming %q, got %v", i, field, out[i])
		}
	}
	if n := f.calls(contract.ActivitySnapshot) + f.calls(contract.ActivityUpload); n != 0 {
		t.Fatalf("%d activities ran for invalid calls", n)
	}
}

func TestCancelledActivityIsAborted(t *testing.T) {
	f := newFakeWorker()
	f.behave[contract.ActivityRun] = func(int, json.RawMessage) (any, error) {
		return nil, temporal.NewCanceledError()
	}
	out := runScript(t, f, runClick)
	if code(out[0]) != "aborted" {
		t.Fatalf("got %v", out[0])
	}
}

func TestReleaseIsIdempotentAndEndsSession(t *testing.T) {
	f := newFakeWorker()
	rel := step{Tool: contract.ToolRelease, Args: json.RawMessage(`{}`)}
	out := runScript(t, f, rel, rel, snap)
	if code(out[0]) != "ok" || code(out[1]) != "ok" || code(out[2]) != "session_ended" {
		t.Fatalf("got %v", out)
	}
	if got := f.calls(contract.ActivityRelease); got != 1 {
		t.Fatalf("release ran %d times", got)
	}
}

func TestRelaunchOpensNewTagAndReleasesOld(t *testing.T) {
	f := newFakeWorker()
	out := runScript(t, f, step{Tool: contract.ToolRelaunch, Args: json.RawMessage(`{"stealth":true}`)}, snap)
	if code(out[0]) != "ok" || out[0]["previous_tag"] != "conv-1-1" {
		t.Fatalf("got %v", out[0])
	}
	var c contract.CreateRequest
	f.input(t, contract.ActivityCreate, 1, &c)
	if c.Tag != "conv-1-2" || !c.Options.Stealth {
		t.Fatalf("relaunch created %+v", c)
	}
	var r contract.ReleaseRequest
	f.input(t, contract.ActivityRelease, 0, &r)
	if r.Session.Tag != "conv-1-1" {
		t.Fatalf("released %+v", r.Session)
	}
}

func TestRelaunchCarriesOnlyTheHostsGrants(t *testing.T) {
	f := newFakeWorker()
	host := contract.SessionOptions{
		Profile:       &contract.Profile{Name: "shop"},
		ProfileGrants: []contract.Profile{{Name: "mail", Save: true}},
	}
	want := []contract.Profile{{Name: "shop"}, {Name: "mail", Save: true}}
	out := runScriptWith(t, f, Config{Session: host},
		step{Tool: contract.ToolRelaunch, Args: json.RawMessage(`{"profile":{"name":"bank","save":true}}`)})
	if code(out[0]) != "ok" {
		t.Fatalf("got %v", out[0])
	}
	var first, second contract.CreateRequest
	f.input(t, contract.ActivityCreate, 0, &first)
	f.input(t, contract.ActivityCreate, 1, &second)
	if !reflect.DeepEqual(first.Grants, want) || first.Replaces != "" {
		t.Fatalf("first create grants %+v replaces %q, want %+v", first.Grants, first.Replaces, want)
	}
	// The model chose the profile; the grants are still the host's alone,
	// and the activity decides against them.
	if second.Options.Profile == nil || second.Options.Profile.Name != "bank" || !reflect.DeepEqual(second.Grants, want) {
		t.Fatalf("relaunch create = %+v", second)
	}
	if second.Replaces != "conv-1-1" {
		t.Fatalf("relaunch replaces %q, want conv-1-1", second.Replaces)
	}
}

// typedWorkflow uses the typed methods and reports the failure code it saw.
func typedWorkflow(ctx workflow.Context) (string, error) {
	b, err := Open(ctx, Config{Tag: "my tag"})
	if err != nil {
		return "", err
	}
	if _, err := b.Snapshot(ctx, contract.SnapshotArgs{}); err != nil {
		return "", err
	}
	_, err = b.Read(ctx, contract.ReadArgs{What: "text"})
	var f *contract.Failure
	if !errors.As(err, &f) {
		return "", err
	}
	if err := b.Close(ctx); err != nil {
		return "", err
	}
	return string(f.Code) + " " + b.Session().Tag, nil
}

func TestTypedMethods(t *testing.T) {
	f := newFakeWorker()
	f.behave[contract.ActivityRead] = func(int, json.RawMessage) (any, error) { return nil, fail(contract.CodeNotContent) }
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	f.register(env)
	env.RegisterWorkflow(typedWorkflow)
	env.ExecuteWorkflow(typedWorkflow)
	var got string
	if err := env.GetWorkflowResult(&got); err != nil {
		t.Fatal(err)
	}
	if got != "not_content my_20tag" || f.calls(contract.ActivityRelease) != 1 {
		t.Fatalf("got %q, releases %d", got, f.calls(contract.ActivityRelease))
	}
}

// A code cell's lost worker: effect_unknown says how many page calls it had
// completed by its last heartbeat; a batch's says nothing of the kind.
func TestCellHeartbeatTimeoutCountsPageCalls(t *testing.T) {
	f := newFakeWorker()
	progress := contract.RunProgress{Completed: 3, URL: "https://shop.example/list", PageCalls: &contract.PageCalls{Made: 4, Completed: 3}}
	f.behave[contract.ActivityRun] = func(n int, in json.RawMessage) (any, error) {
		return nil, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil, progress)
	}
	out := runScript(t, f, runClick)
	calls, _ := out[0]["page_calls"].(map[string]any)
	if code(out[0]) != "effect_unknown" || calls["completed"] != float64(3) || calls["made"] != float64(4) ||
		!strings.Contains(out[0]["message"].(string), "after 3 completed page call(s)") {
		t.Fatalf("effect_unknown of a cell: %v", out[0])
	}
}

// pageOf finds the page of every result that embeds one, and a handoff's
// snapshot's; other results have none.
func TestPageOf(t *testing.T) {
	p := contract.Page{URL: "https://shop.example/", Title: "Shop"}
	for _, tc := range []struct {
		name string
		res  any
		want *contract.Page
	}{
		{"snapshot", &contract.SnapshotResult{Page: p}, &p},
		{"run", &contract.RunResult{Page: p}, &p},
		{"screenshot", &contract.ScreenshotResult{Page: p}, &p},
		{"read", &contract.ReadResult{Page: p}, &p},
		{"upload", &contract.UploadResult{Page: p}, &p},
		{"check", &contract.CheckResult{Page: p}, &p},
		{"handoff", &contract.HandoffResult{Snapshot: &contract.SnapshotResult{Page: p}}, &p},
		{"handoff without snapshot", &contract.HandoffResult{}, nil},
		{"release", &contract.ReleaseResult{}, nil},
	} {
		got := pageOf(tc.res)
		if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
			t.Errorf("%s: pageOf = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
