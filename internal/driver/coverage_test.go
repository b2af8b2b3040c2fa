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
