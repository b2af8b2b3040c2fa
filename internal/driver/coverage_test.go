package driver

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// coveragePage holds what a documentation page like an mdBook chapter lets a
// person act on beyond links and form controls (issue 30, item 4): a
// heading and a div that show a pointer of their own, a link without href
// that does, a label standing for its hidden checkbox (the sidebar toggle),
// a copy button hidden until its code block is hovered, and a link named by
// its image's title. A toolbar that shows a pointer around its own button
// is not itself listed.
const coveragePage = `<!doctype html><html><head><title>Coverage</title><style>
.tool{cursor:pointer}
h1.top{cursor:pointer}
#nav-toggle{display:none}
pre{position:relative;padding:20px}
pre>.buttons{position:absolute;right:0;top:0;visibility:hidden}
pre:hover>.buttons{visibility:visible}
</style></head><body>
<h1 class="top">The Book</h1>
<label for="nav-toggle" class="tool" aria-label="Toggle menu">=</label><input type="checkbox" id="nav-toggle">
<div class="tool" id="chip">Filter: open</div>
<a class="tool" id="fold">&gt;</a>
<pre>let x = 5;<div class="buttons"><button id="copy" aria-label="Copy to clipboard">c</button></div></pre>
<a href="/next.html"><img src="/none.png" title="Next chapter" width="20" height="20"></a>
<div class="tool" id="bar"><button id="inside">Inside</button></div>
<script>
window.clicks = [];
for (const id of ["chip", "fold", "copy", "inside"]) {
  document.getElementById(id).addEventListener("click", () => clicks.push(id));
}
</script>
</body></html>`

func TestCoverageBeyondControls(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, coveragePage)
	}))
	t.Cleanup(srv.Close)
	b := attach(t, Options{})
	gotoPage(t, b, srv.URL+"/")
	s := snap(t, b, SnapshotOptions{Mode: "interactive"})
	for _, want := range []string{
		`heading "The Book" clickable`,
		`checkbox "Toggle menu" checked=false`,
		`clickable "Filter: open"`,
		`] ">"`, // a clickable too, as the line above says
		`button "Copy to clipboard" shown-on-hover`,
		`link "Next chapter"`,
		`button "Inside"`,
	} {
		idOf(t, s.Text, want)
	}
	if countActionable(s.Text) != 7 || strings.Count(s.Text, `heading "The Book"`) != 1 {
		t.Errorf("the toolbar around its button is listed, or the heading twice:\n%s", s.Text)
	}
	// Each acts: the hidden copy button after the pointer moves over its block.
	for _, c := range []struct{ line, id string }{
		{`button "Copy to clipboard"`, "copy"},
		{`clickable "Filter: open"`, "chip"},
		{`] ">"`, "fold"},
	} {
		mustRun(t, b, fmt.Sprintf(`[{"op":"click","id":%q}]`, idOf(t, s.Text, c.line)))
		if got := evalIn(t, b, `clicks.join(",")`); !strings.HasSuffix(got, c.id) {
			t.Errorf("click %s: clicks %q", c.line, got)
		}
	}
	mustRun(t, b, fmt.Sprintf(`[{"op":"click","id":%q}]`, idOf(t, s.Text, `checkbox "Toggle menu"`)))
	if s := snap(t, b, SnapshotOptions{Mode: "interactive"}); !strings.Contains(s.Text, `checkbox "Toggle menu" checked`+"\n") {
		t.Errorf("the label did not toggle its checkbox:\n%s", s.Text)
	}
}

// toastPage is a small app page: a Save button that says "Saved" in a
// status line, and a toast (role alert) with a title, a time, a Close
// button and its message, as Bootstrap writes one.
const toastPage = `<!doctype html><html><head><title>App</title></head><body>
<main><h1>Settings</h1><button id="save">Save</button><p role="status" id="st"></p></main>
<div role="alert" class="toast"><div><strong>Bootstrap</strong> <small>11 mins ago</small>
<button aria-label="Close">x</button></div><div>Hello, world! This is a toast message.</div></div>
<script>document.getElementById("save").onclick = () => { document.getElementById("st").textContent = "Saved" }</script>
</body></html>`

// A message a page shows (a toast, a status line) is read in the
// interactive listing, and its change in an interactive observation: a
// model that acts needs to see "Saved" or an error (issue 30). An empty
// status says nothing.
func TestInteractiveListsLiveMessages(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, toastPage)
	}))
	t.Cleanup(srv.Close)
	b := attach(t, Options{})
	gotoPage(t, b, srv.URL+"/")
	s := snap(t, b, SnapshotOptions{Mode: "interactive"})
	idOf(t, s.Text, `alert "Bootstrap 11 mins ago Hello, world! This is a toast message."`)
	idOf(t, s.Text, `button "Close"`)
	if strings.Contains(s.Text, "status") {
		t.Fatalf("an empty status is listed:\n%s", s.Text)
	}
	res := runObserveMode(t, b, `[{"op":"click","locator":{"role":"button","name":"Save"}}]`, "interactive")
	if !strings.Contains(res.Observed.Text, `+ [`) || !strings.Contains(res.Observed.Text, `status "Saved"`) {
		t.Fatalf("observed after Save: %+v\n%s", res.Observed.Changes, res.Observed.Text)
	}
}
