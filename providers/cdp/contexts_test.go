//go:build unix

package cdp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/chrome"
	"github.com/durable-browser/durable-browser/providers"
)

// navigate points a page at u through its own DevTools session.
func navigate(t *testing.T, ctx context.Context, ws, target, u string) {
	t.Helper()
	c, err := chrome.Dial(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var att struct {
		SessionID string `json:"sessionId"`
	}
	if err := c.Call(ctx, "Target.attachToTarget", map[string]any{"targetId": target, "flatten": true}, &att); err != nil {
		t.Fatal(err)
	}
	if err := c.CallSession(ctx, att.SessionID, "Page.navigate", map[string]any{"url": u}, nil); err != nil {
		t.Fatal(err)
	}
}

func browserContexts(t *testing.T, ctx context.Context, ws string) map[string]bool {
	t.Helper()
	c, err := chrome.Dial(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var res struct {
		IDs []string `json:"browserContextIds"`
	}
	if err := c.Call(ctx, "Target.getBrowserContexts", nil, &res); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, id := range res.IDs {
		out[id] = true
	}
	return out
}

func TestSessionsDoNotShareCookies(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, port := runChrome(t)
	var mu sync.Mutex
	seen := map[string]string{} // who -> Cookie header at /check
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/set":
			http.SetCookie(w, &http.Cookie{Name: "k", Value: "v", Path: "/"})
		case "/check":
			mu.Lock()
			seen[r.URL.Query().Get("who")] = r.Header.Get("Cookie")
			mu.Unlock()
		}
		_, _ = w.Write([]byte("<title>ok</title>"))
	}))
	defer srv.Close()

	p, err := New(Options{Endpoint: "http://127.0.0.1:" + strconv.Itoa(port)})
	if err != nil {
		t.Fatal(err)
	}
	a, err := p.Create(ctx, providers.CreateOptions{Tag: "a"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Create(ctx, providers.CreateOptions{Tag: "b"})
	if err != nil {
		t.Fatal(err)
	}
	all := pageIDs(t, ctx, a.CDPURL)
	if ca, cb := all[a.TargetID].ContextID, all[b.TargetID].ContextID; ca == "" || cb == "" || ca == cb {
		t.Fatalf("sessions' pages are in contexts %q and %q, want two of their own", ca, cb)
	}

	navigate(t, ctx, a.CDPURL, a.TargetID, srv.URL+"/set")
	navigate(t, ctx, a.CDPURL, a.TargetID, srv.URL+"/check?who=a")
	navigate(t, ctx, b.CDPURL, b.TargetID, srv.URL+"/check?who=b")
	eventually(t, "both pages to ask the server", func() bool {
		mu.Lock()
		defer mu.Unlock()
		_, okA := seen["a"]
		_, okB := seen["b"]
		return okA && okB
	})
	mu.Lock()
	defer mu.Unlock()
	if seen["a"] != "k=v" {
		t.Fatalf("session a sent cookie %q, want its own k=v", seen["a"])
	}
	if seen["b"] != "" {
		t.Fatalf("session b sent cookie %q set in session a", seen["b"])
	}
}

// A provider with no memory of the session (another worker, on another
// machine) finds it by tag and releases it: its context, marker and popups
// are gone, and the browser runs on.
func TestReleaseFromAnotherWorker(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, port := runChrome(t)
	endpoint := "http://127.0.0.1:" + strconv.Itoa(port)
	pa, err := New(Options{Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	made := &contract.SessionOptions{Provider: Name, Stealth: true, ActionPolicy: "deny", AllowHosts: []string{"shop.example"}}
	s, err := pa.Create(ctx, providers.CreateOptions{Tag: "wf_3a1-1", Stealth: true, Session: made})
	if err != nil {
		t.Fatal(err)
	}
	openPopup(t, ctx, s.CDPURL, s.TargetID)
	eventually(t, "the popup to appear", func() bool {
		for _, ti := range pageIDs(t, ctx, s.CDPURL) {
			if ti.OpenerID == s.TargetID {
				return true
			}
		}
		return false
	})
	own := pageIDs(t, ctx, s.CDPURL)[s.TargetID].ContextID

	pb, err := New(Options{Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	found, err := pb.Find(ctx, "wf_3a1-1")
	if err != nil {
		t.Fatal(err)
	}
	if found.TargetID != s.TargetID || !found.Found || !found.Stealth || found.Made == nil || !reflect.DeepEqual(*found.Made, *made) {
		t.Fatalf("other worker found %+v (made %+v), want page %s made with %+v", found, found.Made, s.TargetID, made)
	}
	if err := pb.Release(ctx, "wf_3a1-1"); err != nil {
		t.Fatal(err)
	}
	for id, ti := range pageIDs(t, ctx, s.CDPURL) {
		if ti.ContextID == own || ti.URL != "" && len(markers(map[string]targetInfo{id: ti}, "wf_3a1-1")) > 0 {
			t.Fatalf("page %s (%s) of the released session is still open", id, ti.URL)
		}
	}
	if browserContexts(t, ctx, s.CDPURL)[own] {
		t.Fatal("the released session's browser context still exists")
	}
	if len(browserContexts(t, ctx, s.CDPURL)) != 0 {
		t.Fatal("the marker's browser context still exists")
	}
	if _, err := pa.Find(ctx, "wf_3a1-1"); !errors.Is(err, providers.ErrNotFound) {
		t.Fatalf("the creating worker still finds the released session: %v", err)
	}
	if err := pa.Release(ctx, "wf_3a1-1"); err != nil {
		t.Fatal(err)
	}
	again, err := pa.Create(ctx, providers.CreateOptions{Tag: "wf_3a1-1"})
	if err != nil || again.Found || again.TargetID == s.TargetID {
		t.Fatalf("create after release: %v %+v", err, again)
	}
	if _, err := chrome.ResolveWS(ctx, endpoint); err != nil {
		t.Fatalf("browser stopped answering: %v", err)
	}
}

// A session's page cannot pass for another session's marker: pages it
// opens share its context, and it cannot name another context.
func TestPageCannotPassForAMarker(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, port := runChrome(t)
	p, err := New(Options{Endpoint: "http://127.0.0.1:" + strconv.Itoa(port)})
	if err != nil {
		t.Fatal(err)
	}
	a, err := p.Create(ctx, providers.CreateOptions{Tag: "a"})
	if err != nil {
		t.Fatal(err)
	}
	own := pageIDs(t, ctx, a.CDPURL)[a.TargetID].ContextID
	forged := markerURL(marker{Tag: "victim", Context: own, Page: a.TargetID})
	// The page names itself, in its own context, the victim's marker.
	navigate(t, ctx, a.CDPURL, a.TargetID, forged)
	eventually(t, "the page to carry the forged marker", func() bool {
		return pageIDs(t, ctx, a.CDPURL)[a.TargetID].URL == forged
	})
	if _, err := p.Find(ctx, "victim"); !errors.Is(err, providers.ErrNotFound) {
		t.Fatalf("find of a tag only a page claims: %v", err)
	}
	v, err := p.Create(ctx, providers.CreateOptions{Tag: "victim"})
	if err != nil || v.Found || v.TargetID == a.TargetID {
		t.Fatalf("create of the claimed tag: %v %+v", err, v)
	}
	if err := p.Release(ctx, "victim"); err != nil {
		t.Fatal(err)
	}
	if _, ok := pageIDs(t, ctx, a.CDPURL)[a.TargetID]; !ok {
		t.Fatal("releasing the claimed tag closed the claiming session's page")
	}
}
