package driver

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// A click that navigates answers once the new page is parsed, without
// waiting for what it still fetches, and says so; the page's own load is
// still there to wait for. The image here answers only when the test lets
// it, so the load event cannot come before the answer.
func TestClickNavigateAnswersBeforeTheLoad(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	let := func() { once.Do(func() { close(release) }) }
	t.Cleanup(let)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /a", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<!doctype html><title>A</title><a href="/b">Next page</a>`))
	})
	mux.HandleFunc("GET /b", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<!doctype html><title>B</title><h1>Page B</h1><img src="/slow.png" alt="slow"><a href="/a">Back</a>`))
	})
	mux.HandleFunc("GET /slow.png", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
		w.WriteHeader(http.StatusNotFound)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(let) // before the server closes: it waits for the image's handler

	br := attach(t, Options{})
	gotoPage(t, br, srv.URL+"/a")
	acts, err := ParseActions(json.RawMessage(`[{"op":"click","locator":{"role":"link","name":"Next page"}}]`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := br.Run(ctxT(t), acts, RunOptions{Observe: "interactive"})
	if err != nil {
		t.Fatalf("click: %v", err)
	}
	if !strings.HasSuffix(res.URL, "/b") || res.Title != "B" {
		t.Fatalf("the answer is not on the new page: %s %q", res.URL, res.Title)
	}
	if res.Observed == nil || !strings.Contains(res.Observed.Text, `heading "Page B"`) || !strings.Contains(res.Observed.Text, `link "Back"`) {
		t.Fatalf("the observation does not show the new page: %+v", res.Observed)
	}
	if !res.Loading {
		t.Fatal("the answer came before the page's load event but does not say it was still loading")
	}
	let()
	after := mustRun(t, br, `[{"op":"wait","load":true}]`)
	if !after.OK || after.Loading {
		t.Fatalf("waiting for the load: %+v", after)
	}
	// A click that does not navigate says nothing of loading.
	if again := mustRun(t, br, `[{"op":"click","locator":{"role":"heading","name":"Page B"}}]`); again.Loading {
		t.Fatalf("a click that loaded nothing says loading: %+v", again)
	}
}

// A goto whose page is still loading at the action's bound (its server
// sends part of it and keeps the connection) answers with the page as it
// is and says it did not wait the load out.
func TestGotoStillLoadingSaysSo(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<title>Half</title><p>the first part`))
		w.(http.Flusher).Flush()
		<-release
	}))
	defer srv.Close()
	defer close(release)
	b := attach(t, Options{ActionTimeout: 2 * time.Second})
	acts, err := ParseActions(json.RawMessage(`[{"op":"goto","url":"` + srv.URL + `/hang"}]`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.Run(ctxT(t), acts, RunOptions{})
	if err != nil || !res.OK || !res.Loading || !strings.HasSuffix(res.URL, "/hang") {
		t.Fatalf("goto a page that never finishes: %+v %v, want ok on it with loading", res, err)
	}
}

// Typing that cannot finish within the action's bound is refused before a
// key is sent.
func TestSlowTypingRefusedUpFront(t *testing.T) {
	b := attach(t, Options{ActionTimeout: 2 * time.Second})
	gotoPage(t, b, siteURL)
	s := snap(t, b, SnapshotOptions{})
	id := idOf(t, s.Text, "textbox", "Email")
	acts, err := ParseActions(json.RawMessage(`[{"op":"type","id":"` + id + `","text":"abcdefghij","delay_ms":500}]`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.Run(ctxT(t), acts, RunOptions{})
	var pe *ParseError
	if !errors.As(err, &pe) || res != nil || !strings.Contains(pe.Reason, "lower delay_ms") {
		t.Fatalf("typing 10 characters 500 ms apart under a 2s bound: %+v %v, want a refusal naming delay_ms", res, err)
	}
	raw, err := b.Eval(ctxT(t), `() => [...document.querySelectorAll('input[type=text],input[type=email],input:not([type])')].map(i => i.value).join('')`, "")
	if err != nil || string(raw) != `""` {
		t.Fatalf("the fields hold %s (%v) after a refused type", raw, err)
	}
}
