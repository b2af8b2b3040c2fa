package driver

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-rod/rod/lib/proto"
)

// opsPage exercises hover, scroll, double click, key combos and waits.
const opsPage = `<!doctype html><html><head><title>Ops</title></head><body><main>
<h1>Ops</h1>
<button id="hv" onmouseenter="document.getElementById('out').textContent='hovered'">Hover me</button>
<button id="dbl" ondblclick="document.getElementById('out').textContent='double '+event.detail">Double</button>
<label>Text <input id="txt" value="old text"></label>
<button onclick="setTimeout(()=>history.pushState({},'','?step=2'),150)">Later route</button>
<button onclick="setTimeout(()=>{const l=document.getElementById('late');l.style.width='80px';l.style.height='20px'},150)">Grow</button>
<div id="late" role="status" aria-label="Late box" style="width:0;height:0;overflow:hidden">late</div>
<p id="out">idle</p>
<div style="height:3000px"></div>
<button id="far">Far button</button>
</main></body></html>`

var (
	pagesOnce sync.Once
	loads     atomic.Int64
)

// testPages adds the pages these tests need to the shared demo site.
func testPages() {
	pagesOnce.Do(func() {
		site.Handle("GET /t/ops.html", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, opsPage)
		}))
		site.Handle("GET /t/count.html", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			fmt.Fprintf(w, `<!doctype html><title>Count</title><p>loads %d</p>`, loads.Add(1))
		}))
		site.Handle("GET /t/hostile.html", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			// The page tampers with the globals a snapshot walker could rely on.
			fmt.Fprint(w, `<!doctype html><title>Hostile</title>
<script>
Element.prototype.getAttribute=function(){return "evil"};
Element.prototype.checkVisibility=function(){return false};
JSON.stringify=function(){return "{}"};
window.__dbSnap={k:1,els:[null,document.documentElement]};
</script>
<button id="real" onclick="document.getElementById('out').textContent='real clicked'">Real button</button>
<p id="out">idle</p>`)
		}))
		site.Handle("GET /t/webdriver.html", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			// Read as the page's first script runs, before any later patch could hide it.
			fmt.Fprint(w, `<!doctype html><title>WD</title><script>window.wdAtStart=String(navigator.webdriver)</script>
<a href="/t/webdriver.html?popup=1" target="_blank">Open popup</a>`)
		}))
	})
}

// evalIn evaluates expr in the active tab's main world.
func evalIn(t testing.TB, b *Browser, expr string) string {
	t.Helper()
	tb, err := b.activeTab()
	if err != nil {
		t.Fatal(err)
	}
	res, err := proto.RuntimeEvaluate{Expression: expr, ReturnByValue: true}.Call(b.client(ctxT(t), tb.sess))
	if err != nil || res.ExceptionDetails != nil {
		t.Fatalf("eval %s: %v %+v", expr, err, res)
	}
	return fmt.Sprint(res.Result.Value.Val())
}

func TestHoverDoubleClickAndScroll(t *testing.T) {
	testPages()
	b := attach(t, Options{})
	gotoPage(t, b, siteURL+"/t/ops.html")
	s := snap(t, b, SnapshotOptions{})
	mustRun(t, b, fmt.Sprintf(`[{"op":"hover","id":"%s"},{"op":"wait","text":"hovered"}]`, idOf(t, s.Text, `button "Hover me"`)))
	mustRun(t, b, fmt.Sprintf(`[{"op":"click","id":"%s","count":2},{"op":"wait","text":"double 2"}]`, idOf(t, s.Text, `button "Double"`)))

	mustRun(t, b, `[{"op":"scroll","dy":600}]`)
	eventually(t, "scrollY 600", func() bool { return evalIn(t, b, "window.scrollY") == "600" })
	mustRun(t, b, `[{"op":"scroll","dy":-600}]`)
	eventually(t, "scrollY 0", func() bool { return evalIn(t, b, "window.scrollY") == "0" })

	inView := `(()=>{const r=document.getElementById('far').getBoundingClientRect();return r.top>=0&&r.bottom<=innerHeight})()`
	if evalIn(t, b, inView) != "false" {
		t.Fatal("far button already in view")
	}
	mustRun(t, b, fmt.Sprintf(`[{"op":"scroll","id":"%s"}]`, idOf(t, s.Text, `button "Far button"`)))
	if evalIn(t, b, inView) != "true" {
		t.Fatal("scroll by id did not bring the button into view")
	}
}

func TestPressComboReplacesText(t *testing.T) {
	testPages()
	b := attach(t, Options{})
	gotoPage(t, b, siteURL+"/t/ops.html")
	s := snap(t, b, SnapshotOptions{})
	if !strings.Contains(s.Text, `textbox "Text" value="old text"`) {
		t.Fatalf("field not shown with its value:\n%s", s.Text)
	}
	field := idOf(t, s.Text, `textbox "Text"`)
	mustRun(t, b, fmt.Sprintf(`[{"op":"click","id":"%s"},{"op":"press","key":"Control+A"},{"op":"press","key":"n"},{"op":"press","key":"e"},{"op":"press","key":"w"}]`, field))
	if got := evalIn(t, b, "document.getElementById('txt').value"); got != "new" {
		t.Fatalf("value %q, want %q", got, "new")
	}
	s = snap(t, b, SnapshotOptions{})
	if !strings.Contains(s.Text, `textbox "Text" focused value="new"`) {
		t.Fatalf("snapshot after typing:\n%s", s.Text)
	}
}

func TestWaitForURLAndID(t *testing.T) {
	testPages()
	b := attach(t, Options{})
	gotoPage(t, b, siteURL+"/t/ops.html")
	s := snap(t, b, SnapshotOptions{})
	late := idOf(t, s.Text, `status "Late box"`)
	res := mustRun(t, b, fmt.Sprintf(`[{"op":"click","id":"%s"},{"op":"wait","id":"%s"}]`, idOf(t, s.Text, `button "Grow"`), late))
	if res.Completed != 2 {
		t.Fatalf("wait by id: %+v", res)
	}
	if evalIn(t, b, "document.getElementById('late').getBoundingClientRect().width") != "80" {
		t.Fatal("wait by id returned before the element grew")
	}
	res = mustRun(t, b, fmt.Sprintf(`[{"op":"click","id":"%s"},{"op":"wait","url":"*/t/ops.html?step=2"}]`, idOf(t, s.Text, `button "Later route"`)))
	if !strings.HasSuffix(res.URL, "?step=2") {
		t.Fatalf("wait by url ended at %q", res.URL)
	}
}

func TestBackForwardReload(t *testing.T) {
	testPages()
	b := attach(t, Options{})
	gotoPage(t, b, siteURL+"/t/ops.html")
	gotoPage(t, b, siteURL+"/t/count.html")
	first := evalIn(t, b, "document.body.innerText")
	res := mustRun(t, b, `[{"op":"back"},{"op":"wait","text":"Hover me"}]`)
	if !strings.Contains(res.URL, "/t/ops.html") {
		t.Fatalf("back: url %q", res.URL)
	}
	res = mustRun(t, b, `[{"op":"forward"},{"op":"wait","url":"/t/count.html"}]`)
	if !strings.Contains(res.URL, "/t/count.html") {
		t.Fatalf("forward: url %q", res.URL)
	}
	before := loads.Load()
	mustRun(t, b, `[{"op":"reload"},{"op":"wait","load":true}]`)
	if loads.Load() != before+1 {
		t.Fatalf("reload: server saw %d new loads, want 1 (first page said %q)", loads.Load()-before, first)
	}
	if got := evalIn(t, b, "document.body.innerText"); got != fmt.Sprintf("loads %d", before+1) {
		t.Fatalf("after reload the page says %q", got)
	}
	acts, _ := ParseActions([]byte(`[{"op":"forward"}]`))
	_, err := b.Run(ctxT(t), acts, RunOptions{})
	if ae, ok := err.(*ActionError); !ok || ae.Kind != KindNavigation {
		t.Fatalf("forward with no next page: %v", err)
	}
}

func TestStealthPageAndPopup(t *testing.T) {
	testPages()
	plain := attach(t, Options{})
	gotoPage(t, plain, siteURL+"/t/webdriver.html")
	t.Logf("without stealth navigator.webdriver = %s", evalIn(t, plain, "window.wdAtStart"))
	_ = plain.Close()

	b := attach(t, Options{Stealth: true})
	gotoPage(t, b, siteURL+"/t/webdriver.html")
	if got := evalIn(t, b, "window.wdAtStart"); got != "false" && got != "undefined" {
		t.Fatalf("page: navigator.webdriver = %s at start", got)
	}
	s := snap(t, b, SnapshotOptions{})
	res := mustRun(t, b, fmt.Sprintf(`[{"op":"click","id":"%s"},{"op":"wait","load":true}]`, idOf(t, s.Text, "Open popup")))
	if len(res.TabsOpened) != 1 || !strings.Contains(res.URL, "popup=1") {
		t.Fatalf("popup not followed: %+v", res)
	}
	if got := evalIn(t, b, "window.wdAtStart"); got != "false" && got != "undefined" {
		t.Fatalf("popup: navigator.webdriver = %s at start", got)
	}
	if err := b.CloseTab(ctxT(t), res.TabsOpened[0].ID); err != nil {
		t.Fatal(err)
	}
}

func TestTargetIDAttachesOnlyToThatPage(t *testing.T) {
	testPages()
	// Two pages in the shared browser: the user's and the one a provider opened.
	opener := attach(t, Options{})
	ctx := ctxT(t)
	mk := func(u string) proto.TargetTargetID {
		r, err := proto.TargetCreateTarget{URL: u}.Call(opener.client(ctx, ""))
		if err != nil {
			t.Fatal(err)
		}
		return r.TargetID
	}
	users, mine := mk(siteURL+"/about.html"), mk("about:blank")
	_ = opener.Close()

	b := attach(t, Options{TargetID: string(mine)})
	t.Cleanup(func() { // runs before b is closed
		c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for _, id := range []proto.TargetTargetID{users, mine} {
			_, _ = proto.TargetCloseTarget{TargetID: id}.Call(b.client(c, ""))
		}
	})
	tabs, err := b.Tabs(ctx)
	if err != nil || len(tabs) != 1 || !tabs[0].Active {
		t.Fatalf("tabs %+v %v, want only the given page", tabs, err)
	}
	gotoPage(t, b, siteURL+"/tabs.html")
	s := snap(t, b, SnapshotOptions{})
	res := mustRun(t, b, fmt.Sprintf(`[{"op":"click","id":"%s"},{"op":"wait","load":true}]`, idOf(t, s.Text, "Open about")))
	if len(res.TabsOpened) != 1 || !strings.Contains(res.URL, "/about.html") {
		t.Fatalf("popup not followed: %+v", res)
	}
	all, err := proto.TargetGetTargets{}.Call(b.client(ctx, ""))
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range all.TargetInfos {
		if ti.TargetID == users && ti.Attached {
			t.Fatalf("the user's other page was attached")
		}
	}
	b.mu.Lock()
	held := len(b.tabs)
	b.mu.Unlock()
	if held != 2 {
		t.Fatalf("driver holds %d tabs, want the page and its popup", held)
	}
	_ = b.CloseTab(ctx, res.TabsOpened[0].ID)
}

func TestSnapshotIgnoresPageTampering(t *testing.T) {
	testPages()
	b := attach(t, Options{})
	gotoPage(t, b, siteURL+"/t/hostile.html")
	s := snap(t, b, SnapshotOptions{})
	if !strings.Contains(s.Text, `button "Real button"`) || strings.Contains(s.Text, "evil") {
		t.Fatalf("snapshot swayed by the page:\n%s", s.Text)
	}
	// The page moving ids around its own world cannot redirect an action.
	evalIn(t, b, `window.__dbSnap={k:99,els:new Array(50).fill(document.body)}`)
	mustRun(t, b, fmt.Sprintf(`[{"op":"click","id":"%s"},{"op":"wait","text":"real clicked"}]`, idOf(t, s.Text, "Real button")))
}
