package driver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// A page whose own script never yields holds every command meant for it.
// A call that meets it stops that script after the action timeout and says
// so, instead of waiting out its caller's deadline; the page then answers.
func TestBusyPageScriptIsStopped(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/click":
			fmt.Fprint(w, `<title>Loop</title><button onclick="while(true){}">Freeze</button>`)
		case "/timer":
			fmt.Fprint(w, `<title>Timer</title><p>soon busy</p><script>setTimeout(() => { while (true) {} }, 300)</script>`)
		}
	}))
	defer srv.Close()
	b := attach(t, Options{ActionTimeout: 2 * time.Second})
	// Bounded well past the action timeout: without the stop, every call
	// below would wait this out.
	call := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.Background(), 40*time.Second)
	}
	wantBusy := func(what string, err error) {
		t.Helper()
		var be *BusyError
		if !errors.As(err, &be) || !be.Stopped {
			t.Fatalf("%s on a busy page: %v, want a *BusyError saying its script was stopped", what, err)
		}
	}
	pageAnswers := func(what string) {
		t.Helper()
		ctx, cancel := call()
		defer cancel()
		if _, err := b.Snapshot(ctx, SnapshotOptions{}); err != nil {
			t.Fatalf("snapshot after %s: %v", what, err)
		}
	}

	// A click whose handler never returns: the action may have happened.
	gotoPage(t, b, srv.URL+"/click")
	acts, err := ParseActions(json.RawMessage(`[{"op":"click","locator":{"text":"Freeze"}}]`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := call()
	res, err := b.Run(ctx, acts, RunOptions{})
	cancel()
	wantBusy("click", err)
	var ae *ActionError
	if !errors.As(err, &ae) || !ae.MayHaveActed || ae.Kind != KindTimeout || res == nil || res.OK {
		t.Fatalf("click: %+v %v, want a timed-out action that may have acted", res, err)
	}
	pageAnswers("the click")

	// A page that freezes itself: a snapshot meets it.
	gotoPage(t, b, srv.URL+"/timer")
	ctx, cancel = call()
	defer cancel()
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err := b.Snapshot(ctx, SnapshotOptions{})
		if err != nil {
			wantBusy("snapshot", err)
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the page's timer never froze it")
		}
	}
	pageAnswers("the snapshot")

	// A read waits longer before it takes the page for busy (its own
	// evaluation of a huge page holds the renderer as a loop would), but
	// a page that never yields is still stopped, not waited out.
	gotoPage(t, b, srv.URL+"/timer")
	start := time.Now()
	for {
		_, err := b.Read(ctx, ReadOptions{What: "text"})
		if err != nil {
			wantBusy("read", err)
			break
		}
		if time.Since(start) > 20*time.Second {
			t.Fatal("the page's timer never froze it")
		}
	}
	if waited := time.Since(start); waited < b.heavyBound() {
		t.Fatalf("the read took the page for busy after %v, before its bound of %v", waited, b.heavyBound())
	}
	pageAnswers("the read")
	// And a goto leaves it.
	mustRun(t, b, fmt.Sprintf(`[{"op":"goto","url":%q}]`, siteURL))
}

// A page function that never yields, cut short by its own timeout, is
// stopped too: the page answers the next call at once.
func TestBusyPageFunctionIsStopped(t *testing.T) {
	b := attach(t, Options{ActionTimeout: 2 * time.Second})
	gotoPage(t, b, siteURL)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	_, err := b.Eval(ctx, `() => { while (true) {} }`, "")
	var be *BusyError
	if !errors.As(err, &be) || !be.Stopped {
		t.Fatalf("eval of an endless loop: %v, want a *BusyError saying it was stopped", err)
	}
	// Bounded below the busy watch's own timeout: the page answers at once.
	sctx, scancel := context.WithTimeout(context.Background(), time.Second)
	defer scancel()
	if _, err := b.Snapshot(sctx, SnapshotOptions{}); err != nil {
		t.Fatalf("snapshot after the stopped page function: %v", err)
	}
}
