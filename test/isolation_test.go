package test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/redact"
	"github.com/durable-browser/durable-browser/test/harness"
	"github.com/durable-browser/durable-browser/workflows"
)

// isoSite serves the pages of the isolation tests on 127.0.0.1 and keeps
// the Cookie header each /show request carried, by ?who=.
type isoSite struct {
	url     string
	mu      sync.Mutex
	cookies map[string]string
}

func newIsoSite(t *testing.T, wsPort string) *isoSite {
	s := &isoSite{cookies: map[string]string{}}
	page := func(w http.ResponseWriter, title, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>%s</title><body>%s", title, body)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/set", func(w http.ResponseWriter, r *http.Request) {
		v := r.URL.Query().Get("v")
		http.SetCookie(w, &http.Cookie{Name: "sc", Value: v, Path: "/"})
		page(w, "set", `<p id=s>start</p><script>
const v = new URLSearchParams(location.search).get('v');
document.cookie = 'c=' + v + '; path=/';
localStorage.setItem('k', v);
document.getElementById('s').textContent = 'stored ' + v;
</script>`)
	})
	mux.HandleFunc("/show", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.cookies[r.URL.Query().Get("who")] = r.Header.Get("Cookie")
		s.mu.Unlock()
		page(w, "show", `<p id=s>start</p><script>
document.getElementById('s').textContent = 'seen cookie=[' + document.cookie + '] ls=[' + localStorage.getItem('k') + ']';
</script>`)
	})
	mux.HandleFunc("/dlpage", func(w http.ResponseWriter, r *http.Request) {
		n := r.URL.Query().Get("n")
		page(w, "dl", `<a href="/dl/`+n+`" download="`+n+`">Download `+n+`</a>`)
	})
	mux.HandleFunc("/dl/", func(w http.ResponseWriter, r *http.Request) {
		n := strings.TrimPrefix(r.URL.Path, "/dl/")
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="`+n+`"`)
		fmt.Fprintf(w, "the file %s\n", n)
	})
	// A WebSocket to localhost (who names the session), and a password
	// field whose value a click sends down it.
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		who := r.URL.Query().Get("who")
		page(w, "ws", `<label>Password <input type=password id=pw></label><button id=go>Send</button><p id=s>start</p><script>
const s = document.getElementById('s');
const w = new WebSocket('ws://localhost:`+wsPort+`/`+who+`');
w.onopen = () => { w.send('hello `+who+`'); s.textContent += ' ws:open'; };
w.onerror = () => { s.textContent += ' ws:error'; };
w.onclose = () => { s.textContent += ' ws:closed'; };
document.getElementById('go').onclick = () => { w.send('pw=' + document.getElementById('pw').value); s.textContent += ' sent'; };
</script>`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

func (s *isoSite) cookie(who string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cookies[who]
}

// pageText is the page's text as a snapshot shows it.
func pageText(s *session) string {
	var snap contract.SnapshotResult
	s.must("snapshot", map[string]any{}, &snap)
	return snap.Text
}

// TestContextIsolationKeepsSessionsApart: two plain sessions on one worker
// under --isolation=context share one browser process, yet neither sees
// the other's cookies, localStorage or downloads, and each one's traffic
// leaves through its own egress proxy, under its own reach policy, where
// its own typed secrets are held.
func TestContextIsolationKeepsSessionsApart(t *testing.T) {
	const secret = "iso-Secret-Value-31337-frobozz"
	ws := newWSCounter(t)
	site := newIsoSite(t, ws.port())
	t.Setenv("DURABLE_BROWSER_SECRET_ISO_PW", secret)
	t.Setenv("DURABLE_BROWSER_SECRET_ISO_PW_ORIGINS", redact.OriginOf(site.url))
	w := env.StartWorker(t, harness.WorkerOptions{Isolation: "context"})
	// a may reach 127.0.0.1 only; b whatever the worker allows.
	a := newSession(t, workflows.SessionConfig{Session: contract.SessionOptions{AllowHosts: []string{"127.0.0.1"}}})
	b := newSession(t, workflows.SessionConfig{})

	a.must("run", actions(map[string]any{"op": "goto", "url": site.url + "/set?v=alpha"}, map[string]any{"op": "wait", "text": "stored alpha"}), nil)
	b.must("run", actions(map[string]any{"op": "goto", "url": site.url + "/show?who=b"}, map[string]any{"op": "wait", "text": "seen"}), nil)
	st := w.Activities().Stats()
	if len(st.ChromePIDs) != 2 || st.ChromePIDs[0] != st.ChromePIDs[1] {
		t.Fatalf("the two sessions' browsers are %v; want one shared browser", st.ChromePIDs)
	}
	if txt := pageText(b); strings.Contains(txt, "alpha") || !strings.Contains(txt, "cookie=[] ls=[null]") {
		t.Fatalf("session b sees a's cookie or storage:\n%s", txt)
	}
	if c := site.cookie("b"); c != "" {
		t.Fatalf("session b's request carried cookies %q; want none", c)
	}
	b.must("run", actions(map[string]any{"op": "goto", "url": site.url + "/set?v=beta"}, map[string]any{"op": "wait", "text": "stored beta"}), nil)
	a.must("run", actions(map[string]any{"op": "goto", "url": site.url + "/show?who=a"}, map[string]any{"op": "wait", "text": "seen"}), nil)
	if txt := pageText(a); strings.Contains(txt, "beta") || !strings.Contains(txt, "ls=[alpha]") || !strings.Contains(txt, "c=alpha") {
		t.Fatalf("session a should see its own cookie and storage only:\n%s", txt)
	}
	if c := site.cookie("a"); strings.Contains(c, "beta") || !strings.Contains(c, "sc=alpha") {
		t.Fatalf("session a's request carried cookies %q; want its own only", c)
	}

	// Downloads: each session lists only what it downloaded.
	download := func(s *session, name string) {
		s.must("run", actions(map[string]any{"op": "goto", "url": site.url + "/dlpage?n=" + name}), nil)
		var snap contract.SnapshotResult
		s.must("snapshot", map[string]any{"mode": "interactive"}, &snap)
		s.must("run", actions(map[string]any{"op": "click", "id": refFor(t, snap.Text, `link "Download `+name+`"`)}), nil)
	}
	names := func(s *session) []string {
		var res contract.DownloadsResult
		s.must(contract.ToolDownloads, map[string]any{}, &res)
		var out []string
		for _, d := range res.Downloads {
			out = append(out, d.Name)
		}
		return out
	}
	download(a, "a-only.txt")
	harness.Eventually(t, 30*time.Second, func() bool { return slices.Equal(names(a), []string{"a-only.txt"}) }, "session a's download is not listed")
	if got := names(b); len(got) != 0 {
		t.Fatalf("session b lists downloads %v; want none (a's are a's)", got)
	}
	download(b, "b-only.txt")
	harness.Eventually(t, 30*time.Second, func() bool { return slices.Equal(names(b), []string{"b-only.txt"}) }, "session b's download is not listed")
	if got := names(a); !slices.Equal(got, []string{"a-only.txt"}) {
		t.Fatalf("session a lists downloads %v; want its own only", got)
	}

	// Egress: each context goes through its own proxy, under its own
	// policy. a's WebSocket to localhost is off its allow list; b's goes.
	var ra, rb contract.RunResult
	a.must("run", actions(map[string]any{"op": "goto", "url": site.url + "/ws?who=a"}, map[string]any{"op": "wait", "text": "ws:error"}), &ra)
	b.must("run", actions(map[string]any{"op": "goto", "url": site.url + "/ws?who=b"}, map[string]any{"op": "wait", "text": "ws:open"}), &rb)
	hosts, msgs := ws.seen()
	if hosts["localhost"] != 1 || !slices.Contains(msgs, "hello b") || slices.Contains(msgs, "hello a") {
		t.Fatalf("WebSockets seen: hosts %v, messages %q; want b's only", hosts, msgs)
	}
	wantA := contract.BlockedRequest{Method: "CONNECT", Origin: "localhost:" + ws.port(), Rule: "allow_list"}
	if !slices.Contains(ra.Blocked, wantA) {
		t.Fatalf("a's run lists blocked %+v; want its WebSocket to localhost refused by its allow list", ra.Blocked)
	}
	if len(rb.Blocked) != 0 {
		t.Fatalf("b's run lists blocked %+v; want none (a's refusals are a's)", rb.Blocked)
	}

	// Secrets: b types one bound to the site's origin and the page sends
	// it down the WebSocket to localhost: b's proxy stops that frame, and
	// only b's run lists it.
	var snap contract.SnapshotResult
	b.must("snapshot", map[string]any{"mode": "interactive"}, &snap)
	b.must("run", actions(
		map[string]any{"op": "fill", "id": refFor(t, snap.Text, `textbox "Password"`), "value": "{{secret:ISO_PW}}"},
		map[string]any{"op": "click", "id": refFor(t, snap.Text, `button "Send"`)},
		map[string]any{"op": "wait", "text": "ws:closed"},
	), &rb)
	_, msgs = ws.seen()
	for _, m := range msgs {
		if strings.Contains(m, secret) || strings.HasPrefix(m, "pw=") {
			t.Fatalf("the WebSocket server received a frame carrying the secret")
		}
	}
	found := false
	for _, bl := range rb.Blocked {
		found = found || (bl.Rule == "secret" && bl.Secret == "ISO_PW" && bl.Method == "WS")
	}
	if !found {
		t.Fatalf("b's run does not list the secret's frame as blocked: %+v", rb.Blocked)
	}
	a.must("run", actions(map[string]any{"op": "goto", "url": site.url + "/show?who=a2"}, map[string]any{"op": "wait", "text": "seen"}), &ra)
	for _, bl := range ra.Blocked {
		if bl.Rule == "secret" {
			t.Fatalf("a's run lists b's blocked secret: %+v", ra.Blocked)
		}
	}
	if n := strings.Count(env.Log.String(), "browser context opened in the shared browser"); n < 2 {
		t.Fatalf("the worker logged %d context opens; want the two sessions'", n)
	}
	a.must("browser_release", map[string]any{}, nil)
	b.must("browser_release", map[string]any{}, nil)
}

// TestSharedBrowserCrash: killing the shared browser of --isolation=context
// ends only its sessions; each answers that it was replaced (from its
// checkpoint when it has one) and its next call works, in a new shared
// browser.
func TestSharedBrowserCrash(t *testing.T) {
	site := newIsoSite(t, "1")
	w := env.StartWorker(t, harness.WorkerOptions{Isolation: "context"})
	a := newSession(t, workflows.SessionConfig{})
	b := newSession(t, workflows.SessionConfig{})
	for _, s := range []*session{a, b} {
		s.must("run", actions(map[string]any{"op": "goto", "url": site.url + "/show?who=x"}, map[string]any{"op": "wait", "text": "seen"}), nil)
	}
	st := w.Activities().Stats()
	if len(st.ChromePIDs) != 2 || st.ChromePIDs[0] != st.ChromePIDs[1] {
		t.Fatalf("browsers %v; want one shared", st.ChromePIDs)
	}
	pid := st.ChromePIDs[0]
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, func() bool { return syscall.Kill(pid, 0) != nil }, "the shared browser %d did not die", pid)
	for _, s := range []*session{a, b} {
		f := s.failure("snapshot", map[string]any{})
		if f.Code != contract.CodeSessionReplaced && f.Code != contract.CodeSessionRestored {
			t.Fatalf("a call after the shared browser died answered %s (%s); want session_replaced or session_restored", f.Code, f.Message)
		}
		s.must("run", actions(map[string]any{"op": "goto", "url": site.url + "/show?who=y"}, map[string]any{"op": "wait", "text": "seen"}), nil)
	}
	st = w.Activities().Stats()
	if len(st.ChromePIDs) != 2 || st.ChromePIDs[0] != st.ChromePIDs[1] || st.ChromePIDs[0] == pid {
		t.Fatalf("browsers after the crash %v; want one new shared browser (the old was %d)", st.ChromePIDs, pid)
	}
	a.must("browser_release", map[string]any{}, nil)
	b.must("browser_release", map[string]any{}, nil)
}
