package test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/input"
	"github.com/go-rod/rod/lib/proto"
	"github.com/rs/zerolog"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/config"
	"github.com/durable-browser/durable-browser/internal/handoff"
	"github.com/durable-browser/durable-browser/internal/liveview"
	"github.com/durable-browser/durable-browser/providers"
	"github.com/durable-browser/durable-browser/providers/local"
	"github.com/durable-browser/durable-browser/test/harness"
	"github.com/durable-browser/durable-browser/workflows"
)

// The live view tests drive the viewer as a person would: a Chromium of
// their own opens the viewer's address, sees frames on its canvas, and
// clicks and types through it into the session's page.

// liveSite is a loopback site whose controls sit at fixed places, so a
// click on the viewer's canvas can aim at them. It counts GET /start and
// POST /buy.
type liveSite struct {
	*httptest.Server
	starts, buys atomic.Int64
}

const livePage = `<!doctype html><html><head><title>live</title><style>
body{margin:0;font:20px sans-serif}
#reveal{position:absolute;left:40px;top:40px;width:240px;height:80px}
#name{position:absolute;left:40px;top:160px;width:400px;height:50px;font-size:24px}
#buy{position:absolute;left:40px;top:260px;width:240px;height:80px}
#out{position:absolute;left:40px;top:360px;margin:0}
#echo{position:absolute;left:40px;top:420px;margin:0}
</style></head><body>
<button id="reveal" onclick="document.getElementById('out').textContent='revealed ready'">Reveal</button>
<input id="name" aria-label="Name" oninput="document.getElementById('echo').textContent='echo: '+this.value">
<form method="post" action="/buy"><button id="buy">Buy</button></form>
<p id="out"></p><p id="echo"></p>
</body></html>`

// A page of another origin that tries the viewer's socket with the right
// token: the upgrade must refuse it.
const foreignPage = `<!doctype html><html><head><title>foreign</title></head><body><script>
const q = new URLSearchParams(location.search);
const ws = new WebSocket(q.get("ws"));
let got = 0;
ws.onopen = () => ws.send(JSON.stringify({token: q.get("t")}));
ws.onmessage = () => { got++; };
ws.onclose = (e) => { document.title = "closed " + e.code + " after " + got; };
</script></body></html>`

func newLiveSite(t *testing.T) *liveSite {
	s := &liveSite{}
	mux := http.NewServeMux()
	page := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, livePage)
	}
	mux.HandleFunc("GET /{$}", page)
	mux.HandleFunc("GET /start", func(w http.ResponseWriter, r *http.Request) { s.starts.Add(1); page(w, r) })
	mux.HandleFunc("POST /buy", func(w http.ResponseWriter, _ *http.Request) { s.buys.Add(1); fmt.Fprint(w, "bought") })
	mux.HandleFunc("GET /foreign", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, foreignPage)
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// person is someone's own Chromium, with the viewer open in a tab.
type person struct {
	t    *testing.T
	rb   *rod.Browser
	page *rod.Page
}

func newPerson(t *testing.T) *person {
	t.Helper()
	root, err := os.MkdirTemp(env.Dir, "person-")
	if err != nil {
		t.Fatal(err)
	}
	p, err := local.New(local.Options{ProfileRoot: root, BootID: "person", Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sess, err := p.Create(ctx, providers.CreateOptions{Tag: "person"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Release(context.Background(), "person"); harness.KillUnder(root) })
	rb := rod.New().ControlURL(sess.CDPURL)
	if err := rb.Connect(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rb.Close() })
	return &person{t: t, rb: rb}
}

// open opens addr in a new tab of the person's browser.
func (p *person) open(addr string) *rod.Page {
	p.t.Helper()
	pg, err := p.rb.Page(proto.TargetCreateTarget{URL: addr})
	if err != nil {
		p.t.Fatal(err)
	}
	if err := pg.SetViewport(&proto.EmulationSetDeviceMetricsOverride{Width: 1400, Height: 900, DeviceScaleFactor: 1}); err != nil {
		p.t.Fatal(err)
	}
	return pg
}

// data reads one of the viewer page's data attributes.
func data(t *testing.T, pg *rod.Page, name string) string {
	t.Helper()
	// The viewer may not have its body yet: nothing, not an error.
	v, err := pg.Eval(`(n) => (document.body && document.body.dataset[n]) || ""`, name)
	if err != nil {
		t.Fatal(err)
	}
	return v.Value.Str()
}

// at moves the person's pointer onto the canvas where the session's page
// has (x, y), in the page's CSS pixels (the session's 1280x720 viewport).
func (p *person) at(x, y float64) {
	p.t.Helper()
	v, err := p.page.Eval(`() => { const r = document.getElementById("screen").getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; }`)
	if err != nil {
		p.t.Fatal(err)
	}
	r := v.Value.Arr()
	cx := r[0].Num() + x/1280*r[2].Num()
	cy := r[1].Num() + y/720*r[3].Num()
	if err := p.page.Mouse.MoveTo(proto.Point{X: cx, Y: cy}); err != nil {
		p.t.Fatal(err)
	}
}

func (p *person) click(x, y float64) {
	p.t.Helper()
	p.at(x, y)
	if err := p.page.Mouse.Click(proto.InputMouseButtonLeft, 1); err != nil {
		p.t.Fatal(err)
	}
}

// pressTake presses the viewer's Take over (or Give back) button.
func (p *person) pressTake() {
	p.t.Helper()
	// A tab in the background paints nothing: bring the viewer forward.
	if _, err := p.page.Activate(); err != nil {
		p.t.Fatal(err)
	}
	el, err := p.page.Timeout(30 * time.Second).Element("#take")
	if err != nil {
		p.t.Fatal(err)
	}
	if err := el.Click(proto.InputMouseButtonLeft, 1); err != nil {
		p.t.Fatal(err)
	}
}

func (p *person) takeOver(lv *liveview.Server, tag string) {
	p.t.Helper()
	p.pressTake()
	harness.Eventually(p.t, 20*time.Second, func() bool { return lv.Hands(tag).State().TakenOver }, "Take over did not reach the server")
}

// liveWorker starts a worker serving the live view.
func liveWorker(t *testing.T) *liveview.Server {
	t.Helper()
	return liveWorkerWith(t, harness.WorkerOptions{LiveView: config.LiveView{Addr: "127.0.0.1:0", Dir: t.TempDir()}})
}

func liveWorkerWith(t *testing.T, o harness.WorkerOptions) *liveview.Server {
	t.Helper()
	w := env.StartWorker(t, o)
	t.Cleanup(func() {
		if t.Failed() {
			for _, line := range strings.Split(env.Log.String(), "\n") {
				if strings.Contains(line, "live view") {
					t.Log(line)
				}
			}
		}
	})
	return w.LiveView()
}

// tagOf is a session's current tag, from its state.
func tagOf(t *testing.T, s *session) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := env.Client.QueryWorkflow(ctx, s.id, "", contract.QueryState)
	if err != nil {
		t.Fatal(err)
	}
	var st contract.SessionState
	if err := v.Get(&st); err != nil {
		t.Fatal(err)
	}
	return st.Tag
}

var buyID = regexp.MustCompile(`\[(\d+)\] button "Buy"`)

func TestLiveViewDrivesThePage(t *testing.T) {
	site := newLiveSite(t)
	lv := liveWorker(t)
	s := newSession(t, workflows.SessionConfig{})
	s.must("run", actions(map[string]any{"op": "goto", "url": site.URL + "/"}), nil)
	var snap contract.SnapshotResult
	s.must("snapshot", map[string]any{}, &snap)
	m := buyID.FindStringSubmatch(snap.Text)
	if m == nil {
		t.Fatalf("no Buy button in %s", snap.Text)
	}
	tag := tagOf(t, s)
	addr, ok := lv.URL(tag)
	if !ok {
		t.Fatalf("no live view for session %s", tag)
	}
	u, _ := url.Parse(addr)
	token := strings.TrimPrefix(u.Fragment, "t=")

	// Frames arrive on the canvas.
	p := newPerson(t)
	p.page = p.open(addr)
	harness.Eventually(t, 30*time.Second, func() bool { return data(t, p.page, "frames") != "" }, "no frame reached the viewer's canvas")

	// A second viewer, a wrong token and another origin are refused.
	second := p.open(addr)
	harness.Eventually(t, 20*time.Second, func() bool { return data(t, second, "closed") == "4009" }, "a second viewer was not refused: closed %q", data(t, second, "closed"))
	wrong := p.open(strings.TrimSuffix(addr, token) + strings.Repeat("A", len(token)))
	harness.Eventually(t, 20*time.Second, func() bool { return data(t, wrong, "closed") == "4001" }, "a wrong token was not refused: closed %q", data(t, wrong, "closed"))
	if data(t, wrong, "frames") != "" || data(t, second, "frames") != "" {
		t.Fatal("a refused viewer got frames")
	}
	wsURL := "ws://" + u.Host + "/ws/" + strings.TrimPrefix(u.Path, "/v/")
	foreign := p.open(site.URL + "/foreign?" + url.Values{"ws": {wsURL}, "t": {token}}.Encode())
	harness.Eventually(t, 20*time.Second, func() bool {
		title, _ := foreign.Eval(`() => document.title`)
		return title != nil && strings.HasPrefix(title.Value.Str(), "closed ")
	}, "the foreign page's socket did not close")
	if title, _ := foreign.Eval(`() => document.title`); title.Value.Str() != "closed 1006 after 0" {
		t.Fatalf("a page of another origin reached the viewer's socket: %s", title.Value.Str())
	}
	for _, pg := range []*rod.Page{second, wrong, foreign} {
		_ = pg.Close()
	}
	before := data(t, p.page, "frames")

	// The person takes over: the agent is refused before it acts.
	p.takeOver(lv, tag)
	f := s.failure("snapshot", map[string]any{})
	if f.Code != contract.CodeRefused || f.Reason != contract.ReasonPersonDriving || !f.Retryable {
		t.Fatalf("agent call while a person holds the browser: %+v", f)
	}

	// Click and type through the canvas.
	p.click(160, 80)  // Reveal
	p.click(240, 185) // the Name field
	if err := p.page.Keyboard.Type([]input.Key("hello")...); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 20*time.Second, func() bool { return data(t, p.page, "takenOver") == "true" }, "the viewer never showed Give back")
	p.pressTake() // now "Give back"
	t.Logf("frames: %s before the take-over, %s now", before, data(t, p.page, "frames"))
	harness.Eventually(t, 20*time.Second, func() bool { return !lv.Hands(tag).State().TakenOver }, "Give back did not reach the server: viewer closed %q, says %q",
		data(t, p.page, "closed"), p.page.MustEval(`() => document.getElementById("status").textContent`).Str())

	// The agent's old ids were dropped: its first call after the person
	// (once their last 3 s of input are over) finds its id stale.
	harness.Eventually(t, 60*time.Second, func() bool {
		f := s.failure("run", actions(map[string]any{"op": "click", "id": m[1]}))
		if f.Reason == contract.ReasonPersonDriving {
			return false
		}
		if f.Code != contract.CodeStaleSnapshot {
			t.Fatalf("a click on an id from before the person drove: %+v", f)
		}
		return true
	}, "the agent stayed refused")
	// And the next result says a person drove, and shows what they did.
	s.must("snapshot", map[string]any{}, &snap)
	if snap.PersonDrove == "" || !strings.Contains(snap.Text, "revealed ready") || !strings.Contains(snap.Text, "echo: hello") {
		t.Fatalf("snapshot after the person drove: person_drove %q, text %s", snap.PersonDrove, snap.Text)
	}
	var next contract.SnapshotResult
	s.must("snapshot", map[string]any{}, &next)
	if next.PersonDrove != "" {
		t.Fatal("the agent was told twice")
	}
	if site.buys.Load() != 0 {
		t.Fatalf("%d purchases: nobody pressed Buy", site.buys.Load())
	}

	// The address went nowhere but here: not to history, nor the log.
	if h := historyJSON(t, s.id); strings.Contains(h, token) {
		t.Fatal("the viewer token is in the session's history")
	}
	if strings.Contains(env.Log.String(), token) {
		t.Fatal("the viewer token is in the worker's log")
	}

	// The view ends with the session: socket closed, address dead.
	s.must("browser_release", map[string]any{}, nil)
	harness.Eventually(t, 60*time.Second, func() bool { return data(t, p.page, "closed") == "4010" }, "the viewer's socket outlived the session: closed %q, says %q", data(t, p.page, "closed"), p.page.MustEval(`() => document.getElementById("status").textContent`).Str())
	if _, ok := lv.URL(tag); ok {
		t.Fatal("the session's live view address outlived it")
	}
	resp, err := http.Get("http://" + u.Host + u.Path)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("viewer page after the session ended: %d", resp.StatusCode)
	}
}

func TestLiveViewGateRefusesAPreparedAction(t *testing.T) {
	site := newLiveSite(t)
	lv := liveWorker(t)
	s := newSession(t, workflows.SessionConfig{})
	s.must("run", actions(map[string]any{"op": "goto", "url": site.URL + "/"}), nil)
	tag := tagOf(t, s)
	addr, ok := lv.URL(tag)
	if !ok {
		t.Fatalf("no live view for session %s", tag)
	}
	p := newPerson(t)
	p.page = p.open(addr)
	harness.Eventually(t, 30*time.Second, func() bool { return data(t, p.page, "frames") != "" }, "no frame reached the viewer's canvas")

	// The agent's batch begins (its first action is seen by the site),
	// then waits for text only the person's click brings; its last action
	// would buy.
	done := make(chan json.RawMessage, 1)
	go func() {
		out, _ := s.call("run", actions(
			map[string]any{"op": "goto", "url": site.URL + "/start"},
			map[string]any{"op": "wait", "text": "revealed ready"},
			map[string]any{"op": "click", "locator": map[string]any{"role": "button", "name": "Buy"}},
		))
		done <- out
	}()
	harness.Eventually(t, 60*time.Second, func() bool { return site.starts.Load() == 1 }, "the agent's batch did not begin")
	p.takeOver(lv, tag)
	p.click(160, 80) // Reveal, on the page the agent went to

	var out json.RawMessage
	select {
	case out = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the agent's batch did not end")
	}
	var f contract.Failure
	if err := json.Unmarshal(out, &f); err != nil {
		t.Fatal(err)
	}
	if f.OK || f.Code != contract.CodeRefused || f.Reason != contract.ReasonPersonDriving || f.Completed == nil || *f.Completed < 1 || *f.Completed > 2 {
		t.Fatalf("batch prepared before the take-over: %s", out)
	}
	if n := site.buys.Load(); n != 0 {
		t.Fatalf("the site saw %d purchases from an action prepared before the take-over", n)
	}
}

// notices keeps what the handoff port was told.
type notices chan handoff.Notice

func (n notices) Notify(_ context.Context, x handoff.Notice) error {
	n <- x
	return nil
}

func TestLiveViewHandoffAndWatchOnly(t *testing.T) {
	site := newLiveSite(t)
	dir := t.TempDir()
	port := make(notices, 4)
	lv := liveWorkerWith(t, harness.WorkerOptions{Notifier: port, LiveView: config.LiveView{Addr: "127.0.0.1:0", Dir: dir}})
	s := newSession(t, workflows.SessionConfig{})
	s.must("run", actions(map[string]any{"op": "goto", "url": site.URL + "/"}), nil)
	tag := tagOf(t, s)

	done := s.callAsync("browser_request_handoff", map[string]any{"instruction": "look at the page", "completion_condition": map[string]any{"text": "Reveal"}, "expires_in_s": 300})
	var n handoff.Notice
	select {
	case n = <-port:
	case a := <-done:
		t.Fatalf("the handoff answered before a notice: %s %v", a.raw, a.err)
	case <-time.After(2 * time.Minute):
		t.Fatal("no handoff notice")
	}
	addr, _ := lv.URL(tag)
	if n.ReachURL == "" || n.ReachURL != addr {
		t.Fatalf("the handoff's notice reaches the browser at %q, want the live view", n.ReachURL)
	}
	if !lv.Hands(tag).State().TakenOver {
		t.Fatal("a handoff did not grant Take over")
	}
	// handoff list --show-url shows it; without the flag it is not shown.
	p := pending(t, s.id)
	if out := cliOK(t, "handoff", "list", "--show-url", "--live-view-dir", dir); !lineWith(out, s.id, p.RequestID, addr) {
		t.Fatalf("handoff list --show-url does not show the address:\n%s", out)
	}
	if out := cliOK(t, "handoff", "list", "--live-view-dir", dir); strings.Contains(out, strings.TrimPrefix(addr, "http://")) {
		t.Fatalf("handoff list shows the address without --show-url:\n%s", out)
	}

	// A watch-only viewer's input is dropped on the server.
	u, _ := url.Parse(addr)
	token := strings.TrimPrefix(u.Fragment, "t=")
	pr := newPerson(t)
	pr.page = pr.open(addr + "&watch")
	harness.Eventually(t, 30*time.Second, func() bool { return data(t, pr.page, "frames") != "" && lv.Viewing(tag) }, "no frame reached the watcher's canvas")
	before := lv.Hands(tag).State()
	pr.click(160, 80) // Reveal
	// Leaving closes its socket after every message it sent was read.
	if err := pr.page.Navigate("about:blank"); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 20*time.Second, func() bool { return !lv.Viewing(tag) }, "the watcher did not leave")
	// The page sends nothing when watching; the server drops what a
	// client sends anyway.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws://"+u.Host+"/ws/"+strings.TrimPrefix(u.Path, "/v/"), &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"http://" + u.Host}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{`{"token":"` + token + `","watch":true}`, `{"t":"take"}`,
		`{"t":"mouse","type":"mousePressed","x":160,"y":80,"button":"left","buttons":1,"clickCount":1}`,
		`{"t":"mouse","type":"mouseReleased","x":160,"y":80,"button":"left","clickCount":1}`} {
		if err := c.Write(ctx, websocket.MessageText, []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	harness.Eventually(t, 20*time.Second, func() bool { return lv.Viewing(tag) }, "the watching client was not let in")
	_ = c.Close(websocket.StatusNormalClosure, "")
	harness.Eventually(t, 20*time.Second, func() bool { return !lv.Viewing(tag) }, "the watching client did not leave")
	if after := lv.Hands(tag).State(); after.Epoch != before.Epoch {
		t.Fatalf("a watcher's input moved the hands: %+v, then %+v", before, after)
	}

	// The handoff is answered; the grant ends with the agent's next call,
	// the handoff's own snapshot, which shows the page untouched: no one
	// drove (the watcher's input was dropped), so it says no person did.
	signal(t, s.id, contract.SignalHandoff, contract.HandoffSignal{RequestID: p.RequestID, Outcome: contract.OutcomeDone})
	var res contract.HandoffResult
	receive(t, done).decode(t, &res)
	if res.Snapshot == nil || strings.Contains(res.Snapshot.Text, "revealed ready") || res.Snapshot.PersonDrove != "" {
		t.Fatalf("after the handoff: %+v, %+v", res.Snapshot, res.SnapshotFailure)
	}
	if lv.Hands(tag).State().TakenOver {
		t.Fatal("the handoff's grant outlived it")
	}
	if h := historyJSON(t, s.id); strings.Contains(h, token) {
		t.Fatal("the viewer token is in the session's history")
	}
	// The address goes with the session, from the book too.
	s.must("browser_release", map[string]any{}, nil)
	if out := cliOK(t, "handoff", "list", "--show-url", "--live-view-dir", dir); strings.Contains(out, token) {
		t.Fatalf("an ended session's address is still listed:\n%s", out)
	}
}

func TestLiveViewOfACDPSession(t *testing.T) {
	// A Chrome someone else runs: the cdp provider drives a page of it,
	// and the live view streams and fences that page the same way.
	root, err := os.MkdirTemp(env.Dir, "cdp-chrome-")
	if err != nil {
		t.Fatal(err)
	}
	lp, err := local.New(local.Options{ProfileRoot: root, BootID: "cdp-chrome", Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	chrome, err := lp.Create(context.Background(), providers.CreateOptions{Tag: "cdp-chrome"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lp.Release(context.Background(), "cdp-chrome"); harness.KillUnder(root) })

	site := newLiveSite(t)
	lv := liveWorkerWith(t, harness.WorkerOptions{CDPEndpoint: chrome.CDPURL, LiveView: config.LiveView{Addr: "127.0.0.1:0", Dir: t.TempDir()}})
	s := newSession(t, workflows.SessionConfig{Session: contract.SessionOptions{Provider: "cdp"}})
	s.must("run", actions(map[string]any{"op": "goto", "url": site.URL + "/"}), nil)
	tag := tagOf(t, s)
	addr, ok := lv.URL(tag)
	if !ok {
		t.Fatalf("no live view for cdp session %s", tag)
	}
	p := newPerson(t)
	p.page = p.open(addr)
	harness.Eventually(t, 30*time.Second, func() bool { return data(t, p.page, "frames") != "" }, "no frame of the cdp session reached the viewer")
	p.takeOver(lv, tag)
	if f := s.failure("snapshot", map[string]any{}); f.Reason != contract.ReasonPersonDriving {
		t.Fatalf("agent call on a cdp session a person holds: %+v", f)
	}
	p.click(160, 80) // Reveal
	harness.Eventually(t, 20*time.Second, func() bool { return data(t, p.page, "takenOver") == "true" }, "the viewer never showed Give back")
	p.pressTake()
	harness.Eventually(t, 60*time.Second, func() bool {
		out, ok := s.call("snapshot", map[string]any{})
		if !ok {
			return false
		}
		var snap contract.SnapshotResult
		return json.Unmarshal(out, &snap) == nil && snap.PersonDrove != "" && strings.Contains(snap.Text, "revealed ready")
	}, "the agent did not see the person's click on the cdp session")
	s.must("browser_release", map[string]any{}, nil)
	if _, ok := lv.URL(tag); ok {
		t.Fatal("the cdp session's live view outlived it")
	}
}
