package driver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
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
