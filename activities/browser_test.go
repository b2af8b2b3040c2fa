package activities

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/capture"
	"github.com/durable-browser/durable-browser/internal/driver"
	"github.com/durable-browser/durable-browser/internal/redact"
)

var gotoBatch = []byte(`[{"op":"goto","url":"https://example.com/a"},{"op":"goto","url":"https://example.com/b"},{"op":"goto","url":"https://example.com/c"}]`)

func runReq(ref contract.SessionRef, actions []byte) contract.RunRequest {
	return contract.RunRequest{Call: contract.Call{Session: ref}, Args: contract.RunArgs{Actions: actions}}
}

func TestRunReportsCompleted(t *testing.T) {
	h := newHarness(t, nil)
	h.setup = func(b *fakeBrowser) {
		b.title = "C"
		b.sent = []contract.SentRequest{{Method: "POST", Origin: "https://example.com", Path: "/log"}}
		b.runFn = func(_ context.Context, actions []driver.Action) (*contract.RunResult, error) {
			return &contract.RunResult{
				Page: contract.Page{URL: "https://example.com/c", Title: "C"}, Completed: len(actions), Total: len(actions),
				Sent:       []contract.SentRequest{{Method: "POST", Origin: "https://example.com", Path: "/log"}},
				TabsOpened: []contract.Tab{{ID: "t2", URL: "https://example.com/popup", Title: "Popup"}},
				Dialogs:    []contract.Dialog{{Type: "confirm", Message: "Sure?", Answer: "accepted"}, {Type: "alert", Message: "Hi", Answer: "dismissed"}},
			}, nil
		}
	}
	ref := h.create("t-1", contract.SessionOptions{})
	res, err := call[contract.RunResult](h, contract.ActivityRun, runReq(ref, gotoBatch))
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.Completed != 3 || res.Total != 3 || res.URL != "https://example.com/c" || res.Title != "C" {
		t.Fatalf("run = %+v", res)
	}
	if len(h.browser(0).runs) != 1 || len(h.browser(0).runs[0]) != 3 {
		t.Fatalf("browser ran %+v", h.browser(0).runs)
	}
	// Under "allow" nothing is gated: what was sent comes from the driver's journal.
	if want := []contract.SentRequest{{Method: "POST", Origin: "https://example.com", Path: "/log"}}; !reflect.DeepEqual(res.Sent, want) {
		t.Fatalf("sent = %+v, want %+v", res.Sent, want)
	}
	if len(res.TabsOpened) != 1 || res.TabsOpened[0].ID != "t2" {
		t.Fatalf("tabs opened = %+v", res.TabsOpened)
	}
	if len(res.Dialogs) != 2 || res.Dialogs[0].Answer != "accepted" || res.Dialogs[1].Answer != "dismissed" {
		t.Fatalf("dialogs = %+v", res.Dialogs)
	}
}

func TestRunFailureCodes(t *testing.T) {
	partial := func(done int) *contract.RunResult {
		return &contract.RunResult{Page: contract.Page{URL: "https://example.com/b", Title: "B"}, Completed: done, Total: 3, Failed: &contract.ActionFailure{Index: done, Op: "click", Reason: "it failed"}}
	}
	actErr := func(kind string) error {
		return &driver.ActionError{Index: 1, Op: "click", Kind: kind, Reason: "it failed"}
	}
	tests := []struct {
		name      string
		out       *contract.RunResult
		err       error
		code      contract.Code
		retryable bool
		// completed is the envelope's count; -1 when the envelope has none.
		completed int
		effected  bool
	}{
		{name: "no result", code: contract.CodeCommandFailed, completed: -1},
		{name: "stale", err: &driver.StaleError{ID: "5", Reason: "is from an older snapshot"}, code: contract.CodeStaleSnapshot, completed: -1},
		{name: "no snapshot", err: driver.ErrNoSnapshot, code: contract.CodeStaleSnapshot, completed: -1},
		{name: "parse", err: &driver.ParseError{Index: 0, Reason: "bad"}, code: contract.CodeRefused, completed: -1},
		{name: "gate refused", err: &driver.RefusedError{Method: "POST", Origin: "https://example.com", Path: "/buy"}, code: contract.CodeRefused, completed: -1},
		{name: "capture refused", err: &capture.RefusedError{Kind: capture.RefusedEmpty, Reason: "empty"}, code: contract.CodeRefused, completed: -1},
		{name: "cancelled", err: context.Canceled, code: contract.CodeAborted, completed: -1},
		{name: "deadline", err: fmt.Errorf("waiting: %w", context.DeadlineExceeded), code: contract.CodeTimeout, retryable: true, completed: -1},
		{name: "connection lost", err: driver.ErrClosed, code: contract.CodeBrowserUnavailable, retryable: true, completed: -1},
		{name: "action timeout", out: partial(1), err: actErr(driver.KindTimeout), code: contract.CodeTimeout, retryable: true, completed: 1, effected: true},
		{name: "action stale", out: partial(1), err: actErr(driver.KindStale), code: contract.CodeStaleSnapshot, completed: 1, effected: true},
		{name: "action refused", out: partial(1), err: actErr(driver.KindRefused), code: contract.CodeRefused, completed: 1, effected: true},
		{name: "action browser", out: partial(2), err: actErr(driver.KindBrowser), code: contract.CodeBrowserUnavailable, retryable: true, completed: 2, effected: true},
		{name: "action covered", out: partial(1), err: actErr(driver.KindCovered), code: contract.CodeCommandFailed, completed: 1, effected: true},
		{name: "first action failed", out: partial(0), err: actErr(driver.KindNotVisible), code: contract.CodeCommandFailed, completed: 0},
		// A click whose handler never stopped: the script was stopped, and
		// the click may have happened though none completed.
		{name: "busy page, stopped", out: partial(0), err: &driver.ActionError{Op: "click", Kind: driver.KindTimeout, Reason: "busy", MayHaveActed: true, Err: &driver.BusyError{For: 10e9, Stopped: true}},
			code: contract.CodeTimeout, retryable: true, completed: 0, effected: true},
		{name: "busy page, not stopped", out: partial(0), err: &driver.ActionError{Op: "click", Kind: driver.KindTimeout, Reason: "busy", MayHaveActed: true, Err: &driver.BusyError{For: 10e9}},
			code: contract.CodeCommandFailed, completed: 0, effected: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.setup = func(b *fakeBrowser) {
				b.runFn = func(context.Context, []driver.Action) (*contract.RunResult, error) { return tt.out, tt.err }
			}
			ref := h.create("t-1", contract.SessionOptions{})
			_, err := call[contract.RunResult](h, contract.ActivityRun, runReq(ref, gotoBatch))
			f := wantCode(t, err, tt.code, tt.retryable)
			switch {
			case tt.completed < 0 && f.Completed != nil:
				t.Fatalf("completed = %d, want none", *f.Completed)
			case tt.completed >= 0 && (f.Completed == nil || *f.Completed != tt.completed):
				t.Fatalf("completed = %v, want %d", f.Completed, tt.completed)
			}
			if want := map[bool]contract.Effect{true: contract.EffectPossiblyEffected, false: contract.EffectNone}[tt.effected]; f.Effect != want {
				t.Fatalf("effect = %s, want %s", f.Effect, want)
			}
			if tt.out != nil && f.LastURL != tt.out.URL {
				t.Fatalf("last url = %q, want %q", f.LastURL, tt.out.URL)
			}
			// The session outlives a failed call.
			if _, err := call[contract.SnapshotResult](h, contract.ActivitySnapshot, contract.SnapshotRequest{Call: contract.Call{Session: ref}}); err != nil {
				t.Fatalf("snapshot after the failed run: %v", err)
			}
		})
	}
}

// secrets binds each secret to https://example.com.
type secrets map[string]string

func (s secrets) Lookup(n string) (redact.Secret, bool) {
	v, ok := s[n]
	return redact.Secret{Name: n, Value: v, Origins: []string{"https://example.com"}}, ok
}

// unbound holds secrets without origins.
type unbound map[string]string

func (s unbound) Lookup(n string) (redact.Secret, bool) {
	v, ok := s[n]
	return redact.Secret{Name: n, Value: v}, ok
}

// A fill the driver refused for the field's origin is a refused call that
// names the origin and the secret, and carries no value.
func TestRunSecretRefusedForOrigin(t *testing.T) {
	const pw = "correct-horse-battery"
	h := newHarness(t, func(o *Options) { o.Secrets = &redact.Secrets{Source: secrets{"PASSWORD": pw}} })
	reason := "secret PASSWORD is not typed into https://other.example: it belongs to https://example.com"
	h.setup = func(b *fakeBrowser) {
		b.runFn = func(_ context.Context, actions []driver.Action) (*contract.RunResult, error) {
			ae := &driver.ActionError{Index: 0, Op: "fill", Kind: driver.KindRefused, Reason: reason}
			return &contract.RunResult{Page: contract.Page{URL: "https://other.example/"}, Total: 1, Failed: &contract.ActionFailure{Index: 0, Op: "fill", Reason: ae.Reason}}, ae
		}
	}
	ref := h.create("t-1", contract.SessionOptions{})
	_, err := call[contract.RunResult](h, contract.ActivityRun, runReq(ref, []byte(`[{"op":"fill","id":"3","value":"{{secret:PASSWORD}}"}]`)))
	f := wantCode(t, err, contract.CodeRefused, false)
	if msg := f.Message; !strings.Contains(msg, "https://other.example") || !strings.Contains(msg, "PASSWORD") || strings.Contains(msg, pw) {
		t.Fatalf("refusal = %s", msg)
	}
}

func TestRunRefusedBeforeTheBrowser(t *testing.T) {
	tests := []struct {
		name string
		args contract.RunArgs
	}{
		{"not a batch", contract.RunArgs{Actions: []byte(`{"op":"goto"}`)}},
		{"unknown op", contract.RunArgs{Actions: []byte(`[{"op":"teleport"}]`)}},
		{"unknown secret", contract.RunArgs{Actions: []byte(`[{"op":"fill","id":"3","value":"{{secret:NOPE}}"}]`)}},
		{"secret without origins", contract.RunArgs{Actions: []byte(`[{"op":"fill","id":"3","value":"{{secret:LOOSE}}"}]`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, func(o *Options) {
				o.Secrets = &redact.Secrets{Source: redact.Chain{secrets{}, unbound{"LOOSE": "loose-secret-value"}}}
			})
			ref := h.create("t-1", contract.SessionOptions{})
			_, err := call[contract.RunResult](h, contract.ActivityRun, contract.RunRequest{Call: contract.Call{Session: ref}, Args: tt.args})
			wantCode(t, err, contract.CodeRefused, false)
			if runs := h.browser(0).runs; len(runs) != 0 {
				t.Fatalf("a refused batch reached the browser: %+v", runs)
			}
		})
	}
}

func TestRunExpandsSecretsOnTheWorker(t *testing.T) {
	const pw = "correct-horse-battery"
	h := newHarness(t, func(o *Options) { o.Secrets = &redact.Secrets{Source: secrets{"PASSWORD": pw}} })
	h.setup = func(b *fakeBrowser) {
		b.runFn = func(_ context.Context, actions []driver.Action) (*contract.RunResult, error) {
			// The page echoes what was typed into its address and title.
			return &contract.RunResult{Page: contract.Page{URL: "https://example.com/?q=" + actions[0].Value, Title: "typed " + actions[0].Value}, Completed: 1, Total: 1}, nil
		}
	}
	ref := h.create("t-1", contract.SessionOptions{})
	res, err := call[contract.RunResult](h, contract.ActivityRun, runReq(ref, []byte(`[{"op":"fill","id":"3","value":"{{secret:password}}"}]`)))
	if err != nil {
		t.Fatal(err)
	}
	if got := h.browser(0).runs[0][0].Value; got != pw {
		t.Fatalf("the browser was given %q, want the secret", got)
	}
	// The driver learns which secret it types and where it belongs, and
	// the session guards its requests.
	if s := h.browser(0).runs[0][0].Secrets; len(s) != 1 || s[0].Name != "PASSWORD" || s[0].Origins[0] != "https://example.com" {
		t.Fatalf("the browser was given secrets %+v", s)
	}
	if !h.browser(0).opts.GuardSecrets {
		t.Fatal("a worker with secrets opened a session without the secret guard")
	}
	if containsAnywhere(res, pw) {
		t.Fatalf("the result carries the secret: %+v", res)
	}
}

func TestSnapshot(t *testing.T) {
	h := newHarness(t, nil)
	h.setup = func(b *fakeBrowser) {
		b.snap = &contract.SnapshotResult{OK: true, Page: contract.Page{URL: "https://example.com/shop", Title: "Shop"}, Observation: contract.Observation{Text: "- button \"Buy\" [3]", Epoch: 4, Elements: 1, Interactive: 1}}
	}
	ref := h.create("t-1", contract.SessionOptions{})
	res, err := call[contract.SnapshotResult](h, contract.ActivitySnapshot, contract.SnapshotRequest{Call: contract.Call{Session: ref}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.Epoch != 4 || res.URL != "https://example.com/shop" || res.Title != "Shop" || res.Text != "- button \"Buy\" [3]" || res.Interactive != 1 {
		t.Fatalf("snapshot = %+v", res)
	}

	h.browser(0).mu.Lock()
	h.browser(0).snapErr = &driver.StaleError{Reason: "the page navigated"}
	h.browser(0).mu.Unlock()
	_, err = call[contract.SnapshotResult](h, contract.ActivitySnapshot, contract.SnapshotRequest{Call: contract.Call{Session: ref}})
	wantCode(t, err, contract.CodeStaleSnapshot, false)
}

func TestDriverFailureIsTyped(t *testing.T) {
	// Every typed error maps to a code without consulting message text.
	if f := driverFailure(errors.New("stale snapshot: looks like one")); f.Code != contract.CodeBrowserUnavailable {
		t.Fatalf("an untyped error mapped by its text to %s", f.Code)
	}
	wrapped := fmt.Errorf("batch: %w", &driver.ActionError{Kind: driver.KindStale, Reason: "gone"})
	if f := driverFailure(wrapped); f.Code != contract.CodeStaleSnapshot {
		t.Fatalf("a wrapped action error mapped to %s", f.Code)
	}
	pending := fmt.Errorf("snapshot: %w", &driver.PendingError{Method: "POST", Origin: "http://127.0.0.1:1", Path: "/slow"})
	if f := driverFailure(pending); f.Code != contract.CodeTimeout || !strings.Contains(f.Message, "waiting for http://127.0.0.1:1 to answer a form submission") {
		t.Fatalf("a page waiting on a server mapped to %+v", f)
	}
	// No tab left and none could be opened: not worth retrying, and the
	// message names browser_relaunch (even inside an action's error).
	noTab := fmt.Errorf("%w, and a new one could not be opened (x): relaunch the browser with browser_relaunch", driver.ErrNoTab)
	for _, err := range []error{noTab, &driver.ActionError{Kind: driver.KindBrowser, Reason: noTab.Error(), Err: noTab}} {
		if f := driverFailure(err); f.Code != contract.CodeCommandFailed || f.Retryable || !strings.Contains(f.Message, "browser_relaunch") {
			t.Fatalf("no tab left mapped to %+v", f)
		}
	}
}

// An action that ran out of time answers with the action and what it waited
// for, not a bare "ran out of time"; a cancelled one is aborted.
func TestDriverFailureNamesTheTimedOutAction(t *testing.T) {
	ae := &driver.ActionError{Index: 1, Op: "wait", Kind: driver.KindTimeout, Reason: `waited for it, but text "Thanks" did not appear within 10s`, Err: context.DeadlineExceeded}
	f := driverFailure(ae)
	if f.Code != contract.CodeTimeout || !strings.Contains(f.Message, `action 2 (wait) failed: waited for it, but text "Thanks" did not appear`) {
		t.Fatalf("timed-out wait: %+v", f)
	}
	ae.Err = context.Canceled
	if f := driverFailure(ae); f.Code != contract.CodeAborted {
		t.Fatalf("cancelled wait: %+v", f)
	}
}

// A refusal says why: deny refuses without asking anyone; under ask a
// person denied it, or no one decided in time.
func TestRefusalMessageSaysWhy(t *testing.T) {
	r := &driver.RefusedError{Method: "POST", Origin: "http://127.0.0.1:8380", Path: "/submit"}
	failed := &contract.ActionFailure{Index: 1, Op: "click"}
	cases := []struct {
		policy string
		held   []contract.HeldRequest
		want   string
	}{
		{contract.PolicyDeny, []contract.HeldRequest{{Method: "POST", Origin: r.Origin, Path: "/submit", Decision: "denied", By: "policy"}}, "action 2 (click): request POST http://127.0.0.1:8380/submit was refused: this session's action policy is deny"},
		{contract.PolicyAsk, []contract.HeldRequest{{Method: "POST", Origin: r.Origin, Path: "/submit", Decision: "denied", By: "ann"}}, "a person (ann) denied it"},
		{contract.PolicyAsk, []contract.HeldRequest{{Method: "POST", Origin: r.Origin, Path: "/submit", Decision: contract.DecisionExpired}}, "no one decided in time"},
	}
	for _, c := range cases {
		if got := refusalMessage(failed, c.policy, r, c.held); !strings.Contains(got, c.want) || (c.policy == contract.PolicyDeny && strings.Contains(got, "approve")) {
			t.Errorf("policy %s: %q, want it to say %q", c.policy, got, c.want)
		}
	}
}

// A run whose held list is full (a page's 55 background requests refused
// unasked) still says why its own request was refused: a person denied
// it, not "ask a person to approve it".
func TestRefusalMessageAfterTheHeldListIsFull(t *testing.T) {
	rs := &runState{policy: contract.PolicyAsk}
	for range 55 {
		rs.hold(contract.HeldRequest{Method: "POST", Origin: "https://shop.example", Path: "/beacon", Decision: heldBlocked, By: "policy"})
	}
	rs.hold(contract.HeldRequest{HoldID: "h1", Method: "POST", Origin: "https://shop.example", Path: "/submit", Decision: "denied", By: "ann"})
	l := rs.lists(nil, nil)
	if len(l.held) != 50 || l.notListed == nil || l.notListed.Held != 6 {
		t.Fatalf("held %d, not listed %+v; want 50 and 6", len(l.held), l.notListed)
	}
	// The request a person decided is listed, ahead of those refused unasked.
	if l.held[0].HoldID != "h1" || l.held[0].By != "ann" || l.held[1].Decision != heldBlocked {
		t.Fatalf("held starts %+v, %+v; want the person's decision first", l.held[0], l.held[1])
	}
	if f := l.failureCounts(); f == nil || *f != (contract.NotListed{Held: 6}) {
		t.Fatalf("a failure counts %+v", f)
	}
	msg := refusalMessage(nil, rs.policy, &driver.RefusedError{Method: "POST", Origin: "https://shop.example", Path: "/submit"}, rs.decisions())
	if !strings.Contains(msg, "a person (ann) denied it") {
		t.Fatalf("message %q, want the person's denial", msg)
	}
}
