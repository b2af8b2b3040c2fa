package driver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/contract"
)

func runObserve(t *testing.T, b *Browser, js string) *contract.RunResult {
	t.Helper()
	return runObserveMode(t, b, js, "full")
}

func runObserveMode(t *testing.T, b *Browser, js, mode string) *contract.RunResult {
	t.Helper()
	acts, err := ParseActions(json.RawMessage(js))
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.Run(ctxT(t), acts, RunOptions{Observe: mode})
	if err != nil {
		t.Fatalf("run %s: %v", js, err)
	}
	if res.Observed == nil || res.Observed.Changes == nil {
		t.Fatalf("run %s observed nothing: %+v", js, res)
	}
	return res
}

func TestSnapshotSinceOnAPageThatUpdatesInPlace(t *testing.T) {
	b := attach(t, Options{})
	gotoPage(t, b, siteURL+"/counter.html")
	s1 := snap(t, b, SnapshotOptions{})
	check, note := idOf(t, s1.Text, `button "Check"`), idOf(t, s1.Text, `textbox "Note"`)

	// A run that observes carries the change its click made, and nothing else.
	res := runObserve(t, b, `[{"op":"click","locator":{"role":"button","name":"Check"}}]`)
	o := res.Observed
	// (the button took focus, the status changed; nothing else).
	if o.Changes.Full || o.Changes.Changed != 2 || o.Changes.Added != 0 || o.Changes.Removed != 0 ||
		!strings.Contains(o.Text, `~ [`+check+`] button "Check" focused`) || !strings.Contains(o.Text, `status "Checked 1:"`) || strings.Contains(o.Text, "heading") {
		t.Fatalf("observed %+v:\n%s", o.Changes, o.Text)
	}
	if o.Epoch <= s1.Epoch {
		t.Fatalf("observation epoch %d, snapshot's %d", o.Epoch, s1.Epoch)
	}
	if o.Changes.Title || !o.Changes.SamePage {
		t.Fatalf("a click on the page of the last snapshot: %+v", o.Changes)
	}

	// since an earlier snapshot: only what changed since then, ids unchanged.
	mustRun(t, b, `[{"op":"fill","id":"`+note+`","value":"hi"},{"op":"click","id":"`+check+`"}]`)
	s2 := snap(t, b, SnapshotOptions{Since: s1.Epoch})
	if s2.Changes == nil || s2.Changes.Full || s2.Changes.Changed != 3 || !strings.Contains(s2.Text, "~ ["+note+`] textbox "Note" value="hi"`) ||
		!strings.Contains(s2.Text, `"Checked 2: hi"`) || strings.Contains(s2.Text, `heading`) {
		t.Fatalf("since %d: %+v\n%s", s1.Epoch, s2.Changes, s2.Text)
	}
	// Added and removed elements.
	evalIn(t, b, `(()=>{const x=document.createElement("button");x.id="extra";x.textContent="Extra";document.querySelector("main").append(x);return ""})()`)
	s3 := snap(t, b, SnapshotOptions{Since: s2.Epoch, Mode: "interactive"})
	if s3.Changes.Added != 1 || !strings.Contains(s3.Text, `+ [`) || !strings.Contains(s3.Text, `button "Extra"`) {
		t.Fatalf("added: %+v\n%s", s3.Changes, s3.Text)
	}
	extra := idOf(t, s3.Text, `button "Extra"`)
	evalIn(t, b, `document.getElementById("extra").remove(),""`)
	s4 := snap(t, b, SnapshotOptions{Since: s3.Epoch})
	if s4.Changes.Removed != 1 || !strings.Contains(s4.Text, "- ["+extra+`] button "Extra"`) {
		t.Fatalf("removed: %+v\n%s", s4.Changes, s4.Text)
	}
	// An epoch no longer kept: the whole page, saying why.
	s5 := snap(t, b, SnapshotOptions{Since: s1.Epoch})
	if !s5.Changes.Full || !strings.Contains(s5.Changes.Reason, "not kept") || !strings.Contains(s5.Text, `heading "Counter"`) {
		t.Fatalf("old epoch: %+v\n%s", s5.Changes, s5.Text)
	}
	// A title changed in place is said, in a run's changes and in since's:
	// a model reading the model form (contract.ForModel) is told the title
	// only then.
	res = runObserve(t, b, `[{"op":"click","id":"`+check+`"}]`)
	evalIn(t, b, `(document.title="Counter (2)","")`)
	st := snap(t, b, SnapshotOptions{Since: res.Observed.Epoch})
	if st.Changes == nil || st.Changes.Full || !st.Changes.Title || st.Title != "Counter (2)" {
		t.Fatalf("title changed since %d: %+v %q", res.Observed.Epoch, st.Changes, st.Title)
	}
	if res = runObserve(t, b, `[{"op":"click","id":"`+check+`"}]`); res.Observed.Changes.Title {
		t.Fatalf("the title stayed, the changes say it changed: %+v", res.Observed.Changes)
	}
	evalIn(t, b, `(()=>{const x=document.createElement("button");x.textContent="Rename";x.onclick=()=>{document.title="Renamed"};document.querySelector("main").append(x);return ""})()`)
	res = runObserve(t, b, `[{"op":"click","locator":{"role":"button","name":"Rename"}}]`)
	if o := res.Observed; o.Changes.Full || !o.Changes.Title || res.Title != "Renamed" {
		t.Fatalf("a click renamed the page, the run says %q and %+v", res.Title, o.Changes)
	}
}

func TestSnapshotSinceFallsBackAfterNavigation(t *testing.T) {
	b := attach(t, Options{})
	gotoPage(t, b, siteURL+"/counter.html")
	s1 := snap(t, b, SnapshotOptions{})
	res := runObserve(t, b, `[{"op":"goto","url":"`+siteURL+`/form.html"},{"op":"wait","load":true}]`)
	o := res.Observed
	if !o.Changes.Full || o.Changes.Reason != contract.ReasonNavigated || !strings.Contains(o.Text, `textbox "Email"`) {
		t.Fatalf("observed after navigation: %+v\n%s", o.Changes, o.Text)
	}
	// The observation is the latest snapshot: its ids act.
	mustRun(t, b, `[{"op":"fill","id":"`+idOf(t, o.Text, `textbox "Email"`)+`","value":"x@y.z"}]`)
	s2 := snap(t, b, SnapshotOptions{Since: s1.Epoch})
	if !s2.Changes.Full || !strings.Contains(s2.Changes.Reason, "navigated") || !strings.Contains(s2.Text, `button "Create account"`) {
		t.Fatalf("since across navigation: %+v\n%s", s2.Changes, s2.Text)
	}
	// In interactive mode, the new page is only what can be acted on, and
	// its ids act too.
	res = runObserveMode(t, b, `[{"op":"goto","url":"`+siteURL+`/counter.html"},{"op":"wait","load":true}]`, "interactive")
	o = res.Observed
	// (and the status line's message, which a model that acts reads).
	if !o.Changes.Full || !strings.Contains(o.Text, `button "Check"`) || !strings.Contains(o.Text, `status "Not checked yet"`) || strings.Contains(o.Text, "main") {
		t.Fatalf("observed interactive after navigation: %+v\n%s", o.Changes, o.Text)
	}
	res = runObserveMode(t, b, `[{"op":"fill","id":"`+idOf(t, o.Text, `textbox "Note"`)+`","value":"hi"}]`, "interactive")
	if o := res.Observed; o.Changes.Full || !strings.Contains(o.Text, `textbox "Note"`) || !strings.Contains(o.Text, `value="hi"`) {
		t.Fatalf("observed interactive change: %+v\n%s", o.Changes, o.Text)
	}
}

func TestIDsStayWithTheirElementsWhenThePageShifts(t *testing.T) {
	b := attach(t, Options{})
	gotoPage(t, b, siteURL+"/counter.html")
	s1 := snap(t, b, SnapshotOptions{})
	check := idOf(t, s1.Text, `button "Check"`)
	// An element inserted above the others: they keep their ids, it gets a new one.
	evalIn(t, b, `(()=>{const x=document.createElement("button");x.textContent="Top";document.querySelector("main").prepend(x);return ""})()`)
	s2 := snap(t, b, SnapshotOptions{Since: s1.Epoch})
	if s2.Changes.Full || s2.Changes.Added != 1 || s2.Changes.Changed != 0 || s2.Changes.Removed != 0 || !strings.Contains(s2.Text, `button "Top"`) {
		t.Fatalf("after an insert above: %+v\n%s", s2.Changes, s2.Text)
	}
	s3 := snap(t, b, SnapshotOptions{})
	if idOf(t, s3.Text, `button "Check"`) != check || idOf(t, s3.Text, `button "Top"`) == check {
		t.Fatalf("Check moved from [%s]:\n%s", check, s3.Text)
	}
	// A new document numbers from 1 again.
	gotoPage(t, b, siteURL+"/counter.html")
	if s4 := snap(t, b, SnapshotOptions{}); !strings.HasPrefix(strings.TrimSpace(s4.Text), "[1] ") {
		t.Fatalf("ids after reload:\n%s", s4.Text)
	}
}

// Chromium's own request for the tab icon is no failed request of the
// page's; the page's own 404s are.
func TestFailedRequestsLeaveOutTheFavicon(t *testing.T) {
	b := attach(t, Options{})
	gotoPage(t, b, siteURL+"/counter.html")
	// In order: the favicon's 404 arrives before the other's, so seeing the
	// other means the favicon's was read and left out.
	evalIn(t, b, `(()=>{const x=document.createElement("button");x.textContent="Fetch";x.onclick=()=>fetch("/favicon.ico").then(()=>fetch("/no-such-file.txt")).then(()=>document.body.append("fetched"));document.querySelector("main").append(x);return ""})()`)
	res := mustRun(t, b, `[{"op":"click","locator":{"role":"button","name":"Fetch"}},{"op":"wait","text":"fetched"}]`)
	got := strings.Join(res.FailedRequests, "\n")
	if !strings.Contains(got, "404 GET "+siteURL+"/no-such-file.txt") || strings.Contains(got, "favicon") {
		t.Fatalf("failed requests:\n%s", got)
	}
}

// A run's changes are on the page the caller last looked at only when it
// looked at that document: after a navigation it did not observe, they are
// not, and the result's URL is then news to it (contract.ForModel keeps it).
func TestRunChangesSamePage(t *testing.T) {
	b := attach(t, Options{})
	gotoPage(t, b, siteURL+"/counter.html")
	snap(t, b, SnapshotOptions{})
	mustRun(t, b, `[{"op":"goto","url":"`+siteURL+`/form.html"},{"op":"wait","load":true}]`)
	res := runObserve(t, b, `[{"op":"fill","locator":{"label":"Email"},"value":"a@b.c"}]`)
	if o := res.Observed; o.Changes.Full || o.Changes.SamePage {
		t.Fatalf("changes on a page never looked at: %+v", o.Changes)
	}
	// That observation is now the last look: the next run's changes are on it.
	res = runObserve(t, b, `[{"op":"fill","locator":{"label":"Email"},"value":"d@e.f"}]`)
	if o := res.Observed; o.Changes.Full || !o.Changes.SamePage {
		t.Fatalf("changes on the page of the last observation: %+v", o.Changes)
	}
}
