package driver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/contract"
)

// refusalSite is a loopback site for the request gate's refusals: a page
// that sends a beacon as it is left, one whose button fetch()es POSTs from
// its click handler, one that submits a POST form as it loads, and a plain
// page to go to. posts counts the side-effecting requests that reached it,
// by path.
func refusalSite(t *testing.T) (*httptest.Server, func(path string) int32) {
	t.Helper()
	var mu sync.Mutex
	posts := map[string]int32{}
	page := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<!doctype html>"+body)
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /beacon.html", page(`<title>leaving</title><p>leaving</p>
<script>addEventListener("pagehide", () => navigator.sendBeacon("/beacon", "bye-data"))</script>`))
	mux.HandleFunc("GET /other.html", page(`<title>other</title><p>other page</p>`))
	mux.HandleFunc("GET /buttons.html", page(`<title>buttons</title><p id="out">not yet</p>
<button onclick="fetch('/post', {method: 'POST', body: 'x'}).catch(() => {}); document.getElementById('out').textContent = 'clicked'">Save</button>
<button onclick="for (let i = 0; i < 6; i++) fetch('/many?i=' + i, {method: 'POST', body: 'x'}).catch(() => {}); document.getElementById('out').textContent = 'clicked many'">Save all</button>`))
	mux.HandleFunc("GET /autosubmit.html", page(`<title>autosubmit</title>
<form method="post" action="/submit"><input name="q" value="v"></form><script>document.forms[0].submit()</script>`))
	mux.HandleFunc("POST /", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		posts[r.URL.Path]++
		mu.Unlock()
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, func(path string) int32 {
		mu.Lock()
		defer mu.Unlock()
		return posts[path]
	}
}

// heldAs finds method and path among a result's held requests with
// decision.
func heldAs(res *contract.RunResult, method, path, decision string) bool {
	for _, h := range res.Held {
		if h.Method == method && h.Path == path && h.Decision == decision {
			return true
		}
	}
	return false
}

// A goto from a page that sends a beacon as it is left: the gate refuses
// the beacon (held, then denied, as under action policy ask), which is no
// request the goto was for. The goto is done, the run answers at the page
// it went to, and the beacon is listed as refused, never sent.
func TestRefusedBeaconDoesNotFailGoto(t *testing.T) {
	srv, posts := refusalSite(t)
	held := make(chan GatedRequest)
	decide := make(chan GateDecision)
	b := attach(t, Options{RequestGate: func(ctx context.Context, r GatedRequest) GateDecision {
		// A person decides while the run waits.
		select {
		case held <- r:
		case <-ctx.Done():
			return GateDeny
		}
		select {
		case d := <-decide:
			return d
		case <-ctx.Done():
			return GateDeny
		}
	}})
	gotoPage(t, b, srv.URL+"/beacon.html")
	acts, err := ParseActions(json.RawMessage(fmt.Sprintf(`[{"op":"goto","url":%q}]`, srv.URL+"/other.html")))
	if err != nil {
		t.Fatal(err)
	}
	type answer struct {
		res *contract.RunResult
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := b.Run(ctxT(t), acts, RunOptions{})
		done <- answer{res, err}
	}()
	select {
	case r := <-held:
		if r.Method != "POST" || r.Path != "/beacon" {
			t.Fatalf("held %+v, want the beacon", r)
		}
	case a := <-done:
		t.Fatalf("the run answered before the beacon was held: %+v, %v", a.res, a.err)
	case <-time.After(20 * time.Second):
		t.Fatal("the beacon was never held")
	}
	decide <- GateDeny
	a := <-done
	if a.err != nil {
		t.Fatalf("goto failed for a beacon it did not send: %v", a.err)
	}
	res := a.res
	if !res.OK || res.Completed != 1 || res.Failed != nil || !strings.HasSuffix(res.URL, "/other.html") {
		t.Fatalf("result %+v", res)
	}
	if !heldAs(res, "POST", "/beacon", "denied") || len(res.Sent) != 0 {
		t.Fatalf("held %+v, sent %+v: want the beacon refused and nothing sent", res.Held, res.Sent)
	}
	if n := posts("/beacon"); n != 0 {
		t.Fatalf("a refused beacon reached the site %d time(s)", n)
	}
}

// A click whose handler fetch()es a POST the gate denies ran: it is done,
// and the POST is listed as refused, never sent.
func TestRefusedFetchDoesNotFailClick(t *testing.T) {
	srv, posts := refusalSite(t)
	b := attach(t, Options{RequestGate: func(ctx context.Context, r GatedRequest) GateDecision { return GateDeny }})
	gotoPage(t, b, srv.URL+"/buttons.html")
	s := snap(t, b, SnapshotOptions{})
	acts, err := ParseActions(json.RawMessage(fmt.Sprintf(`[{"op":"click","id":%q},{"op":"wait","text":"clicked"}]`, idOf(t, s.Text, `button "Save"`))))
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.Run(ctxT(t), acts, RunOptions{})
	if err != nil {
		t.Fatalf("click failed for its handler's refused fetch: %v", err)
	}
	if !res.OK || res.Completed != 2 {
		t.Fatalf("result %+v", res)
	}
	if !heldAs(res, "POST", "/post", "denied") || len(res.Sent) != 0 {
		t.Fatalf("held %+v, sent %+v: want the POST refused and nothing sent", res.Held, res.Sent)
	}
	if n := posts("/post"); n != 0 {
		t.Fatalf("a refused POST reached the site %d time(s)", n)
	}
}

// A click whose handler fires six POSTs, of which the gate lets two go
// (decided once all six wait, as a person would): the click is done, the
// two are sent and the four refused, each listed once where it belongs.
func TestClickSomeFetchesRefused(t *testing.T) {
	srv, posts := refusalSite(t)
	const fired, allowed = 6, 2
	var mu sync.Mutex
	arrived := 0
	all := make(chan struct{})
	var decided atomic.Int32
	b := attach(t, Options{RequestGate: func(ctx context.Context, r GatedRequest) GateDecision {
		if r.Path != "/many" {
			return GateDeny
		}
		mu.Lock()
		if arrived++; arrived == fired {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
		case <-ctx.Done():
			return GateDeny
		}
		if decided.Add(1) <= allowed {
			return GateAllow
		}
		return GateDeny
	}})
	gotoPage(t, b, srv.URL+"/buttons.html")
	s := snap(t, b, SnapshotOptions{})
	acts, err := ParseActions(json.RawMessage(fmt.Sprintf(`[{"op":"click","id":%q},{"op":"wait","text":"clicked many"}]`, idOf(t, s.Text, `button "Save all"`))))
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.Run(ctxT(t), acts, RunOptions{})
	if err != nil {
		t.Fatalf("click failed for its handler's refused fetches: %v", err)
	}
	if !res.OK || res.Completed != 2 {
		t.Fatalf("result %+v", res)
	}
	denied := 0
	for _, h := range res.Held {
		if h.Method == "POST" && h.Path == "/many" && h.Decision == "denied" {
			denied++
		}
	}
	if len(res.Sent) != allowed || denied != fired-allowed {
		t.Fatalf("sent %+v, held %+v: want %d sent and %d refused", res.Sent, res.Held, allowed, fired-allowed)
	}
	eventually(t, "the allowed POSTs to arrive", func() bool { return posts("/many") == allowed })
}

// A goto whose page submits a POST form as it loads, from a page that
// sends a beacon as it is left: the refused submission is the navigation
// the goto made, so the goto fails naming it (not the beacon refused
// before it).
func TestRefusedSubmissionFailsGoto(t *testing.T) {
	srv, posts := refusalSite(t)
	b := attach(t, Options{RequestGate: func(ctx context.Context, r GatedRequest) GateDecision { return GateDeny }})
	gotoPage(t, b, srv.URL+"/beacon.html")
	acts, err := ParseActions(json.RawMessage(fmt.Sprintf(`[{"op":"goto","url":%q}]`, srv.URL+"/autosubmit.html")))
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.Run(ctxT(t), acts, RunOptions{})
	var ae *ActionError
	var re *RefusedError
	if !errors.As(err, &ae) || ae.Kind != KindRefused || !errors.As(err, &re) || re.Method != "POST" || re.Path != "/submit" {
		t.Fatalf("want the goto refused for its form's POST /submit, got %v", err)
	}
	if res == nil || res.OK || res.Completed != 0 || res.Failed == nil || res.Failed.Op != "goto" || len(res.Sent) != 0 {
		t.Fatalf("result %+v", res)
	}
	if !heldAs(res, "POST", "/submit", "denied") {
		t.Fatalf("held %+v: want the submission listed as refused", res.Held)
	}
	if posts("/submit") != 0 || posts("/beacon") != 0 {
		t.Fatal("a refused request reached the site")
	}
}

// A click that submits a POST form the gate denies fails as it did: the
// submission is what the click was for.
func TestRefusedFormSubmissionFailsClick(t *testing.T) {
	b := attach(t, Options{RequestGate: func(ctx context.Context, r GatedRequest) GateDecision { return GateDeny }})
	gotoPage(t, b, siteURL+"/contact.html")
	s := snap(t, b, SnapshotOptions{})
	before := len(site.Submissions())
	acts, _ := ParseActions(json.RawMessage(fmt.Sprintf(`[{"op":"click","id":"%s"}]`, idOf(t, s.Text, "Send"))))
	res, err := b.Run(ctxT(t), acts, RunOptions{})
	var re *RefusedError
	if !errors.As(err, &re) || re.Method != "POST" || re.Path != "/submit" {
		t.Fatalf("gated submit: %v", err)
	}
	if res.Completed != 0 || len(res.Sent) != 0 || !heldAs(res, "POST", "/submit", "denied") {
		t.Fatalf("result %+v", res)
	}
	if n := len(site.Submissions()); n != before {
		t.Fatalf("a denied request reached the server")
	}
}
