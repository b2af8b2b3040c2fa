package activities

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/driver"
	"github.com/durable-browser/durable-browser/internal/handoff"
)

var buy = driver.GatedRequest{Method: "POST", Origin: "https://shop.example", Path: "/buy", ResourceType: "Fetch"}

func TestRequestGate(t *testing.T) {
	approve := func(by string) func(string) contract.HoldDecision {
		return func(string) contract.HoldDecision {
			return contract.HoldDecision{Decision: contract.DecisionApprove, By: by}
		}
	}
	deny := func(by string) func(string) contract.HoldDecision {
		return func(string) contract.HoldDecision {
			return contract.HoldDecision{Decision: contract.DecisionDeny, By: by}
		}
	}
	sentBuy := []contract.SentRequest{{Method: "POST", Origin: "https://shop.example", Path: "/buy"}}
	tests := []struct {
		name          string
		sessionPolicy string
		runPolicy     string
		client        *fakeClient // nil: no Temporal client on the worker
		// gated says whether the driver is given a gate at all.
		gated    bool
		decision driver.GateDecision
		sent     []contract.SentRequest
		held     string // the held request's decision, "" for none
		by       string
		signals  int
	}{
		{name: "allow is not gated", sessionPolicy: contract.PolicyAllow, gated: false, decision: driver.GateAllow, sent: sentBuy},
		{name: "default is not gated", gated: false, decision: driver.GateAllow, sent: sentBuy},
		{name: "deny", sessionPolicy: contract.PolicyDeny, gated: true, decision: driver.GateDeny, held: "denied", by: "policy"},
		{name: "ask without a client", sessionPolicy: contract.PolicyAsk, gated: true, decision: driver.GateDeny, held: "expired"},
		{name: "ask approved", sessionPolicy: contract.PolicyAsk, client: &fakeClient{decide: approve("alice")}, gated: true, decision: driver.GateAllow, sent: sentBuy, held: "approved", by: "alice", signals: 1},
		{name: "ask denied", sessionPolicy: contract.PolicyAsk, client: &fakeClient{decide: deny("bob")}, gated: true, decision: driver.GateDeny, held: "denied", by: "bob", signals: 1},
		{name: "ask unanswered expires", sessionPolicy: contract.PolicyAsk, client: &fakeClient{}, gated: true, decision: driver.GateDeny, held: "expired", signals: 1},
		{name: "ask when the workflow cannot be told", sessionPolicy: contract.PolicyAsk, client: &fakeClient{signalErr: errors.New("workflow gone"), decide: approve("alice")}, gated: true, decision: driver.GateDeny, held: "expired", signals: 1},
		{name: "run policy allow overrides deny", sessionPolicy: contract.PolicyDeny, runPolicy: contract.PolicyAllow, gated: true, decision: driver.GateAllow, sent: sentBuy},
		{name: "run policy deny overrides ask", sessionPolicy: contract.PolicyAsk, runPolicy: contract.PolicyDeny, client: &fakeClient{decide: approve("alice")}, gated: true, decision: driver.GateDeny, held: "denied", by: "policy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, func(o *Options) {
				o.HoldTimeout = 300 * time.Millisecond
				if tt.client != nil {
					o.Client = tt.client
				}
			})
			h.setup = func(b *fakeBrowser) { b.requests = []driver.GatedRequest{buy} }
			ref := h.create("t-1", contract.SessionOptions{ActionPolicy: tt.sessionPolicy})
			b := h.browser(0)
			if got := b.opts.RequestGate != nil; got != tt.gated {
				t.Fatalf("driver gated = %v, want %v", got, tt.gated)
			}
			req := runReq(ref, []byte(`[{"op":"click","id":"3"}]`))
			req.Policy = tt.runPolicy
			start := time.Now()
			res, err := call[contract.RunResult](h, contract.ActivityRun, req)
			if err != nil {
				t.Fatal(err)
			}
			if time.Since(start) > 5*time.Second {
				t.Fatalf("the gate took %v", time.Since(start))
			}
			if !reflect.DeepEqual(b.decisions, []driver.GateDecision{tt.decision}) {
				t.Fatalf("gate decisions = %v, want %v", b.decisions, tt.decision)
			}
			if !reflect.DeepEqual(res.Sent, tt.sent) {
				t.Fatalf("sent = %+v, want %+v", res.Sent, tt.sent)
			}
			switch {
			case tt.held == "" && len(res.Held) != 0:
				t.Fatalf("held = %+v, want none", res.Held)
			case tt.held != "":
				if len(res.Held) != 1 {
					t.Fatalf("held = %+v, want one", res.Held)
				}
				hr := res.Held[0]
				if hr.Decision != tt.held || hr.By != tt.by || hr.Method != "POST" || hr.Origin != "https://shop.example" || hr.Path != "/buy" {
					t.Fatalf("held = %+v, want %s by %q", hr, tt.held, tt.by)
				}
				if tt.sessionPolicy == contract.PolicyAsk && tt.runPolicy == "" && len(hr.HoldID) != 33 {
					t.Fatalf("hold id = %q", hr.HoldID)
				}
			}
			if tt.client != nil {
				tt.client.mu.Lock()
				defer tt.client.mu.Unlock()
				if len(tt.client.signals) != tt.signals {
					t.Fatalf("signals = %+v, want %d", tt.client.signals, tt.signals)
				}
				if tt.signals > 0 {
					s := tt.client.signals[0]
					if s.HoldID != res.Held[0].HoldID || s.Method != "POST" || s.Origin != "https://shop.example" || s.Path != "/buy" {
						t.Fatalf("hold signal = %+v, held %+v", s, res.Held[0])
					}
				}
			}
		})
	}
}

// Whoever may signal a session can announce a hold and have it approved,
// but not for the request the worker holds: hold ids are nonces nobody sees
// before the worker announces them, and the worker releases its request
// only when the session's record of the hold (what the approver saw and
// signed) is that request. Here the session answers for the hold with a
// forged record, a harmless GET elsewhere, approved: the POST is refused.
func TestRequestGateReleasesOnlyTheRequestApproved(t *testing.T) {
	post := driver.GatedRequest{Method: "POST", Origin: "https://bank.example", Path: "/transfer",
		URL: "https://bank.example/transfer?to=eve", Body: []byte("amount=1000"), ResourceType: "Fetch"}
	forged := func(mod func(*contract.HoldDecision)) func(string) contract.HoldDecision {
		return func(string) contract.HoldDecision {
			d := contract.HoldDecision{Decision: contract.DecisionApprove, By: "ana", Method: "POST",
				RequestFacts: contract.RequestFacts{URL: "https://bank.example/transfer?to=[redacted]", BodySize: 11, Body: "amount=1000"}}
			mod(&d)
			return d
		}
	}
	cases := map[string]func(string) contract.HoldDecision{
		"a harmless GET elsewhere": forged(func(d *contract.HoldDecision) {
			d.Method, d.URL, d.BodySize, d.Body = "GET", "https://harmless.example/", 0, ""
		}),
		"the same request shown, another digest": forged(func(d *contract.HoldDecision) { d.Digest = strings.Repeat("0", 64) }),
	}
	for name, decide := range cases {
		t.Run(name, func(t *testing.T) {
			fc := &fakeClient{decide: decide}
			h := newHarness(t, func(o *Options) { o.HoldTimeout = 2 * time.Second; o.Client = fc })
			h.setup = func(b *fakeBrowser) { b.requests = []driver.GatedRequest{post} }
			ref := h.create("t-1", contract.SessionOptions{ActionPolicy: contract.PolicyAsk})
			res, err := call[contract.RunResult](h, contract.ActivityRun, runReq(ref, []byte(`[{"op":"click","id":"3"}]`)))
			if err != nil {
				t.Fatal(err)
			}
			if d := h.browser(0).decisions; !reflect.DeepEqual(d, []driver.GateDecision{driver.GateDeny}) {
				t.Fatalf("gate decisions %v: the POST was released on an approval of another request", d)
			}
			if len(res.Held) != 1 || res.Held[0].Decision != "blocked" || len(res.Sent) != 0 {
				t.Fatalf("held %+v sent %+v", res.Held, res.Sent)
			}
			s := fc.signals[0]
			if len(s.HoldID) != 33 || strings.Contains(s.HoldID, "-") || s.Digest == "" ||
				s.URL != "https://bank.example/transfer?to=[redacted]" || s.Body != "amount=1000" || s.BodySize != 11 {
				t.Fatalf("hold signal %+v", s)
			}
		})
	}
	// The real request's own record releases it; a body with a registered
	// secret is not shown, and nothing of it is in the signal.
	fc := &fakeClient{decide: func(string) contract.HoldDecision {
		return contract.HoldDecision{Decision: contract.DecisionApprove, By: "ana"}
	}}
	h := newHarness(t, func(o *Options) { o.HoldTimeout = 2 * time.Second; o.Client = fc })
	h.red.Register("hunter2hunter2")
	secret := post
	secret.Body = []byte("password=hunter2hunter2")
	h.setup = func(b *fakeBrowser) { b.requests = []driver.GatedRequest{secret} }
	ref := h.create("t-1", contract.SessionOptions{ActionPolicy: contract.PolicyAsk})
	res, err := call[contract.RunResult](h, contract.ActivityRun, runReq(ref, []byte(`[{"op":"click","id":"3"}]`)))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Held) != 1 || res.Held[0].Decision != "approved" {
		t.Fatalf("held %+v", res.Held)
	}
	if s := fc.signals[0]; s.Body != "" || s.BodySize != 23 || strings.Contains(fmt.Sprint(s), "hunter2") {
		t.Fatalf("hold signal shows a secret body: %+v", s)
	}
}

// A page firing many side-effecting requests at once under "ask" holds at
// most MaxHolds of them; the rest are refused unasked, listed as blocked,
// and cost no signal.
func TestRequestGateBoundsHolds(t *testing.T) {
	fc := &fakeClient{} // nobody decides
	h := newHarness(t, func(o *Options) { o.HoldTimeout = 500 * time.Millisecond; o.Client = fc })
	n := MaxHolds + 6
	h.setup = func(b *fakeBrowser) {
		for range n {
			b.requests = append(b.requests, buy)
		}
		b.concurrent = true
	}
	ref := h.create("t-1", contract.SessionOptions{ActionPolicy: contract.PolicyAsk})
	res, err := call[contract.RunResult](h, contract.ActivityRun, runReq(ref, []byte(`[{"op":"click","id":"3"}]`)))
	if err != nil {
		t.Fatal(err)
	}
	words := map[string]int{}
	for _, x := range res.Held {
		words[x.Decision]++
	}
	if words["expired"] != MaxHolds || words["blocked"] != n-MaxHolds {
		t.Fatalf("held decisions %v, want %d expired and %d blocked", words, MaxHolds, n-MaxHolds)
	}
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if len(fc.signals) != MaxHolds {
		t.Fatalf("%d hold signals, want %d", len(fc.signals), MaxHolds)
	}
}

func TestRequestGateOutsideARun(t *testing.T) {
	// A request a page sends between runs has no run to hold it for.
	for _, policy := range []string{contract.PolicyAsk, contract.PolicyDeny} {
		t.Run(policy, func(t *testing.T) {
			h := newHarness(t, func(o *Options) { o.Client = &fakeClient{} })
			h.create("t-1", contract.SessionOptions{ActionPolicy: policy})
			if d := h.browser(0).opts.RequestGate(context.Background(), buy); d != driver.GateDeny {
				t.Fatalf("decision = %v, want deny", d)
			}
		})
	}
}

type fakeNotifier struct {
	mu      sync.Mutex
	notices []handoff.Notice
	err     error
}

func (n *fakeNotifier) Notify(_ context.Context, x handoff.Notice) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.notices = append(n.notices, x)
	return n.err
}

func TestNotify(t *testing.T) {
	t.Run("no port", func(t *testing.T) {
		h := newHarness(t, nil)
		ref := h.create("t-1", contract.SessionOptions{})
		_, err := call[contract.ReleaseResult](h, contract.ActivityNotify, contract.NotifyRequest{Session: ref})
		wantCode(t, err, contract.CodeRefused, false)
	})
	t.Run("reach address from the active tab", func(t *testing.T) {
		n := &fakeNotifier{}
		h := newHarness(t, func(o *Options) { o.Notifier = n })
		h.setup = func(b *fakeBrowser) {
			b.target = "BBB" // the active tab's
		}
		ref := h.create("t-1", contract.SessionOptions{})
		req := contract.NotifyRequest{Session: ref, WorkflowID: "wf", RequestID: "r1", Instruction: "solve the captcha", Condition: contract.Condition{Text: "Welcome"}}
		res, err := call[contract.ReleaseResult](h, contract.ActivityNotify, req)
		if err != nil || !res.OK {
			t.Fatalf("notify = %+v, %v", res, err)
		}
		if len(n.notices) != 1 {
			t.Fatalf("notices = %+v", n.notices)
		}
		got := n.notices[0]
		if want := "http://127.0.0.1:9222/devtools/inspector.html?ws=127.0.0.1:9222/devtools/page/BBB"; got.ReachURL != want {
			t.Fatalf("reach url = %q, want %q", got.ReachURL, want)
		}
		if got.SessionTag != "t-1" || got.Instruction != "solve the captcha" || got.Condition != `the page shows "Welcome"` {
			t.Fatalf("notice = %+v", got)
		}
	})
	t.Run("port fails", func(t *testing.T) {
		n := &fakeNotifier{err: errors.New("webhook 502")}
		h := newHarness(t, func(o *Options) { o.Notifier = n })
		ref := h.create("t-1", contract.SessionOptions{})
		_, err := call[contract.ReleaseResult](h, contract.ActivityNotify, contract.NotifyRequest{Session: ref})
		wantCode(t, err, contract.CodeCommandFailed, true)
	})
}

// A browser handed to a person is no orphan while the handoff lasts: no call
// touches it then, yet its workflow still wants it. The next call ends the
// hold, and a handoff long expired keeps nothing.
func TestHandoffKeepsBrowserFromOrphanReaper(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.Notifier = &fakeNotifier{} })
	held := h.create("held", contract.SessionOptions{})
	stale := h.create("stale", contract.SessionOptions{})
	notify := func(ref contract.SessionRef, expires time.Time) {
		t.Helper()
		req := contract.NotifyRequest{Session: ref, WorkflowID: "wf", RequestID: "r-" + ref.Tag, Instruction: "log in", ExpiresAt: expires}
		if _, err := call[contract.ReleaseResult](h, contract.ActivityNotify, req); err != nil {
			t.Fatalf("notify %s: %v", ref.Tag, err)
		}
	}
	notify(held, time.Now().Add(20*time.Hour))
	// A handoff that expired two hours ago whose workflow never came back.
	notify(stale, time.Now().Add(-2*time.Hour))
	h.age("held", 3*time.Hour)
	h.age("stale", 3*time.Hour)

	got := h.a.ReleaseOrphans(context.Background(), time.Hour)
	if !reflect.DeepEqual(got, []string{"stale"}) {
		t.Fatalf("released %v, want only the long-expired handoff's browser", got)
	}
	if got := h.a.Sessions(); !reflect.DeepEqual(got, []string{"held"}) {
		t.Fatalf("sessions left = %v", got)
	}

	// The handoff ends: the workflow's next call (its snapshot) ends the hold.
	if _, err := call[contract.SnapshotResult](h, contract.ActivitySnapshot, contract.SnapshotRequest{Call: contract.Call{Session: held}}); err != nil {
		t.Fatal(err)
	}
	h.age("held", 3*time.Hour)
	if got := h.a.ReleaseOrphans(context.Background(), time.Hour); !reflect.DeepEqual(got, []string{"held"}) {
		t.Fatalf("released %v, want held once its handoff was over and nothing touched it", got)
	}
}
