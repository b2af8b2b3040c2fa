package test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/netguard"
	"github.com/durable-browser/durable-browser/test/harness"
	"github.com/durable-browser/durable-browser/workflows"
)

// serviceServer is a loopback server the worker counts as one of its own
// services; it counts the requests that reach it.
func serviceServer(t *testing.T) (*httptest.Server, *atomic.Int64, netguard.Service) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<title>service</title>internal"))
	}))
	t.Cleanup(srv.Close)
	s, ok := netguard.ServiceFromAddress("test service", srv.URL)
	if !ok {
		t.Fatalf("no service from %s", srv.URL)
	}
	return srv, &hits, s
}

// wantBlocked checks a refusal of the reach guard's rule service: code
// blocked (not retryable, nothing effected), naming the rule.
func wantBlocked(t *testing.T, what string, f contract.Failure) {
	t.Helper()
	if f.Code != contract.CodeBlocked || f.Retryable || !strings.Contains(f.Message, "rule service") {
		t.Fatalf("%s: answered %+v, want code blocked naming rule service", what, f)
	}
}

// A navigation the reach guard stops answers code blocked, as web_fetch
// does for the same decision, whether a batch's goto, a click that
// navigates or page.goto in a code cell asked for it; the service never
// sees a request.
func TestGuardedNavigationAnswersBlocked(t *testing.T) {
	svc, hits, service := serviceServer(t)
	env.StartWorker(t, harness.WorkerOptions{BrowserServices: []netguard.Service{service}})
	page := pageServer(t, `<!doctype html><title>start</title><a href="`+svc.URL+`/admin">admin</a>`)
	s := newSession(t, workflows.SessionConfig{})
	s.must("run", actions(map[string]any{"op": "goto", "url": page}), nil)

	wantBlocked(t, "batch goto", s.failure("run", actions(map[string]any{"op": "goto", "url": svc.URL + "/"})))
	// The refused goto leaves the browser's error page: back to the start.
	s.must("run", actions(map[string]any{"op": "goto", "url": page}), nil)
	wantBlocked(t, "click that navigates", s.failure("run", actions(
		map[string]any{"op": "click", "locator": map[string]any{"role": "link", "name": "admin"}})))
	wantBlocked(t, "page.goto in a cell", s.failure("run", code(`await page.goto(`+jsString(svc.URL+"/cell")+`); return "went"`)))
	// The worker's own S3 endpoint, a service by configuration.
	wantBlocked(t, "goto the S3 endpoint", s.failure("run", actions(map[string]any{"op": "goto", "url": env.S3.Endpoint() + "/evidence"})))
	if n := hits.Load(); n != 0 {
		t.Fatalf("the service received %d requests", n)
	}

	// A cell that catches the refusal goes on: it is a result, and the
	// refusal's code is what it caught.
	var res contract.RunResult
	s.must("run", code(`try { await page.goto(`+jsString(svc.URL+"/")+`) } catch (e) { return e.code }`), &res)
	if string(res.Output) != `"blocked"` {
		t.Fatalf("the cell caught %s, want \"blocked\"", res.Output)
	}
}

// Through the MCP server the refusal is a tool error whose envelope says
// blocked.
func TestMCPGuardedNavigationAnswersBlocked(t *testing.T) {
	svc, hits, service := serviceServer(t)
	env.StartWorker(t, harness.WorkerOptions{BrowserServices: []netguard.Service{service}})
	id := "e2e-mcp-blocked-" + uuid.NewString()[:8]
	closeSessionAtEnd(t, id)
	m := startMCPStdio(t, nil, "--session", id)
	text, res := callMCP(t, m.cs, "run", actions(map[string]any{"op": "goto", "url": svc.URL + "/"}))
	var f contract.Failure
	if !res.IsError || json.Unmarshal([]byte(text), &f) != nil {
		t.Fatalf("goto the service over MCP: error=%v %s", res.IsError, text)
	}
	wantBlocked(t, "goto over MCP", f)
	if n := hits.Load(); n != 0 {
		t.Fatalf("the service received %d requests", n)
	}
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// A warm browser's DevTools endpoint is one of the worker's services from
// its start: a session's page cannot reach it (and drive the browser
// another session will take), neither by navigation nor through the
// egress proxy.
func TestWarmBrowserEndpointIsAService(t *testing.T) {
	root, err := os.MkdirTemp(env.Dir, "warm-")
	if err != nil {
		t.Fatal(err)
	}
	w := env.StartWorker(t, harness.WorkerOptions{WarmBrowsers: 2, ProfileRoot: root})
	harness.Eventually(t, time.Minute, func() bool { return w.Activities().Stats().Warm == 2 }, "the worker did not start 2 warm browsers")
	page := pageServer(t, `<!doctype html><title>start</title><p id=s>start</p>`)
	s := newSession(t, workflows.SessionConfig{})
	s.must("run", actions(map[string]any{"op": "goto", "url": page}), nil)
	// The session took one; the other waits.
	st := w.Activities().Stats()
	if len(st.WarmPIDs) == 0 {
		t.Fatalf("no warm browser left: %+v", st)
	}
	port := 0
	recs, _ := filepath.Glob(filepath.Join(root, "records", "_warm-*.json"))
	for _, f := range recs {
		var r struct{ PID, Port int }
		if b, err := os.ReadFile(f); err == nil && json.Unmarshal(b, &r) == nil && slices.Contains(st.WarmPIDs, r.PID) {
			port = r.Port
		}
	}
	if port == 0 {
		t.Fatalf("no record of warm browser %v under %s", st.WarmPIDs, root)
	}
	endpoint := "http://127.0.0.1:" + strconv.Itoa(port)
	wantBlocked(t, "goto a warm browser's DevTools endpoint", s.failure("run", actions(map[string]any{"op": "goto", "url": endpoint + "/json/version"})))
	probe := pageServer(t, `<!doctype html><title>probe</title><p id=s>start</p><script>
fetch(`+jsString(endpoint+"/json/list")+`).then(() => { document.getElementById('s').textContent = 'fetch:reached' },
  () => { document.getElementById('s').textContent = 'fetch:refused' });
</script>`)
	s.must("run", actions(
		map[string]any{"op": "goto", "url": probe},
		map[string]any{"op": "wait", "text": "fetch:"},
	), nil)
	var snap contract.SnapshotResult
	s.must("snapshot", map[string]any{}, &snap)
	if !strings.Contains(snap.Text, "fetch:refused") {
		t.Fatalf("a page's fetch of a warm browser's DevTools endpoint was not refused:\n%s", snap.Text)
	}
}
