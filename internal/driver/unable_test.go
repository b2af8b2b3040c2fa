package driver

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// unablePage has controls that cannot take an action, and controls near
// them that can. window.__ev counts the input the page was sent.
const unablePage = `<!doctype html><html><head><title>Unable</title></head><body><main>
<script>
window.__ev=0;
for (const t of ["pointerdown","mousedown","mouseup","click","keydown","focusin","beforeinput","input","change"])
  window.addEventListener(t, () => { window.__ev++ }, true);
function mark(s){ document.getElementById("out").textContent = s }
</script>
<p id="out">idle</p>
<button type="button" disabled onclick="mark('disabled clicked')">X</button>
<button type="button" aria-disabled="true" onclick="mark('aria clicked')">Aria off</button>
<input readonly value="ro" aria-label="RO field">
<textarea readonly aria-label="RO area">r</textarea>
<input disabled value="dis" aria-label="Dis field">
<label><input type="checkbox" disabled> Dis box</label>
<select disabled aria-label="Dis select"><option>a</option><option>b</option></select>
<fieldset disabled><legend>Group <button type="button" onclick="mark('legend clicked')">Legend button</button></legend>
<input aria-label="Fenced field"><button type="button" onclick="mark('fenced clicked')">Fenced button</button></fieldset>
<div aria-disabled="true"><button type="button" onclick="mark('inner clicked')">Inner button</button></div>
<div role="button" tabindex="0" aria-disabled="false" onclick="mark('card clicked')">Card</div>
<input aria-label="Open field" value="">
</main></body></html>`

func serveHTML(t *testing.T, page string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// A disabled control (its own disabled, a disabled fieldset's, or its own
// aria-disabled) or a read-only field refuses the action as invalid, naming
// the cause, and the page is sent nothing; controls merely inside such
// containers still act.
func TestDisabledAndReadOnlyRefused(t *testing.T) {
	b := attach(t, Options{})
	gotoPage(t, b, serveHTML(t, unablePage)+"/unable.html")
	s := snap(t, b, SnapshotOptions{})
	for _, c := range []struct {
		name, find, act, want string
	}{
		{"disabled button", `button "X"`, `{"op":"click","id":"%s"}`, `button "X" is disabled: the page does not accept it yet; snapshot to see what it needs first`},
		{"aria-disabled button", `button "Aria off"`, `{"op":"click","id":"%s"}`, `button "Aria off" is disabled: the page does not accept it yet`},
		{"read-only fill", `"RO field"`, `{"op":"fill","id":"%s","value":"new"}`, `textbox "RO field" is read-only: it cannot be filled`},
		{"read-only type", `"RO area"`, `{"op":"type","id":"%s","text":"new"}`, `"RO area" is read-only: it cannot be typed into`},
		{"disabled fill", `"Dis field"`, `{"op":"fill","id":"%s","value":"new"}`, `textbox "Dis field" is disabled`},
		{"disabled press", `"Dis field"`, `{"op":"press","id":"%s","key":"a"}`, `textbox "Dis field" is disabled`},
		{"disabled check", `checkbox "Dis box"`, `{"op":"check","id":"%s"}`, `checkbox "Dis box" is disabled`},
		{"disabled select", `"Dis select"`, `{"op":"select","id":"%s","values":["b"]}`, `"Dis select" is disabled`},
		{"fieldset field", `"Fenced field"`, `{"op":"fill","id":"%s","value":"new"}`, `textbox "Fenced field" is disabled`},
		{"fieldset button", `button "Fenced button"`, `{"op":"click","id":"%s"}`, `button "Fenced button" is disabled`},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := idOf(t, s.Text, c.find)
			act := fmt.Sprintf(c.act, id)
			acts, err := ParseActions(json.RawMessage("[" + act + "]"))
			if err != nil {
				t.Fatal(err)
			}
			before := evalIn(t, b, "window.__ev")
			res, err := b.Run(ctxT(t), acts, RunOptions{})
			var ae *ActionError
			if !errors.As(err, &ae) || ae.Kind != KindInvalid || !strings.Contains(ae.Reason, "["+id+"] ") || !strings.Contains(ae.Reason, c.want) {
				t.Fatalf("run %s: err %v, want an invalid action naming [%s] and %q", act, err, id, c.want)
			}
			if res == nil || res.Completed != 0 || len(res.Sent) != 0 {
				t.Fatalf("refused action counted or sent: %+v", res)
			}
			if got := evalIn(t, b, "window.__ev"); got != before {
				t.Fatalf("the page was sent input (%s events, %s before)", got, before)
			}
		})
	}
	if got := evalIn(t, b, `[document.getElementById("out").textContent, document.querySelector("[aria-label='RO field']").value, document.querySelector("[aria-label='Dis field']").value, String(document.querySelector("input[type=checkbox]").checked), document.querySelector("select").value].join("|")`); got != "idle|ro|dis|false|a" {
		t.Fatalf("a refused action changed the page: %s", got)
	}

	// Inside a disabled-looking container, or in a disabled fieldset's
	// first legend, a control is not disabled.
	for _, c := range []struct{ find, out string }{
		{`button "Inner button"`, "inner clicked"},
		{`"Card"`, "card clicked"},
		{`button "Legend button"`, "legend clicked"},
	} {
		id := idOf(t, s.Text, c.find)
		mustRun(t, b, fmt.Sprintf(`[{"op":"click","id":"%s"},{"op":"wait","text":%q}]`, id, c.out))
	}
	field := idOf(t, s.Text, `"Open field"`)
	mustRun(t, b, fmt.Sprintf(`[{"op":"fill","id":"%s","value":"typed"}]`, field))
	if got := evalIn(t, b, `document.querySelector("[aria-label='Open field']").value`); got != "typed" {
		t.Fatalf("open field = %q, want typed", got)
	}
}

// anchorPage jumps within itself, and changes its route by pushState.
const anchorPage = `<!doctype html><html><head><title>Anchors</title></head><body><main>
<a href="#sec2">Jump</a>
<button type="button" onclick="const o=document.getElementById('out'); o.textContent=String(Number(o.textContent)+1)">Count</button>
<button type="button" onclick="history.pushState({}, '', location.pathname + '#pushed')">Push fragment</button>
<button type="button" onclick="history.pushState({}, '', '/route2')">Route</button>
<a href="#/trash">Trash view</a>
<p id="out">0</p>
<div style="height:3000px"></div>
<h2 id="sec2">Section 2</h2>
</main></body></html>`

// A same-document navigation that only changes the fragment (an anchor
// link, or pushState to a fragment) keeps the snapshot's ids; a route
// change by pushState makes them stale, as before.
func TestAnchorKeepsIDs(t *testing.T) {
	b := attach(t, Options{})
	gotoPage(t, b, serveHTML(t, anchorPage)+"/anchors.html")
	s := snap(t, b, SnapshotOptions{})
	jump, count, push := idOf(t, s.Text, `link "Jump"`), idOf(t, s.Text, `button "Count"`), idOf(t, s.Text, `button "Push fragment"`)
	out := func() string { return evalIn(t, b, `document.getElementById("out").textContent`) }

	res := mustRun(t, b, fmt.Sprintf(`[{"op":"click","id":"%s"},{"op":"click","id":"%s"}]`, jump, count))
	if res.Completed != 2 || out() != "1" {
		t.Fatalf("jump then count: %+v, out %s", res, out())
	}
	if loc := evalIn(t, b, "location.hash"); loc != "#sec2" {
		t.Fatalf("the link did not jump: hash %q", loc)
	}
	// A later batch with the same snapshot's ids.
	mustRun(t, b, fmt.Sprintf(`[{"op":"click","id":"%s"},{"op":"click","id":"%s"},{"op":"click","id":"%s"}]`, count, push, count))
	if out() != "3" {
		t.Fatalf("count after the jump and a fragment push: %s", out())
	}
	// An observed jump is the same page: its changes, not the whole page.
	acts, _ := ParseActions(json.RawMessage(fmt.Sprintf(`[{"op":"click","id":"%s"}]`, jump)))
	res, err := b.Run(ctxT(t), acts, RunOptions{Observe: "full"})
	if err != nil || res.Observed == nil || res.Observed.Changes == nil || res.Observed.Changes.Full {
		t.Fatalf("observed jump: err %v, %+v", err, res.Observed)
	}

	// A route change is a new page for ids, as docs/tools.md says.
	s = snap(t, b, SnapshotOptions{})
	count, route := idOf(t, s.Text, `button "Count"`), idOf(t, s.Text, `button "Route"`)
	mustRun(t, b, fmt.Sprintf(`[{"op":"click","id":"%s"}]`, route))
	acts, _ = ParseActions(json.RawMessage(fmt.Sprintf(`[{"op":"click","id":"%s"}]`, count)))
	_, err = b.Run(ctxT(t), acts, RunOptions{})
	var se *StaleError
	if !errors.As(err, &se) || out() != "3" {
		t.Fatalf("run after a route change: err %v, out %s; want *StaleError and no click", err, out())
	}

	// A hash route (#/trash) is a route too: a hash-routed app changes its
	// view by it, so the ids of the view before are gone.
	s = snap(t, b, SnapshotOptions{})
	count, trash := idOf(t, s.Text, `button "Count"`), idOf(t, s.Text, `"Trash view"`)
	acts, _ = ParseActions(json.RawMessage(fmt.Sprintf(`[{"op":"click","id":"%s"},{"op":"click","id":"%s"}]`, trash, count)))
	res, err = b.Run(ctxT(t), acts, RunOptions{})
	var ae *ActionError
	if !errors.As(err, &ae) || ae.Kind != KindStale || res.Completed != 1 || out() != "3" {
		t.Fatalf("a click after a hash route change: %+v %v, out %s; want the second action stale and no click", res, err, out())
	}
}
