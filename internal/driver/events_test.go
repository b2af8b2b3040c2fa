package driver

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/listed"
)

// noisyPage logs 70 console errors and makes 60 requests that answer 404,
// then says it is done.
const noisyPage = `<!doctype html><title>Noisy</title><p id="s">working</p><script>
for (let i = 1; i <= 70; i++) console.error("err " + i);
Promise.all(Array.from({length: 60}, (_, i) => fetch("/missing/" + i).catch(() => {})))
  .then(() => { document.getElementById("s").textContent = "all done"; });
</script>`

// TestListsPastTheBoundSayHowManyMore: what a run saw past the 50 items
// each of its lists keeps is not dropped unsaid: the result's not_listed
// counts it, and a check counts every console error and failed request.
func TestListsPastTheBoundSayHowManyMore(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, noisyPage)
	}))
	defer srv.Close()
	b := attach(t, Options{})
	mustRun(t, b, `[{"op":"wait","ms":1}]`) // drains what came before
	res := mustRun(t, b, fmt.Sprintf(`[{"op":"goto","url":%q},{"op":"wait","text":"all done"}]`, srv.URL+"/"))

	// An event handled a moment after an answer is listed by the next run,
	// so the lists are summed over runs until every one is accounted for.
	var console, failed int
	cut := map[string]bool{}
	add := func(r *contract.RunResult) {
		for what, l := range map[string][]string{"console errors": r.ConsoleErrors, "failed requests": r.FailedRequests} {
			if len(l) > listed.Max {
				t.Fatalf("%d %s listed, want at most %d: %q", len(l), what, listed.Max, l)
			}
		}
		console += len(r.ConsoleErrors)
		failed += len(r.FailedRequests)
		if nl := r.NotListed; nl != nil {
			console += nl.ConsoleErrors
			failed += nl.FailedRequests
			cut["console"] = cut["console"] || nl.ConsoleErrors > 0
			cut["failed"] = cut["failed"] || nl.FailedRequests > 0
		}
	}
	add(res)
	eventually(t, "70 console errors and 60 failed requests accounted for", func() bool {
		if console >= 70 && failed >= 60 {
			return true
		}
		add(mustRun(t, b, `[{"op":"wait","ms":1}]`))
		return false
	})
	if console != 70 || failed != 60 || !cut["console"] || !cut["failed"] {
		t.Fatalf("console errors %d, failed requests %d (cut %v); want 70 and 60, both cut", console, failed, cut)
	}

	// A check reads the document's lists, which runs do not drain.
	c, err := b.Check(ctxT(t), CheckOptions{NoConsoleErrors: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Verdict.Checks[0].Found; !strings.HasPrefix(got, "70: err 1; err 2;") {
		t.Errorf("no_console_errors found %q, want it to count all 70", got)
	}
	if len(c.ConsoleErrors) != listed.Max || c.ConsoleErrors[listed.Max-1] != "(21 more console errors not listed)" {
		t.Errorf("check's console errors: %d, last %q; want %d ending with a count of 21 more", len(c.ConsoleErrors), c.ConsoleErrors[len(c.ConsoleErrors)-1], listed.Max)
	}
	if len(c.Verdict.Warnings) == 0 || !strings.HasPrefix(c.Verdict.Warnings[0], "60 failed requests (not checked): ") {
		t.Errorf("warnings %q, want the first to count all 60 failed requests", c.Verdict.Warnings)
	}
}

// A page that fills a run's lists (55 dialogs, 55 POSTs sent, 60 requests
// the reach guard blocked) has them counted past 50, and the run's own
// navigation, blocked after the list of blocked requests is full, still
// fails the action as blocked.
func TestFullListsCountAndKeepTheActionsOwnRefusal(t *testing.T) {
	rs := newReachServers(t)
	_, bPort, _ := net.SplitHostPort(rs.b.Listener.Addr().String())
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			_, _ = w.Write([]byte("ok"))
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>Full</title><p id="s">working</p><script>
for (let i = 1; i <= 55; i++) alert("dialog " + i);
const B = "http://127.0.0.1:%s";
Promise.allSettled([
  ...Array.from({length: 55}, (_, i) => fetch("/post/" + i, {method: "POST", body: "x"})),
  ...Array.from({length: 60}, (_, i) => fetch(B + "/blocked/" + i)),
]).then(() => { document.getElementById("s").textContent = "all done"; });
</script>`, bPort)
	}))
	defer page.Close()
	b := attach(t, Options{Reach: rs.policy})
	mustRun(t, b, `[{"op":"wait","ms":1}]`)
	acts, err := ParseActions(json.RawMessage(fmt.Sprintf(`[{"op":"goto","url":%q},{"op":"wait","text":"all done"},{"op":"goto","url":%q}]`, page.URL+"/", rs.b.URL+"/")))
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.Run(ctxT(t), acts, RunOptions{})
	var ae *ActionError
	var be *BlockedError
	if !errors.As(err, &ae) || ae.Kind != KindBlocked || !errors.As(err, &be) || be.Rule != "service" {
		t.Fatalf("the last goto: %v, want a blocked navigation", err)
	}
	if res == nil || res.Completed != 2 {
		t.Fatalf("result %+v", res)
	}
	var dialogs, sent, blocked int
	add := func(r *contract.RunResult) {
		if len(r.Dialogs) > listed.Max || len(r.Sent) > listed.Max || len(r.Blocked) > listed.Max {
			t.Fatalf("lists over %d: %d dialogs, %d sent, %d blocked", listed.Max, len(r.Dialogs), len(r.Sent), len(r.Blocked))
		}
		dialogs, sent, blocked = dialogs+len(r.Dialogs), sent+len(r.Sent), blocked+len(r.Blocked)
		if nl := r.NotListed; nl != nil {
			dialogs, sent, blocked = dialogs+nl.Dialogs, sent+nl.Sent, blocked+nl.Blocked
		}
	}
	add(res)
	if res.NotListed == nil || res.NotListed.Dialogs != 5 || res.NotListed.Blocked == 0 {
		t.Fatalf("not_listed %+v, want 5 dialogs and some blocked requests", res.NotListed)
	}
	eventually(t, "55 dialogs, 55 requests sent and 61 blocked accounted for", func() bool {
		if dialogs >= 55 && sent >= 55 && blocked >= 61 {
			return true
		}
		add(mustRun(t, b, `[{"op":"wait","ms":1}]`))
		return false
	})
	if dialogs != 55 || sent != 55 || blocked != 61 {
		t.Fatalf("%d dialogs, %d sent, %d blocked; want 55, 55 and 61 (60 fetches and the goto)", dialogs, sent, blocked)
	}
	if n := rs.bHits.Load(); n != 0 {
		t.Fatalf("server B received %d requests", n)
	}
}

// A page that begins more downloads than a session saves (50; 3 here)
// has the rest cancelled, and says so: Downloads lists them as not saved,
// why, with nothing filed (they were dropped from the list unsaid).
func TestDownloadsPastTheSessionsCapSayNotSaved(t *testing.T) {
	const n, max = 5, 3
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/f/") {
			w.Header().Set("Content-Type", "text/plain")
			w.Header().Set("Content-Disposition", `attachment; filename="f`+strings.TrimPrefix(r.URL.Path, "/f/")+`.txt"`)
			fmt.Fprint(w, "file ", r.URL.Path)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>Many</title><button onclick="go()">Get all</button><script>
async function go() {
  for (let i = 0; i < %d; i++) {
    const a = document.createElement("a"); a.href = "/f/" + i; a.download = "f" + i + ".txt"; document.body.append(a); a.click();
    await new Promise(r => setTimeout(r, 150)); // paced: Chrome did not begin every one of downloads 30 ms apart
  }
}
</script>`, n)
	}))
	defer srv.Close()
	b := attach(t, Options{DownloadDir: t.TempDir()})
	b.mu.Lock()
	b.dl.max = max
	b.mu.Unlock()
	mustRun(t, b, fmt.Sprintf(`[{"op":"goto","url":%q},{"op":"click","locator":{"role":"button","name":"Get all"}}]`, srv.URL+"/"))
	var saved, notSaved int
	eventually(t, "the downloads settled", func() bool {
		dls, err := b.Downloads(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		saved, notSaved = 0, 0
		for _, d := range dls {
			if d.NotSaved != "" {
				if d.SHA256 != "" || d.Size != 0 || !strings.Contains(d.NotSaved, "more than 3 downloads") {
					t.Fatalf("a download not saved: %+v", d)
				}
				notSaved++
				continue
			}
			saved++
		}
		return saved+notSaved == n
	})
	if saved != max || notSaved != n-max {
		t.Fatalf("%d saved, %d not saved; want %d and %d", saved, notSaved, max, n-max)
	}
	// A run that begins one more names it as not saved.
	res := mustRun(t, b, `[{"op":"click","locator":{"role":"button","name":"Get all"}}]`)
	eventually(t, "the next run's downloads", func() bool {
		for _, d := range res.Downloads {
			if strings.HasSuffix(d, "(not saved: more than 3 downloads in this session)") {
				return true
			}
		}
		res = mustRun(t, b, `[{"op":"wait","ms":1}]`)
		return false
	})
}
