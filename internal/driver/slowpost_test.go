package driver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/contract"
)

// A click that submits a form to a server that never answers: the run must
// still end within its actions' bounds, not hang on the pending navigation.
func TestRunBoundedWhenSubmitNeverAnswers(t *testing.T) {
	stop := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<!doctype html><title>slow</title><form method=post action=/slow><input name=item aria-label=Item><button>Place order</button></form>`))
	})
	mux.HandleFunc("POST /slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(func() { close(stop); srv.Close() })
	b := attachOwnChrome(t, Options{ActionTimeout: 5 * time.Second})
	gotoPage(t, b, srv.URL+"/")
	s := snap(t, b, SnapshotOptions{})
	item, button := idOf(t, s.Text, "Item"), idOf(t, s.Text, "Place order")
	acts, err := ParseActions(json.RawMessage(`[{"op":"fill","id":"` + item + `","value":"lamp"},{"op":"click","id":"` + button + `"},{"op":"wait","text":"Order placed"}]`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	t0 := time.Now()
	res, err := b.Run(ctx, acts, RunOptions{})
	if ctx.Err() != nil {
		t.Fatalf("the run did not end on its own: %s", time.Since(t0))
	}
	if err == nil || res == nil || res.Failed == nil || res.Failed.Op != "wait" || res.Completed != 2 {
		t.Fatalf("want the wait to fail after the click: res=%+v err=%v", res, err)
	}
	if res.URL == "" || len(res.Sent) != 1 {
		t.Fatalf("the result should carry the page and the POST sent: %+v", res)
	}
}

// slowForm serves a form whose POST is answered only when answer is
// called; posted receives each POST as it arrives.
func slowForm(t *testing.T) (srv *httptest.Server, answer func(), posted <-chan struct{}) {
	t.Helper()
	got := make(chan struct{}, 8)
	release := make(chan struct{})
	var once sync.Once
	answer = func() { once.Do(func() { close(release) }) }
	mux := http.NewServeMux()
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<!doctype html><title>slow</title><form method=post action=/slow><input name=item aria-label=Item><button>Place order</button></form>`))
	})
	mux.HandleFunc("POST /slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- struct{}{}:
		default:
		}
		select {
		case <-release:
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte(`<!doctype html><title>done</title><h1>Order placed</h1>`))
		case <-r.Context().Done():
		}
	})
	srv = httptest.NewServer(mux)
	t.Cleanup(func() { answer(); srv.Close() })
	return srv, answer, got
}

// submitSlow opens the slow form in b, clicks its button and waits for
// the POST to reach the server; it returns the form's snapshot.
func submitSlow(t *testing.T, b *Browser, srv *httptest.Server, posted <-chan struct{}) *contract.SnapshotResult {
	t.Helper()
	gotoPage(t, b, srv.URL+"/")
	s := snap(t, b, SnapshotOptions{})
	acts, err := ParseActions(json.RawMessage(`[{"op":"click","id":"` + idOf(t, s.Text, "Place order") + `"}]`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Run(ctxT(t), acts, RunOptions{}); err != nil {
		t.Logf("run: %v", err)
	}
	select {
	case <-posted:
	case <-time.After(20 * time.Second):
		t.Fatal("the click did not submit the form")
	}
	return s
}

// While a submission waits on its server, every call that needs the
// page's renderer ends on its own with the typed failure naming the
// server, instead of hanging until its context's deadline.
func TestPageCallsWhileSubmitPending(t *testing.T) {
	srv, _, posted := slowForm(t)
	b := attachOwnChrome(t, Options{ActionTimeout: 5 * time.Second})
	form := submitSlow(t, b, srv, posted)
	// The bound only detects a hang; the failure is asserted by its type.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	check := func(name string, err error) {
		t.Helper()
		if ctx.Err() != nil {
			t.Fatalf("%s hung until the test's bound: %v", name, err)
		}
		var pe *PendingError
		if !errors.As(err, &pe) || !errors.Is(err, ErrPending) {
			t.Fatalf("%s: want *PendingError, got %v", name, err)
		}
		if pe.Origin != srv.URL || pe.Method != "POST" || pe.Path != "/slow" ||
			!strings.Contains(err.Error(), "waiting for "+srv.URL+" to answer a form submission") {
			t.Fatalf("%s: the failure should name the server and the submission: %v", name, err)
		}
	}
	_, err := b.Snapshot(ctx, SnapshotOptions{})
	check("snapshot", err)
	_, err = b.Screenshot(ctx, ScreenshotOptions{})
	check("screenshot", err)
	_, err = b.Read(ctx, ReadOptions{What: "text"})
	check("read", err)
	_, err = b.Eval(ctx, "() => 1", "")
	check("eval", err)
	_, err = b.Text(ctx, idOf(t, form.Text, "Item"))
	check("text", err)
	acts, err := ParseActions(json.RawMessage(`[{"op":"fill","id":"` + idOf(t, form.Text, "Item") + `","value":"x"}]`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.Run(ctx, acts, RunOptions{Observe: "full"})
	check("run", err)
	if res != nil {
		t.Fatalf("a run refused before anything was sent has no result: %+v", res)
	}
	f := filepath.Join(t.TempDir(), "a.txt")
	if err := os.WriteFile(f, []byte("a"), 0o600); err != nil {
		t.Fatal(err)
	}
	check("upload", b.Upload(ctx, Target{ID: idOf(t, form.Text, "Item")}, f))
	if _, err := b.Tabs(ctx); err != nil {
		t.Fatalf("tabs are the browser's to list: %v", err)
	}
}

// The failure is about the wait, not the page: once the server answers,
// the same session snapshots the page it answered with.
func TestSnapshotAfterPendingSubmitAnswers(t *testing.T) {
	srv, answer, posted := slowForm(t)
	b := attachOwnChrome(t, Options{ActionTimeout: 5 * time.Second})
	submitSlow(t, b, srv, posted)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := b.Snapshot(ctx, SnapshotOptions{}); !errors.Is(err, ErrPending) {
		t.Fatalf("want the pending failure while the server is quiet, got %v", err)
	}
	answer()
	eventually(t, "the answered page to be snapshotted", func() bool {
		s, err := b.Snapshot(ctx, SnapshotOptions{})
		return err == nil && strings.Contains(s.Text, "Order placed")
	})
}

// A navigation that ends without a page (204 No Content) leaves no wait
// behind, and a wait the driver wrongly thinks is under way is forgotten
// once the renderer answers: neither makes a snapshot fail.
func TestNoPendingFailureWithoutAWait(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<!doctype html><title>quiet</title><form method=post action=/none><button>Send</button></form>`))
	})
	mux.HandleFunc("POST /none", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	b := attachOwnChrome(t, Options{ActionTimeout: 5 * time.Second})
	gotoPage(t, b, srv.URL+"/")
	s := snap(t, b, SnapshotOptions{})
	acts, err := ParseActions(json.RawMessage(`[{"op":"click","id":"` + idOf(t, s.Text, "Send") + `"}]`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Run(ctxT(t), acts, RunOptions{}); err != nil {
		t.Fatalf("run: %v", err)
	}
	if s := snap(t, b, SnapshotOptions{}); !strings.Contains(s.Text, "Send") {
		t.Fatalf("the page should still show the form: %s", s.Text)
	}

	tb, err := b.activeTab()
	if err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	tb.pend = &navPending{id: "stale", method: "POST", url: srv.URL + "/none", since: time.Now().Add(-time.Minute)}
	b.mu.Unlock()
	if s := snap(t, b, SnapshotOptions{}); !strings.Contains(s.Text, "Send") {
		t.Fatalf("a wait that is not under way should not stop a snapshot: %s", s.Text)
	}
	b.mu.Lock()
	left := tb.pend
	b.mu.Unlock()
	if left != nil {
		t.Fatalf("the wait the renderer disproved is still recorded: %+v", left)
	}
}

// A submission the request gate is still deciding holds the page too: the
// failure says it is held, not that the server is slow.
func TestPendingSubmitHeldByTheGate(t *testing.T) {
	srv, _, _ := slowForm(t)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	b := attachOwnChrome(t, Options{ActionTimeout: 5 * time.Second, RequestGate: func(ctx context.Context, r GatedRequest) GateDecision {
		<-release // a decision that outlives the run that asked for it
		return GateDeny
	}})
	gotoPage(t, b, srv.URL+"/")
	s := snap(t, b, SnapshotOptions{})
	acts, err := ParseActions(json.RawMessage(`[{"op":"click","id":"` + idOf(t, s.Text, "Place order") + `"}]`))
	if err != nil {
		t.Fatal(err)
	}
	rctx, rcancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer rcancel()
	_, _ = b.Run(rctx, acts, RunOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = b.Snapshot(ctx, SnapshotOptions{})
	var pe *PendingError
	if ctx.Err() != nil || !errors.As(err, &pe) || !pe.Held || !strings.Contains(err.Error(), "held by the approval policy") {
		t.Fatalf("want the held submission named, got %v", err)
	}
}

// attachOwnChrome attaches to a Chrome of the test's own. A submission that
// never answers leaves its connection open in the browser until the test's
// server closes; the tests here keep several open at once, so they do not
// share the package's Chrome with the rest (nor it with them).
func attachOwnChrome(t *testing.T, o Options) *Browser {
	t.Helper()
	ws, _, stop, err := startChrome(t.TempDir())
	if err != nil {
		t.Fatalf("start chrome: %v", err)
	}
	t.Cleanup(stop)
	o.CDPURL = ws
	return attachTo(t, o)
}
