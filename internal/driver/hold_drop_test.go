package driver

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-rod/rod/lib/proto"
)

// postCounter is a loopback server with a page at / and a counter of the
// POSTs that reach /post.
func postCounter(t *testing.T) (*httptest.Server, *atomic.Int32, *sync.Map) {
	t.Helper()
	var posts atomic.Int32
	var bodies sync.Map
	mux := http.NewServeMux()
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<!doctype html><title>hold</title><p>hold</p>`))
	})
	mux.HandleFunc("GET /ping", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("POST /post", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		bodies.Store(posts.Add(1), string(body))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, &posts, &bodies
}

// What Chrome does with a request paused by the Fetch domain (the request
// gate holding a POST for approval) when the DevTools connection that paused
// it drops without a word, as when the worker process dies: the connection's
// socket is closed, no Fetch.disable, no detach, no continue or fail.
//
// Observed with Chromium 156 (Debian): the POST stays paused while the
// connection lives (a GET from the page round-trips meanwhile, the POST does
// not arrive); once the socket closes, Chrome continues it unmodified (same
// body) and the server receives it within milliseconds. A worker that dies
// while the gate waits for approval would send the request unapproved if its
// browser outlived it; the local provider therefore ties the browser's life
// to the worker's (see providers/local TestHeldPostDiesWithWorker).
func TestHeldRequestReleasedWhenConnectionDrops(t *testing.T) {
	srv, posts, bodies := postCounter(t)
	held := make(chan GatedRequest, 1)
	never := make(chan struct{})
	t.Cleanup(func() { close(never) })
	b := attach(t, Options{RequestGate: func(ctx context.Context, r GatedRequest) GateDecision {
		held <- r
		<-never // the worker "died" while a person was deciding
		return GateDeny
	}})
	gotoPage(t, b, srv.URL+"/")
	evalIn(t, b, `fetch('/post', {method: 'POST', body: 'x'}).catch(() => {}), 1`)
	select {
	case r := <-held:
		if r.Method != "POST" || r.Path != "/post" {
			t.Fatalf("held %+v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the POST was never held")
	}
	// The page still talks to the server: a GET round-trips, the POST stays.
	tb, err := b.activeTab()
	if err != nil {
		t.Fatal(err)
	}
	if res, err := (proto.RuntimeEvaluate{Expression: `fetch('/ping').then(r => r.status)`, AwaitPromise: true, ReturnByValue: true}).Call(b.client(ctxT(t), tb.sess)); err != nil || res.ExceptionDetails != nil {
		t.Fatalf("ping: %v %+v", err, res)
	}
	if n := posts.Load(); n != 0 {
		t.Fatalf("a held POST reached the server (%d) before any decision", n)
	}
	// The connection drops: only the socket closes, as at a process's death.
	dropped := time.Now()
	_ = b.ws.Close()
	eventually(t, "the held POST to reach the server once the connection dropped", func() bool { return posts.Load() == 1 })
	body, _ := bodies.Load(int32(1))
	t.Logf("the held POST reached the server %v after the connection dropped, body %q", time.Since(dropped).Round(time.Millisecond), body)
	if body != "x" {
		t.Fatalf("released POST body %q, want %q", body, "x")
	}
}
