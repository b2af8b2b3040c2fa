package test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	dbclient "github.com/durable-browser/durable-browser/client"

	"github.com/go-rod/rod/lib/cdp"
	"github.com/google/uuid"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/handoff"
	"github.com/durable-browser/durable-browser/test/harness"
	"github.com/durable-browser/durable-browser/workflows"
)

// inbox is the webhook receiver a team would run for handoff notices: it
// verifies each notice's signature and keeps what verified.
type inbox struct {
	srv    *httptest.Server
	secret []byte
	mu     sync.Mutex
	got    []signedNotice
	bad    int
}

type signedNotice struct {
	handoff.Notice
	header string
	body   []byte
}

func newInbox(t *testing.T) *inbox {
	in := &inbox{secret: []byte("webhook-secret-" + uuid.NewString())}
	in.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		header := r.Header.Get(handoff.SignatureHeader)
		in.mu.Lock()
		defer in.mu.Unlock()
		if !signed(in.secret, header, body) {
			in.bad++
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var n handoff.Notice
		if json.Unmarshal(body, &n) != nil {
			in.bad++
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		in.got = append(in.got, signedNotice{Notice: n, header: header, body: body})
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(in.srv.Close)
	return in
}

// startWorker runs an in-process worker whose handoff port posts here.
func (in *inbox) startWorker(t *testing.T) {
	env.StartWorker(t, harness.WorkerOptions{Notifier: handoff.WebhookNotifier{URL: in.srv.URL + "/hooks/handoff", Secret: in.secret}})
}

// await returns the notice about requestID once it arrived.
func (in *inbox) await(t *testing.T, requestID string) signedNotice {
	t.Helper()
	var n signedNotice
	harness.Eventually(t, 30*time.Second, func() bool {
		in.mu.Lock()
		defer in.mu.Unlock()
		for _, x := range in.got {
			if x.RequestID == requestID {
				n = x
				return true
			}
		}
		return false
	}, "no verified notice for %s (unverified: %d)", requestID, in.bad)
	return n
}

// answer is a tool call's outcome, for calls made off the test goroutine.
type answer struct {
	raw json.RawMessage
	err error
}

// callAsync sends a tool call from another goroutine (it blocks while a
// handoff waits) and delivers its answer on the channel.
func (s *session) callAsync(tool string, args any) <-chan answer {
	ch := make(chan answer, 1)
	raw, err := json.Marshal(args)
	if err != nil {
		ch <- answer{err: err}
		return ch
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		out, err := dbclient.Call(ctx, env.Client, s.id, contract.ToolCall{Name: tool, Args: raw}, dbclient.CallOptions{Config: s.cfg})
		ch <- answer{out, err}
	}()
	return ch
}

func (a answer) decode(t *testing.T, v any) {
	t.Helper()
	if a.err != nil {
		t.Fatal(a.err)
	}
	if err := json.Unmarshal(a.raw, v); err != nil {
		t.Fatalf("%v: %s", err, a.raw)
	}
}

func receive(t *testing.T, ch <-chan answer) answer {
	t.Helper()
	select {
	case a := <-ch:
		return a
	case <-time.After(3 * time.Minute):
		t.Fatal("no answer within 3 minutes")
	}
	return answer{}
}

func state(t *testing.T, id string) *contract.SessionState {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := dbclient.State(ctx, env.Client, id)
	if err != nil {
		t.Fatalf("state of %s: %v", id, err)
	}
	return st
}

// pending waits until the session shows a pending handoff.
func pending(t *testing.T, id string) *contract.PendingHandoff {
	t.Helper()
	var p *contract.PendingHandoff
	harness.Eventually(t, 60*time.Second, func() bool {
		p = state(t, id).PendingHandoff
		return p != nil
	}, "session %s never showed a pending handoff", id)
	return p
}

func signal(t *testing.T, id, name string, arg any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := env.Client.SignalWorkflow(ctx, id, "", name, arg); err != nil {
		t.Fatalf("signal %s to %s: %v", name, id, err)
	}
}

// stateAttribute waits until the visibility store lists the session with
// BrowserState = want.
func stateAttribute(t *testing.T, id, want string) {
	t.Helper()
	q := fmt.Sprintf("WorkflowId = '%s' AND %s = '%s'", id, contract.SearchAttrState, want)
	harness.Eventually(t, 30*time.Second, func() bool {
		resp, err := env.Client.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default", Query: q})
		return err == nil && len(resp.GetExecutions()) == 1
	}, "visibility never showed %s with BrowserState %s", id, want)
}

// personHolds is a person at the browser: through the DevTools address the
// notice gave them (the way a person reaches a local Chrome), they press the
// page's button and keep holding it until the page says they passed.
func personHolds(t *testing.T, reach string) {
	t.Helper()
	u, err := url.Parse(reach)
	if err != nil || u.Query().Get("ws") == "" {
		t.Fatalf("notice's reach address is not a DevTools inspector address: %q", reach)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ws := &cdp.WebSocket{}
	if err := ws.Connect(ctx, "ws://"+u.Query().Get("ws"), nil); err != nil {
		t.Fatalf("reaching the browser: %v", err)
	}
	defer ws.Close()
	c := cdp.New().Start(ws)
	go func() {
		for range c.Event() {
		}
	}()
	eval := func(expr string) string {
		raw, err := c.Call(ctx, "", "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true})
		if err != nil {
			t.Fatalf("evaluate %s: %v", expr, err)
		}
		var r struct {
			Result struct {
				Value string `json:"value"`
			} `json:"result"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		return r.Result.Value
	}
	mouse := func(typ string, x, y float64) {
		p := map[string]any{"type": typ, "x": x, "y": y}
		if typ != "mouseMoved" {
			p["button"], p["clickCount"] = "left", 1
		}
		if _, err := c.Call(ctx, "", "Input.dispatchMouseEvent", p); err != nil {
			t.Fatalf("mouse %s: %v", typ, err)
		}
	}
	var box struct{ X, Y, Width, Height float64 }
	if err := json.Unmarshal([]byte(eval(`JSON.stringify(document.getElementById('hold').getBoundingClientRect())`)), &box); err != nil {
		t.Fatal(err)
	}
	x, y := box.X+box.Width/2, box.Y+box.Height/2
	mouse("mouseMoved", x, y)
	mouse("mousePressed", x, y)
	harness.Eventually(t, 30*time.Second, func() bool {
		return strings.Contains(eval(`document.getElementById('status').textContent`), "Verified")
	}, "the page never verified the person")
	mouse("mouseReleased", x, y)
}

var humanCondition = map[string]any{"text": "Verified by a person"}

// openHuman opens the page only a person can pass, and checks that the
// agent's own click does not pass it.
func openHuman(t *testing.T, s *session) {
	t.Helper()
	var run contract.RunResult
	s.must("run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/human.html"}), &run)
	var snap contract.SnapshotResult
	s.must("snapshot", map[string]any{"mode": "interactive"}, &snap)
	s.must("run", actions(map[string]any{"op": "click", "id": refFor(t, snap.Text, `button "Press and hold"`)}), &run)
	s.must("snapshot", map[string]any{}, &snap)
	if strings.Contains(snap.Text, "Verified by a person") {
		t.Fatalf("the agent's click passed the person check:\n%s", snap.Text)
	}
}

// A person passes the check the agent cannot: the notice reaches a signed
// webhook, other calls answer waiting_for_human meanwhile, a signal for an
// unknown request is ignored, and after "done" the condition holds.
func TestHandoffDone(t *testing.T) {
	in := newInbox(t)
	in.startWorker(t)
	s := newSession(t, workflows.SessionConfig{})
	openHuman(t, s)

	call := s.callAsync("browser_request_handoff", map[string]any{
		"instruction": "Press and hold the button until the page says you are verified", "completion_condition": humanCondition})
	p := pending(t, s.id)
	if p.Instruction == "" || p.Condition.Text != "Verified by a person" || !p.ExpiresAt.After(p.RequestedAt) {
		t.Fatalf("pending handoff: %+v", p)
	}
	stateAttribute(t, s.id, contract.StateWaitingForHuman)

	// The webhook notice verifies, names the request and how to answer, and
	// carries the inspector address; a changed body does not verify.
	n := in.await(t, p.RequestID)
	if n.WorkflowID != s.id || !strings.Contains(n.Answer.Done, p.RequestID) || !strings.Contains(n.Answer.RawSignal, "--name handoff") {
		t.Fatalf("notice: %+v", n.Notice)
	}
	if !strings.Contains(n.ReachURL, "/devtools/") {
		t.Fatalf("notice without a way to the browser: %q", n.ReachURL)
	}
	tampered := append([]byte(nil), n.body...)
	tampered[len(tampered)-2] ^= 1
	if signed(in.secret, n.header, tampered) {
		t.Fatal("a changed body verified")
	}

	// Meanwhile the agent's other calls answer waiting_for_human.
	f := s.failure("snapshot", map[string]any{})
	if f.Code != contract.CodeWaitingForHuman || !f.Retryable || !strings.Contains(f.Message, p.RequestID) {
		t.Fatalf("concurrent call: %+v", f)
	}

	// A signal for a request that does not exist changes nothing.
	signal(t, s.id, contract.SignalHandoff, contract.HandoffSignal{RequestID: "h-000000000000", Outcome: contract.OutcomeDone})
	signal(t, s.id, contract.SignalHandoff, map[string]any{"request_id": p.RequestID, "outcome": "maybe"})
	if st := state(t, s.id); st.PendingHandoff == nil || st.PendingHandoff.RequestID != p.RequestID ||
		st.PendingHandoff.Answer != nil || st.State != contract.StateWaitingForHuman {
		t.Fatalf("state after stray signals: %+v", st)
	}
	select {
	case a := <-call:
		t.Fatalf("handoff returned on a stray signal: %s %v", a.raw, a.err)
	default:
	}

	personHolds(t, n.ReachURL)
	signal(t, s.id, contract.SignalHandoff, contract.HandoffSignal{RequestID: p.RequestID, Outcome: contract.OutcomeDone, By: "ann", Note: "held it"})
	a := receive(t, call)
	var res contract.HandoffResult
	a.decode(t, &res)
	if !res.OK || res.Outcome != contract.OutcomeDone || !res.ConditionMet || res.By != "ann" || res.Note != "held it" ||
		res.RequestID != p.RequestID || res.WaitedS <= 0 || res.Snapshot == nil || !strings.Contains(res.Snapshot.Text, "Verified by a person") {
		t.Fatalf("handoff result: %s", a.raw)
	}
	if st := state(t, s.id); st.PendingHandoff != nil || st.State != contract.StateLive {
		t.Fatalf("state after the handoff: %+v", st)
	}
	stateAttribute(t, s.id, contract.StateLive)
	// A late signal for the finished request is ignored too.
	signal(t, s.id, contract.SignalHandoff, contract.HandoffSignal{RequestID: p.RequestID, Outcome: contract.OutcomeCancelled})
	var snap contract.SnapshotResult
	s.must("snapshot", map[string]any{}, &snap)
	if !strings.Contains(snap.Text, "Verified by a person") {
		t.Fatalf("snapshot after: %s", snap.Text)
	}

	noReach(t, s.id, n.ReachURL, a.raw)
	s.must("browser_release", map[string]any{}, nil)
	recordHistory(t, s.id, "handoff-done")
}

// "done" without the person doing anything: the condition is checked, not trusted.
func TestHandoffDoneConditionNotMet(t *testing.T) {
	in := newInbox(t)
	in.startWorker(t)
	s := newSession(t, workflows.SessionConfig{})
	openHuman(t, s)
	call := s.callAsync("browser_request_handoff", map[string]any{"instruction": "Press and hold", "completion_condition": humanCondition})
	p := pending(t, s.id)
	n := in.await(t, p.RequestID)
	signal(t, s.id, contract.SignalHandoff, contract.HandoffSignal{RequestID: p.RequestID, Outcome: contract.OutcomeDone, By: "bob"})
	a := receive(t, call)
	var res contract.HandoffResult
	a.decode(t, &res)
	if !res.OK || res.Outcome != contract.OutcomeDone || res.ConditionMet || res.By != "bob" || res.Snapshot == nil {
		t.Fatalf("handoff result: %s", a.raw)
	}
	noReach(t, s.id, n.ReachURL, a.raw)
}

func TestHandoffCancelled(t *testing.T) {
	in := newInbox(t)
	in.startWorker(t)
	s := newSession(t, workflows.SessionConfig{})
	openHuman(t, s)
	call := s.callAsync("browser_request_handoff", map[string]any{"instruction": "Press and hold", "completion_condition": humanCondition})
	p := pending(t, s.id)
	n := in.await(t, p.RequestID)
	signal(t, s.id, contract.SignalHandoff, contract.HandoffSignal{RequestID: p.RequestID, Outcome: contract.OutcomeCancelled, By: "cy", Note: "not today"})
	a := receive(t, call)
	var res contract.HandoffResult
	a.decode(t, &res)
	if !res.OK || res.Outcome != contract.OutcomeCancelled || res.ConditionMet || res.By != "cy" || res.Note != "not today" {
		t.Fatalf("handoff result: %s", a.raw)
	}
	// The session is usable again.
	var snap contract.SnapshotResult
	s.must("snapshot", map[string]any{}, &snap)
	noReach(t, s.id, n.ReachURL, a.raw)
}

func TestHandoffExpired(t *testing.T) {
	in := newInbox(t)
	in.startWorker(t)
	s := newSession(t, workflows.SessionConfig{})
	openHuman(t, s)
	a := receive(t, s.callAsync("browser_request_handoff", map[string]any{
		"instruction": "Press and hold", "completion_condition": humanCondition, "expires_in_s": 2}))
	var res contract.HandoffResult
	a.decode(t, &res)
	if !res.OK || res.Outcome != contract.OutcomeExpired || res.ConditionMet || res.By != "" || res.WaitedS < 2 {
		t.Fatalf("handoff result: %s", a.raw)
	}
	n := in.await(t, res.RequestID)
	if st := state(t, s.id); st.PendingHandoff != nil {
		t.Fatalf("still pending after expiry: %+v", st.PendingHandoff)
	}
	noReach(t, s.id, n.ReachURL, a.raw)
}

// reachMarkers are the shapes of a browser address: none may reach history,
// a result or a log line.
var reachMarkers = []string{"devtools/inspector.html", "/devtools/page/", "/devtools/browser/", "ws://"}

// noReach checks the session's whole history (every event, as JSON and as
// the raw bytes its payloads travel in), the results and the in-process
// workers' log for the reach address and its markers.
func noReach(t *testing.T, id, reach string, results ...json.RawMessage) {
	t.Helper()
	markers := append([]string{}, reachMarkers...)
	if reach != "" {
		markers = append(markers, reach)
		if u, err := url.Parse(reach); err == nil {
			markers = append(markers, u.Query().Get("ws"))
		}
	}
	check := func(where string, text string) {
		for _, m := range markers {
			if m != "" && strings.Contains(text, m) {
				t.Fatalf("%s holds a browser address (%q)", where, m)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	it := env.Client.GetWorkflowHistory(ctx, id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	events := 0
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatalf("history of %s: %v", id, err)
		}
		events++
		js, err := protojson.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := proto.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		where := fmt.Sprintf("history event %d (%s) of %s", ev.GetEventId(), ev.GetEventType(), id)
		check(where, string(js))
		check(where, string(raw))
	}
	if events == 0 {
		t.Fatalf("no history for %s", id)
	}
	for i, r := range results {
		check(fmt.Sprintf("result %d", i), string(r))
	}
	check("the worker log", env.Log.String())
}

// Approvals under the session's action policy, counted where it matters: at
// the site that would receive the form.
func TestApprovals(t *testing.T) {
	type tc struct {
		name     string
		policy   string
		decision string        // approve, deny, or "" to leave the hold unanswered
		timeout  time.Duration // the worker's hold timeout
		arrivals int
		held     string // the run result's word for the request
	}
	for _, c := range []tc{
		{"deny policy", contract.PolicyDeny, "", 0, 0, "denied"},
		{"ask then deny", contract.PolicyAsk, contract.DecisionDeny, 0, 0, "denied"},
		{"ask then approve", contract.PolicyAsk, contract.DecisionApprove, 0, 1, "approved"},
		{"ask unanswered", contract.PolicyAsk, "", 8 * time.Second, 0, "expired"},
		{"allow policy", contract.PolicyAllow, "", 0, 1, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			env.StartWorker(t, harness.WorkerOptions{HoldTimeout: c.timeout})
			s := newSession(t, workflows.SessionConfig{Session: contract.SessionOptions{ActionPolicy: c.policy}})
			var run contract.RunResult
			s.must("run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/"}), &run)
			var snap contract.SnapshotResult
			s.must("snapshot", map[string]any{"mode": "interactive"}, &snap)
			email := "approve-" + uuid.NewString()[:8] + "@example.com"
			arrived := func() int {
				n := 0
				for _, sub := range env.Demo.Submissions() {
					if sub.Fields["email"] == email {
						n++
					}
				}
				return n
			}
			call := s.callAsync("run", actions(
				map[string]any{"op": "fill", "id": refFor(t, snap.Text, `textbox "Email"`), "value": email},
				map[string]any{"op": "click", "id": refFor(t, snap.Text, `button "Create account"`)},
			))
			var hold contract.Hold
			if c.policy == contract.PolicyAsk {
				harness.Eventually(t, 60*time.Second, func() bool {
					for _, h := range state(t, s.id).Holds {
						if h.Decision == "" {
							hold = h
							return true
						}
					}
					return false
				}, "no hold appeared; holds %+v; worker log:\n%s", state(t, s.id).Holds, tail(env.Log.String(), 40))
				if hold.Method != "POST" || hold.Path != "/submit" || !strings.HasPrefix(env.Demo.URL(), hold.Origin) {
					t.Fatalf("hold: %+v", hold)
				}
				stateAttribute(t, s.id, contract.StateHeld)
				if arrived() != 0 {
					t.Fatal("a held request reached the site")
				}
				if c.decision != "" {
					signal(t, s.id, contract.SignalApproval, contract.ApprovalSignal{HoldID: hold.HoldID, Decision: c.decision, By: "dee"})
				}
			}
			a := receive(t, call)
			if a.err != nil {
				t.Fatal(a.err)
			}
			var res contract.RunResult
			_ = json.Unmarshal(a.raw, &res)
			if c.arrivals == 1 {
				harness.Eventually(t, 30*time.Second, func() bool { return arrived() == 1 }, "the approved form never arrived: %s", a.raw)
			}
			if got := arrived(); got != c.arrivals {
				t.Fatalf("%d arrivals, want %d (run: %s)", got, c.arrivals, a.raw)
			}
			if c.held != "" {
				held := res.Held
				if !res.OK {
					// A refused request stops the batch: the answer is a refused
					// failure saying why and listing the held request.
					var f contract.Failure
					_ = json.Unmarshal(a.raw, &f)
					if c.held == "approved" || f.Code != contract.CodeRefused || !strings.Contains(f.Message, "POST") ||
						!strings.Contains(f.Message, "was refused: ") || strings.Contains(f.Message, "policy is deny") && strings.Contains(f.Message, "approve") {
						t.Fatalf("run answer: %s", a.raw)
					}
					held = f.Held
				}
				found := false
				for _, h := range held {
					if h.Method == "POST" && h.Path == "/submit" && h.Decision == c.held {
						found = true
					}
				}
				if !found {
					t.Fatalf("run result does not list the request as %s: %s", c.held, a.raw)
				}
			}
			if c.policy == contract.PolicyAsk {
				// The hold is settled in the session: decided, or expired with its run.
				want := c.decision
				if want == "" {
					want = contract.DecisionExpired
				}
				for _, h := range state(t, s.id).Holds {
					if h.HoldID == hold.HoldID && h.Decision != want {
						t.Fatalf("hold in state: %+v, want %s", h, want)
					}
				}
				if st := state(t, s.id); st.State != contract.StateLive {
					t.Fatalf("state after the run: %s", st.State)
				}
			}
			noReach(t, s.id, "", a.raw)
			if c.decision == contract.DecisionApprove {
				s.must("browser_release", map[string]any{}, nil)
				recordHistory(t, s.id, "approval-approved")
			}
		})
	}
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// signed checks a webhook's signature header as its receiver would
// (docs/operations.md): v1 is the hex HMAC-SHA256 of "<t>.<body>".
func signed(secret []byte, header string, body []byte) bool {
	var ts, sig string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sig = v
		}
	}
	m := hmac.New(sha256.New, secret)
	fmt.Fprintf(m, "%s.%s", ts, body)
	return ts != "" && hmac.Equal([]byte(hex.EncodeToString(m.Sum(nil))), []byte(sig))
}

// A browser_release that arrives while a run holds a request for a person
// does not wait for the hold to expire (minutes): the session decides the
// hold cancelled, the run refuses the request unsent and answers saying
// so, and the release goes through.
func TestReleaseCancelsHold(t *testing.T) {
	env.StartWorker(t, harness.WorkerOptions{HoldTimeout: 10 * time.Minute})
	s := newSession(t, workflows.SessionConfig{Session: contract.SessionOptions{ActionPolicy: contract.PolicyAsk}})
	s.must("run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/"}), nil)
	var snap contract.SnapshotResult
	s.must("snapshot", map[string]any{"mode": "interactive"}, &snap)
	email := "release-" + uuid.NewString()[:8] + "@example.com"
	run := s.callAsync("run", actions(
		map[string]any{"op": "fill", "id": refFor(t, snap.Text, `textbox "Email"`), "value": email},
		map[string]any{"op": "click", "id": refFor(t, snap.Text, `button "Create account"`)},
	))
	harness.Eventually(t, 60*time.Second, func() bool {
		for _, h := range state(t, s.id).Holds {
			if h.Decision == "" {
				return true
			}
		}
		return false
	}, "no hold appeared; worker log:\n%s", tail(env.Log.String(), 40))
	release := s.callAsync("browser_release", map[string]any{})
	var rel contract.ReleaseResult
	receive(t, release).decode(t, &rel)
	a := receive(t, run)
	if a.err != nil {
		t.Fatal(a.err)
	}
	var f contract.Failure
	if err := json.Unmarshal(a.raw, &f); err != nil || f.Code != contract.CodeRefused || !strings.Contains(f.Message, "released while it waited") {
		t.Fatalf("the held run answered %s", a.raw)
	}
	found := false
	for _, h := range f.Held {
		found = found || (h.Method == "POST" && h.Decision == contract.DecisionCancelled)
	}
	if !found {
		t.Fatalf("the run does not list the request as cancelled: %s", a.raw)
	}
	for _, sub := range env.Demo.Submissions() {
		if sub.Fields["email"] == email {
			t.Fatal("a request held when the session was released reached the site")
		}
	}
	recordHistory(t, s.id, "release-cancels-hold")
}
