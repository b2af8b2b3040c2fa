package test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/redact"
	"github.com/durable-browser/durable-browser/test/harness"
	"github.com/durable-browser/durable-browser/worker"
	"github.com/durable-browser/durable-browser/workflows"
)

// wsCounter is a loopback WebSocket server that counts the handshakes that
// reach it, by the Host the page asked for, and keeps the messages it got.
type wsCounter struct {
	srv   *httptest.Server
	mu    sync.Mutex
	hosts map[string]int
	msgs  []string
}

func newWSCounter(t *testing.T) *wsCounter { return startWSCounter(t, false) }

// newWSSCounter is a wsCounter on https (wss://), with also a POST sink
// that keeps bodies as messages.
func newWSSCounter(t *testing.T) *wsCounter { return startWSCounter(t, true) }

func startWSCounter(t *testing.T, secure bool) *wsCounter {
	w := &wsCounter{hosts: map[string]int{}}
	w.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			w.mu.Lock()
			w.msgs = append(w.msgs, string(b))
			w.mu.Unlock()
			rw.Header().Set("Access-Control-Allow-Origin", "*")
			return
		}
		// Counted when the handshake arrives, before it is answered.
		w.mu.Lock()
		w.hosts[strings.Split(r.Host, ":")[0]]++
		w.mu.Unlock()
		c, err := websocket.Accept(rw, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			_, b, err := c.Read(context.Background())
			if err != nil {
				return
			}
			w.mu.Lock()
			w.msgs = append(w.msgs, string(b))
			w.mu.Unlock()
		}
	}))
	if secure {
		w.srv.StartTLS()
	} else {
		w.srv.Start()
	}
	t.Cleanup(w.srv.Close)
	return w
}

func (w *wsCounter) port() string { return w.srv.URL[strings.LastIndex(w.srv.URL, ":")+1:] }

func (w *wsCounter) seen() (map[string]int, []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	h := map[string]int{}
	for k, v := range w.hosts {
		h[k] = v
	}
	return h, append([]string(nil), w.msgs...)
}

// pageServer serves one HTML page on 127.0.0.1.
func pageServer(t *testing.T, html string) string {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, html)
	}))
	t.Cleanup(s.Close)
	return s.URL
}

// browserModes runs an egress test on a cold browser and on a warm one
// (--warm-browsers): a warm browser's proxy, started before the session,
// holds it to the same policy and pin.
func browserModes(t *testing.T, run func(t *testing.T, warm int)) {
	for _, warm := range []int{0, 1} {
		t.Run(map[int]string{0: "cold", 1: "warm"}[warm], func(t *testing.T) { run(t, warm) })
	}
}

// warmTaken waits for w's warm browser, runs open (the session's first
// call), and checks the session took that browser.
func warmTaken(t *testing.T, w *worker.Worker, open func()) {
	t.Helper()
	var warm int
	harness.Eventually(t, time.Minute, func() bool {
		if st := w.Activities().Stats(); len(st.WarmPIDs) > 0 {
			warm = st.WarmPIDs[0]
		}
		return warm != 0
	}, "the worker started no warm browser")
	took := strings.Count(env.Log.String(), "took a warm browser")
	open()
	st := w.Activities().Stats()
	// Under --isolation=context a warm browser is a context of the shared
	// Chrome, and so is its refill: the pid names the Chrome, not the
	// context, and the log line says the take.
	shared := os.Getenv("DURABLE_BROWSER_ISOLATION") == "context"
	if st.Browsers["local"] != 1 || (!shared && slices.Contains(st.WarmPIDs, warm)) || !slices.Contains(st.ChromePIDs, warm) ||
		strings.Count(env.Log.String(), "took a warm browser") != took+1 {
		t.Fatalf("the session did not take warm browser %d: %+v", warm, st)
	}
}

// A page opening a WebSocket to a host its session's allow_hosts refuses
// is stopped at the worker's egress proxy: the server never sees the
// connection, while one to an allowed host goes through. One to the
// worker's own Temporal frontend is refused whatever the lists say.
func TestEgressRefusesWebSocketOffAllowList(t *testing.T) {
	browserModes(t, egressRefusesWebSocketOffAllowList)
}

func egressRefusesWebSocketOffAllowList(t *testing.T, warmBrowsers int) {
	ws := newWSCounter(t)
	temporal := env.Temporal.Address()
	page := pageServer(t, `<!doctype html><title>ws</title><body><p id=s>start</p><script>
const s = document.getElementById('s');
function open(name, url) {
  const w = new WebSocket(url);
  w.onopen = () => { s.textContent += ' ' + name + ':open'; w.send(name); };
  w.onerror = () => { s.textContent += ' ' + name + ':error'; };
}
open('off', 'ws://localhost:`+ws.port()+`/off');
open('on', 'ws://127.0.0.1:`+ws.port()+`/on');
open('svc', 'ws://`+temporal+`/');
</script>`)
	w := env.StartWorker(t, harness.WorkerOptions{WarmBrowsers: warmBrowsers})
	s := newSession(t, workflows.SessionConfig{Session: contract.SessionOptions{AllowHosts: []string{"127.0.0.1"}}})
	var res contract.RunResult
	open := func() {
		s.must("run", actions(
			map[string]any{"op": "goto", "url": page + "/"},
			// off:error when refused, off:open if it went through (the
			// count below then fails, naming it).
			map[string]any{"op": "wait", "text": "off:"},
			map[string]any{"op": "wait", "text": "on:open"},
			map[string]any{"op": "wait", "text": "svc:error"},
		), &res)
	}
	if warmBrowsers > 0 {
		warmTaken(t, w, open)
	} else {
		open()
	}
	hosts, _ := ws.seen()
	if hosts["localhost"] != 0 {
		t.Fatalf("the WebSocket to localhost (not on allow_hosts) reached the server %d times", hosts["localhost"])
	}
	if hosts["127.0.0.1"] != 1 {
		t.Fatalf("the WebSocket to 127.0.0.1 (on allow_hosts) should connect once; hosts seen: %v", hosts)
	}
	// Listed: the page's two refused WebSockets, and nothing Chrome
	// connects to on its own (update checks, sign-in), which the proxy
	// refuses too.
	want := map[string]string{"localhost:" + ws.port(): "allow_list", temporal: "service"}
	for _, b := range res.Blocked {
		if b.Method != "CONNECT" || want[b.Origin] != b.Rule {
			t.Fatalf("blocked %+v, want the WebSockets %v", res.Blocked, want)
		}
		delete(want, b.Origin)
	}
	if len(want) != 0 {
		t.Fatalf("not listed as blocked: %v (blocked: %+v)", want, res.Blocked)
	}
	s.must("browser_release", map[string]any{}, nil)
}

// Once a secret was typed, a WebSocket frame carrying it toward an origin
// the secret is not bound to is stopped before it leaves; frames without
// it go on.
func TestEgressBlocksSecretOverWebSocket(t *testing.T) {
	const secret = "ws-Secret-Value-77421-xyzzy"
	ws := newWSCounter(t)
	page := pageServer(t, `<!doctype html><title>exfil</title><body>
<label>Password <input type=password id=pw></label>
<button id=go>Send</button><p id=s>start</p><script>
const s = document.getElementById('s');
const w = new WebSocket('ws://localhost:`+ws.port()+`/x');
w.onopen = () => { w.send('hello'); s.textContent += ' open'; };
w.onclose = () => { s.textContent += ' closed'; };
document.getElementById('go').onclick = () => {
  w.send('pw=' + document.getElementById('pw').value);
  w.send(btoa(document.getElementById('pw').value));
  s.textContent += ' sent';
};
</script>`)
	t.Setenv("DURABLE_BROWSER_SECRET_WS_PW", secret)
	t.Setenv("DURABLE_BROWSER_SECRET_WS_PW_ORIGINS", redact.OriginOf(page))
	env.StartWorker(t, harness.WorkerOptions{})
	s := newSession(t, workflows.SessionConfig{})
	s.must("run", actions(
		map[string]any{"op": "goto", "url": page + "/"},
		map[string]any{"op": "wait", "text": "open"},
	), nil)
	var snap contract.SnapshotResult
	s.must("snapshot", map[string]any{"mode": "interactive"}, &snap)
	var res contract.RunResult
	s.must("run", actions(
		map[string]any{"op": "fill", "id": refFor(t, snap.Text, `textbox "Password"`), "value": "{{secret:WS_PW}}"},
		map[string]any{"op": "click", "id": refFor(t, snap.Text, `button "Send"`)},
		map[string]any{"op": "wait", "text": "closed"},
	), &res)
	hosts, msgs := ws.seen()
	if hosts["localhost"] != 1 || len(msgs) == 0 || msgs[0] != "hello" {
		t.Fatalf("the WebSocket should have opened and carried its first frame: hosts %v, %d messages", hosts, len(msgs))
	}
	for _, m := range msgs {
		if strings.Contains(m, secret) || strings.Contains(m, "pw=") {
			t.Fatalf("the server received a frame carrying the secret (%d bytes)", len(m))
		}
	}
	found := false
	for _, b := range res.Blocked {
		found = found || (b.Rule == "secret" && b.Secret == "WS_PW" && b.Method == "WS" && b.Origin == "ws://localhost:"+ws.port())
	}
	if !found {
		raw, _ := json.Marshal(res.Blocked)
		t.Fatalf("the frame is not listed as blocked by rule secret: %s", raw)
	}
	s.must("browser_release", map[string]any{}, nil)
}

// The same over TLS: a secret typed on an https page is kept from a wss://
// WebSocket and an https POST to another origin the session may reach
// (the egress proxy decrypts what the browser sends under a CA only this
// browser trusts); the WebSocket's other frames, the page itself and an
// https request without the secret go through.
func TestEgressBlocksSecretOverWSS(t *testing.T) {
	browserModes(t, egressBlocksSecretOverWSS)
}

func egressBlocksSecretOverWSS(t *testing.T, warmBrowsers int) {
	const secret = "wss-Secret-Value-90210-plugh"
	ws := newWSSCounter(t)
	site := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>exfil</title><body>
<label>Password <input type=password id=pw></label>
<button id=go>Send</button><p id=s>start</p><script>
const s = document.getElementById('s'), log = m => { s.textContent += ' ' + m; };
const w = new WebSocket('wss://127.0.0.1:`+ws.port()+`/x');
w.onopen = () => { w.send('hello'); log('open'); };
w.onclose = () => log('closed');
fetch('https://127.0.0.1:`+ws.port()+`/clean', {method: 'POST', body: 'nothing secret'}).then(r => log('clean:' + r.status), () => log('clean:error'));
document.getElementById('go').onclick = () => {
  const pw = document.getElementById('pw').value;
  fetch('https://127.0.0.1:`+ws.port()+`/post', {method: 'POST', body: 'pw=' + pw}).then(r => log('post:' + r.status), () => log('post:error'));
  w.send('pw=' + pw);
  w.send(btoa(pw));
  log('sent');
};
</script>`)
	}))
	t.Cleanup(site.Close)
	roots := x509.NewCertPool()
	roots.AddCert(site.Certificate()) // httptest's one certificate, the wss site's too
	t.Setenv("DURABLE_BROWSER_SECRET_WSS_PW", secret)
	t.Setenv("DURABLE_BROWSER_SECRET_WSS_PW_ORIGINS", redact.OriginOf(site.URL))
	w := env.StartWorker(t, harness.WorkerOptions{SiteRoots: roots, WarmBrowsers: warmBrowsers})
	s := newSession(t, workflows.SessionConfig{})
	open := func() {
		s.must("run", actions(
			map[string]any{"op": "goto", "url": site.URL + "/"},
			map[string]any{"op": "wait", "text": "open"},
			map[string]any{"op": "wait", "text": "clean:200"},
		), nil)
	}
	if warmBrowsers > 0 {
		warmTaken(t, w, open)
	} else {
		open()
	}
	var snap contract.SnapshotResult
	s.must("snapshot", map[string]any{"mode": "interactive"}, &snap)
	var res contract.RunResult
	s.must("run", actions(
		map[string]any{"op": "fill", "id": refFor(t, snap.Text, `textbox "Password"`), "value": "{{secret:WSS_PW}}"},
		map[string]any{"op": "click", "id": refFor(t, snap.Text, `button "Send"`)},
		map[string]any{"op": "wait", "text": "closed"},
		map[string]any{"op": "wait", "text": "post:"},
	), &res)
	hosts, msgs := ws.seen()
	if hosts["127.0.0.1"] != 1 || len(msgs) < 2 || !slices.Contains(msgs, "hello") || !slices.Contains(msgs, "nothing secret") {
		t.Fatalf("the WebSocket and the clean POST should have gone through: hosts %v, %d messages", hosts, len(msgs))
	}
	for _, m := range msgs {
		if strings.Contains(m, secret) || strings.Contains(m, "pw=") {
			t.Fatalf("the wss site received the secret (%d bytes)", len(m))
		}
	}
	found := false
	for _, b := range res.Blocked {
		found = found || (b.Rule == "secret" && b.Secret == "WSS_PW" && b.Method == "WS" && b.Origin == "wss://127.0.0.1:"+ws.port())
	}
	if !found {
		raw, _ := json.Marshal(res.Blocked)
		t.Fatalf("the wss frame is not listed as blocked by rule secret: %s", raw)
	}
	s.must("browser_release", map[string]any{}, nil)
}

// WebRTC of a local browser sends no UDP: a page gathering ICE candidates
// with a STUN server on loopback sends it nothing (without the egress
// preferences Chromium 156 sends it binding requests at once).
func TestEgressWebRTCSendsNoUDP(t *testing.T) {
	uc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { uc.Close() })
	var packets atomic.Int32
	go func() {
		b := make([]byte, 1500)
		for {
			if _, _, err := uc.ReadFrom(b); err != nil {
				return
			}
			packets.Add(1)
		}
	}()
	port := uc.LocalAddr().(*net.UDPAddr).Port
	page := pageServer(t, fmt.Sprintf(`<!doctype html><title>rtc</title><body><p id=s>start</p><script>
const s = document.getElementById('s');
const pc = new RTCPeerConnection({iceServers: [{urls: 'stun:127.0.0.1:%d'}]});
pc.createDataChannel('d');
let n = 0;
// A candidate at all says UDP is on: shown at once, so the test fails on it
// rather than waiting out STUN's retries.
pc.onicecandidate = e => { if (e.candidate) { n++; s.textContent = 'gathered ' + n; } };
pc.onicegatheringstatechange = () => { if (pc.iceGatheringState === 'complete') s.textContent = 'gathered ' + n; };
pc.createOffer().then(o => pc.setLocalDescription(o));
</script>`, port))
	env.StartWorker(t, harness.WorkerOptions{})
	s := newSession(t, workflows.SessionConfig{})
	var res contract.RunResult
	s.must("run", actions(
		map[string]any{"op": "goto", "url": page + "/"},
		map[string]any{"op": "wait", "text": "gathered"},
	), &res)
	var snap contract.SnapshotResult
	s.must("snapshot", map[string]any{}, &snap)
	if n := packets.Load(); n != 0 {
		t.Fatalf("the STUN server on loopback received %d UDP packets", n)
	}
	if !strings.Contains(snap.Text, "gathered 0") {
		t.Fatalf("the page gathered ICE candidates (UDP is not off):\n%s", snap.Text)
	}
	s.must("browser_release", map[string]any{}, nil)
}
