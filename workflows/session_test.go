package workflows

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/stretchr/testify/mock"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

// harness drives a BrowserSession on the test environment's clock.
type harness struct {
	t        *testing.T
	env      *testsuite.TestWorkflowEnvironment
	f        *fakeWorker
	results  map[string]map[string]any
	rejected map[string]error
}

func newHarness(t *testing.T) *harness {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	f := newFakeWorker()
	f.register(env)
	env.RegisterWorkflowWithOptions(BrowserSession, workflow.RegisterOptions{Name: contract.WorkflowBrowserSession})
	env.SetStartWorkflowOptions(startOptions("sess-1"))
	return &harness{t: t, env: env, f: f, results: map[string]map[string]any{}, rejected: map[string]error{}}
}

// call sends a tool call as an update at the given time.
func (h *harness) call(at time.Duration, id, tool, args string) {
	h.callWith(at, id, contract.ToolCall{Name: tool, Args: json.RawMessage(args)})
}

func (h *harness) callWith(at time.Duration, id string, call contract.ToolCall) {
	h.env.RegisterDelayedCallback(func() {
		h.env.UpdateWorkflow(contract.UpdateTool, id, &testsuite.TestUpdateCallback{
			OnAccept: func() {},
			OnReject: func(err error) { h.rejected[id] = err },
			OnComplete: func(v any, err error) {
				if err != nil {
					h.t.Errorf("update %s failed: %v", id, err)
					return
				}
				var raw json.RawMessage
				switch x := v.(type) {
				case json.RawMessage:
					raw = x
				case converter.EncodedValue:
					if err := x.Get(&raw); err != nil {
						h.t.Error(err)
					}
				default:
					h.t.Errorf("update result of type %T", v)
				}
				var m map[string]any
				if err := json.Unmarshal(raw, &m); err != nil {
					h.t.Errorf("update %s: %v in %s", id, err, raw)
				}
				h.results[id] = m
			},
		}, call)
	}, at)
}

func (h *harness) signal(at time.Duration, name string, v func() any) {
	h.env.RegisterDelayedCallback(func() { h.env.SignalWorkflow(name, v()) }, at)
}

func (h *harness) query(at time.Duration, name string, out any, args ...any) {
	h.env.RegisterDelayedCallback(func() {
		v, err := h.env.QueryWorkflow(name, args...)
		if err != nil {
			h.t.Errorf("query %s: %v", name, err)
			return
		}
		if err := v.Get(out); err != nil {
			h.t.Error(err)
		}
	}, at)
}

func (h *harness) run(cfg SessionConfig) *contract.SessionResult {
	h.t.Helper()
	h.env.ExecuteWorkflow(contract.WorkflowBrowserSession, cfg)
	if err := h.env.GetWorkflowError(); err != nil {
		h.t.Fatalf("session failed: %v", err)
	}
	var res contract.SessionResult
	if err := h.env.GetWorkflowResult(&res); err != nil {
		h.t.Fatal(err)
	}
	return &res
}

func (h *harness) code(id string) string {
	h.t.Helper()
	if err, ok := h.rejected[id]; ok {
		return "rejected: " + err.Error()
	}
	m, ok := h.results[id]
	if !ok {
		return "no result"
	}
	return code(m)
}

func TestSessionCreatesLazilyAndReleasesWhenIdle(t *testing.T) {
	h := newHarness(t)
	var before, after contract.SessionState
	h.query(time.Second, contract.QueryState, &before)
	h.call(2*time.Second, "u1", contract.ToolSnapshot, `{}`)
	h.query(3*time.Second, contract.QueryState, &after)
	res := h.run(SessionConfig{SearchAttributes: true})
	if before.State != contract.StateNew || before.Tag != "" {
		t.Fatalf("before the first call: %+v", before)
	}
	if h.code("u1") != "ok" {
		t.Fatalf("u1: %s", h.code("u1"))
	}
	if after.State != contract.StateLive || after.Tag != "sess-1-1" || after.URL != testURL || after.Calls != 1 || after.IdleDeadline == nil {
		t.Fatalf("after the first call: %+v", after)
	}
	if res.Reason != contract.EndIdle || h.f.calls(contract.ActivityCreate) != 1 || h.f.calls(contract.ActivityRelease) != 1 {
		t.Fatalf("result %+v, creates %d, releases %d", res, h.f.calls(contract.ActivityCreate), h.f.calls(contract.ActivityRelease))
	}
}

func TestSessionIdleWithoutCallsEndsWithoutBrowser(t *testing.T) {
	h := newHarness(t)
	res := h.run(SessionConfig{})
	if res.Reason != contract.EndIdle || h.f.calls(contract.ActivityCreate) != 0 || h.f.calls(contract.ActivityRelease) != 0 {
		t.Fatalf("result %+v", res)
	}
}

func TestSessionIdleNeverFiresMidCall(t *testing.T) {
	h := newHarness(t)
	ok, _ := json.Marshal(contract.RunResult{OK: true, Completed: 1, Total: 1})
	// The run takes 2 minutes of workflow time, past the 1-minute idle window.
	h.env.OnActivity(contract.ActivityRun, mock.Anything, mock.Anything).After(2*time.Minute).Return(json.RawMessage(ok), nil)
	h.call(10*time.Second, "long", contract.ToolRun, `{"actions":[{"op":"wait","ms":10}]}`)
	// Inside the idle window counted from the end of the long call.
	h.call(2*time.Minute+40*time.Second, "next", contract.ToolSnapshot, `{}`)
	res := h.run(SessionConfig{IdleTimeout: time.Minute, Timeouts: Timeouts{Heartbeat: time.Hour}})
	if h.code("long") != "ok" || h.code("next") != "ok" {
		t.Fatalf("long %s, next %s", h.code("long"), h.code("next"))
	}
	if res.Reason != contract.EndIdle || res.Calls != 2 {
		t.Fatalf("result %+v", res)
	}
}

func TestSessionEnds(t *testing.T) {
	cases := []struct {
		name   string
		cfg    SessionConfig
		script func(h *harness)
		reason string
	}{
		{"max lifetime", SessionConfig{IdleTimeout: 5 * time.Minute, MaxLifetime: 10 * time.Minute}, func(h *harness) {
			for i, at := range []time.Duration{time.Minute, 5 * time.Minute, 9 * time.Minute, 13 * time.Minute} {
				h.call(at, "c"+string(rune('0'+i)), contract.ToolSnapshot, `{}`)
			}
		}, contract.EndMaxLifetime},
		{"close signal", SessionConfig{}, func(h *harness) {
			h.call(time.Second, "c0", contract.ToolSnapshot, `{}`)
			h.signal(5*time.Second, contract.SignalClose, func() any { return nil })
			h.call(10*time.Second, "late", contract.ToolSnapshot, `{}`)
		}, contract.EndClosed},
		{"browser_release", SessionConfig{}, func(h *harness) {
			h.call(time.Second, "c0", contract.ToolSnapshot, `{}`)
			h.call(2*time.Second, "rel", contract.ToolRelease, `{}`)
			h.call(10*time.Second, "late", contract.ToolSnapshot, `{}`)
		}, contract.EndReleased},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			tc.script(h)
			res := h.run(tc.cfg)
			if res.Reason != tc.reason {
				t.Fatalf("reason %q, want %q", res.Reason, tc.reason)
			}
			if h.f.calls(contract.ActivityRelease) != 1 {
				t.Fatalf("released %d times", h.f.calls(contract.ActivityRelease))
			}
			if h.code("c0") != "ok" {
				t.Fatalf("c0: %s", h.code("c0"))
			}
			for _, late := range []string{"late", "c3"} {
				if _, sent := h.results[late]; sent {
					t.Fatalf("%s ran after the session ended: %v", late, h.results[late])
				}
			}
		})
	}
}

func TestSessionValidatorRejects(t *testing.T) {
	h := newHarness(t)
	h.call(time.Second, "bad-tool", "teleport", `{}`)
	h.call(2*time.Second, "bad-args", contract.ToolScreenshot, `{"quality":"high"}`)
	h.run(SessionConfig{})
	for id, want := range map[string]string{"bad-tool": "teleport", "bad-args": "quality"} {
		err := h.rejected[id]
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: rejection %v should name %q", id, err, want)
		}
	}
	if h.f.calls(contract.ActivityCreate) != 0 {
		t.Fatal("a rejected call created a browser")
	}
}

func TestSessionContinuesAsNewAfterCallInFlight(t *testing.T) {
	h := newHarness(t)
	ok, _ := json.Marshal(contract.RunResult{OK: true, Completed: 1, Total: 1, Page: contract.Page{URL: testURL}})
	h.env.OnActivity(contract.ActivityRun, mock.Anything, mock.Anything).After(time.Minute).Return(json.RawMessage(ok), nil)
	h.call(10*time.Second, "inflight", contract.ToolRun, `{"actions":[{"op":"reload"}]}`)
	h.env.RegisterDelayedCallback(func() { h.env.SetContinueAsNewSuggested(true) }, 30*time.Second)
	h.env.ExecuteWorkflow(contract.WorkflowBrowserSession, SessionConfig{Timeouts: Timeouts{Heartbeat: time.Hour}})
	var can *workflow.ContinueAsNewError
	if err := h.env.GetWorkflowError(); !errors.As(err, &can) {
		t.Fatalf("want continue-as-new, got %v", err)
	}
	if h.code("inflight") != "ok" {
		t.Fatalf("the call in flight did not finish first: %s", h.code("inflight"))
	}
	var next SessionConfig
	if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &next); err != nil {
		t.Fatal(err)
	}
	carried, err := CarriedOf(next)
	if err != nil {
		t.Fatal(err)
	}
	if carried == nil || carried.Browser.Session.Tag != "sess-1-1" || !carried.Browser.Created ||
		carried.Browser.Calls != 1 || carried.Browser.URL != testURL {
		t.Fatalf("carried %s", next.Carry)
	}
}

func TestSessionReconcilesCarriedSession(t *testing.T) {
	cases := []struct {
		name      string
		reconcile error
		want      string
		creates   int
	}{
		{"host alive keeps the session", nil, "ok", 0},
		{"host gone replaces it", temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil), "session_replaced", 1},
		{"host forgot it replaces it", fail(contract.CodeSessionEnded), "session_replaced", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.f.behave[contract.ActivityReconcile] = func(int, json.RawMessage) (any, error) {
				if tc.reconcile != nil {
					return nil, tc.reconcile
				}
				return map[string]bool{"ok": true}, nil
			}
			h.call(time.Second, "u1", contract.ToolSnapshot, `{}`)
			carry, err := json.Marshal(Carried{Browser: BrowserState{Base: "sess-1", Seq: 1, Created: true,
				Session: contract.SessionRef{Tag: "sess-1-1", Provider: "local", HostQueue: "host-old"}}})
			if err != nil {
				t.Fatal(err)
			}
			h.run(SessionConfig{Carry: carry})
			if h.code("u1") != tc.want || h.f.calls(contract.ActivityCreate) != tc.creates {
				t.Fatalf("u1 %s, creates %d", h.code("u1"), h.f.calls(contract.ActivityCreate))
			}
			if tc.creates > 0 {
				var c contract.CreateRequest
				h.f.input(t, contract.ActivityCreate, 0, &c)
				if c.Tag != "sess-1-2" {
					t.Fatalf("replacement tag %q", c.Tag)
				}
			}
		})
	}
}
