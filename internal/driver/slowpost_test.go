package driver

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
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
	b := attach(t, Options{ActionTimeout: 2 * time.Second})
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
