package driver

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-rod/rod/lib/proto"
)

// Closing the session's only tab is refused, naming the ways out; the tab
// stays, and the session goes on.
func TestCloseLastTabRefused(t *testing.T) {
	b := attachOwnChrome(t, Options{})
	u := serveHTML(t, `<!doctype html><title>Only</title><p>the only tab</p>`)
	gotoPage(t, b, u+"/only.html")
	if n := b.openTabs(); n != 1 {
		t.Fatalf("%d open tabs, want the browser's one", n)
	}
	res, err := runErr(t, b, `[{"op":"close_tab"}]`)
	var ae *ActionError
	var last *LastTabError
	if !errors.As(err, &ae) || ae.Kind != KindInvalid || !errors.As(err, &last) || res.Completed != 0 {
		t.Fatalf("close_tab of the only tab: %v %+v, want it refused as invalid", err, res)
	}
	for _, want := range []string{"only tab", "goto another page", "browser_release"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("refusal %q does not say %q", err, want)
		}
	}
	if !strings.Contains(res.URL, "/only.html") {
		t.Fatalf("after the refusal the tab is at %q", res.URL)
	}
	if s := snap(t, b, SnapshotOptions{}); !strings.Contains(s.Text, "the only tab") {
		t.Fatalf("snapshot after the refusal: %+v", s)
	}
	gotoPage(t, b, u+"/again.html")
}

// A session whose last tab was closed from outside it (a person, the
// page's own window.close()) opens a blank tab in its place: the next
// snapshot answers, saying so, and a goto loads there.
func TestClosedLastTabReopened(t *testing.T) {
	b := attachOwnChrome(t, Options{})
	u := serveHTML(t, `<!doctype html><title>Page</title><button>Go on</button>`)
	gotoPage(t, b, u+"/page.html")
	s := snap(t, b, SnapshotOptions{})
	old, err := b.activeTab()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (proto.TargetCloseTarget{TargetID: old.id}).Call(b.client(ctxT(t), "")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the driver to see its tab closed", func() bool {
		_, err := b.activeTab()
		return errors.Is(err, ErrNoTab)
	})
	// An id of the closed tab's snapshot is stale, and says why.
	_, err = runErr(t, b, fmt.Sprintf(`[{"op":"click","id":%q}]`, idOf(t, s.Text, `button "Go on"`)))
	var se *StaleError
	if !errors.As(err, &se) || !strings.Contains(se.Reason, "tab was closed") {
		t.Fatalf("an id of the closed tab: %v", err)
	}
	got, err := b.Snapshot(ctxT(t), SnapshotOptions{})
	if err != nil {
		t.Fatalf("snapshot with the last tab closed: %v, want a new blank tab", err)
	}
	if got.URL != "about:blank" || !strings.Contains(got.Cut, "tab was closed") || !strings.Contains(got.Cut, "goto") {
		t.Fatalf("snapshot of the tab opened in place: url %q cut %q", got.URL, got.Cut)
	}
	if again := snap(t, b, SnapshotOptions{}); strings.Contains(again.Cut, "tab was closed") {
		t.Fatalf("the note outlives the first snapshot: %q", again.Cut)
	}
	res := mustRun(t, b, fmt.Sprintf(`[{"op":"goto","url":%q}]`, u+"/next.html"))
	if !strings.Contains(res.URL, "/next.html") || res.Title != "Page" {
		t.Fatalf("goto in the new tab: %+v", res)
	}
}

// bigButtons is 400 sections of 50 buttons (20,400 elements, some 41,000
// nodes: past a snapshot's walk); a click on a button says which.
func bigButtons() string {
	var sb strings.Builder
	sb.WriteString(`<!doctype html><title>Big</title><script>document.addEventListener("click",e=>{if(e.target.localName==="button")window.__clicked=e.target.textContent})</script><main>`)
	for i := 0; i < 400; i++ {
		fmt.Fprintf(&sb, "<section><h2>S%d</h2>", i)
		for j := 0; j < 50; j++ {
			fmt.Fprintf(&sb, "<button>B%d-%d</button>", i, j)
		}
		sb.WriteString("</section>")
	}
	sb.WriteString(`</main>`)
	return sb.String()
}

// Elements past the snapshot walk's bound are found, acted on by locator,
// and read by a scope on their section; a snapshot that stopped short says
// how to reach the rest.
func TestFindAndLocatorPastTheSnapshotBound(t *testing.T) {
	b := attach(t, Options{})
	gotoPage(t, b, serveHTML(t, bigButtons())+"/big.html")
	whole := snap(t, b, SnapshotOptions{})
	if !whole.Truncated || !strings.Contains(whole.Cut, "read only in part") || !strings.Contains(whole.Cut, "locators search it") {
		t.Fatalf("a snapshot cut by its walk's bound: %q", whole.Cut)
	}
	f := snap(t, b, SnapshotOptions{Find: "B399-49"})
	if !strings.Contains(f.Text, `button "B399-49"`) || strings.Contains(f.Cut, "read only in part") {
		t.Fatalf("find past the bound:\n%s\ncut %q", f.Text, f.Cut)
	}
	id := idOf(t, f.Text, `button "B399-49"`)
	mustRun(t, b, fmt.Sprintf(`[{"op":"hover","id":%q}]`, id))

	res := mustRun(t, b, `[{"op":"click","locator":{"role":"button","name":"B399-49"}}]`)
	if res.Completed != 1 || evalIn(t, b, "window.__clicked") != "B399-49" {
		t.Fatalf("locator past the bound clicked %q: %+v", evalIn(t, b, "window.__clicked"), res)
	}

	// The section of the last heading, read by its id.
	h := snap(t, b, SnapshotOptions{Role: "heading", Find: "/^S399$/"})
	sec := snap(t, b, SnapshotOptions{Scope: idOf(t, h.Text, `heading "S399"`)})
	if !strings.Contains(sec.Text, `button "B399-0"`) || !strings.Contains(sec.Text, `"B399-49"`) || strings.Contains(sec.Text, "B398-") {
		t.Fatalf("scope on a section past the bound:\n%s\ncut %q", sec.Text, sec.Cut)
	}
}

// deepPage holds a button nested past the walk's depth.
func deepPage() string {
	return `<!doctype html><title>Deep</title><main><button>Shallow</button><div id="deep">` +
		strings.Repeat("<div>", 100) + `<section aria-label="Deep part">` + strings.Repeat("<div>", 220) + `<button>Deep button</button>` +
		strings.Repeat("</div>", 220) + `</section>` + strings.Repeat("</div>", 100) + `</div></main>`
}

// What a walk did not read (here: nested past its depth) is never said to
// be absent: find and a locator say the page was read in part, and how to
// read the rest.
func TestPartReadSaidSo(t *testing.T) {
	b := attach(t, Options{})
	gotoPage(t, b, serveHTML(t, deepPage())+"/deep.html")
	f := snap(t, b, SnapshotOptions{Find: "Deep button"})
	if f.Text != "" || strings.Contains(f.Cut, "nothing on the page") || !strings.Contains(f.Cut, "nothing in the part of the page that was read matches") ||
		!strings.Contains(f.Cut, "nested over 300 deep were not read") {
		t.Fatalf("find of an element the walk did not reach: %q %q", f.Text, f.Cut)
	}
	_, err := runErr(t, b, `[{"op":"click","locator":{"role":"button","name":"Deep button"}}]`)
	var le *LocatorError
	if !errors.As(err, &le) || le.Found != 0 || !strings.Contains(err.Error(), "matches no visible element in the part of the page that was read") ||
		!strings.Contains(err.Error(), "a scope on an element around them") {
		t.Fatalf("locator of an element the walk did not reach: %v", err)
	}
	// A scope on an element around them reads them.
	reg := snap(t, b, SnapshotOptions{Role: "region"})
	if sec := snap(t, b, SnapshotOptions{Scope: idOf(t, reg.Text, `region "Deep part"`)}); !strings.Contains(sec.Text, `button "Deep button"`) || sec.Truncated {
		t.Fatalf("scope around the deep part:\n%s\ncut %q", sec.Text, sec.Cut)
	}
	// A page read whole still says nothing matches.
	if f := snap(t, b, SnapshotOptions{Find: "Shallow"}); !strings.Contains(f.Text, `button "Shallow"`) {
		t.Fatalf("find Shallow: %q", f.Text)
	}
	gotoPage(t, b, serveHTML(t, `<!doctype html><title>Small</title><button>A</button>`)+"/small.html")
	if f := snap(t, b, SnapshotOptions{Find: "Zzz"}); !strings.Contains(f.Cut, "nothing on the page matches") {
		t.Fatalf("find on a page read whole: %q", f.Cut)
	}
}

// Typing into a contenteditable goes after its text, as into a field;
// fill replaces its text.
func TestTypeIntoContentEditableAppends(t *testing.T) {
	b := attach(t, Options{})
	gotoPage(t, b, serveHTML(t, `<!doctype html><title>Edit</title><main>
<div contenteditable aria-label="Note">abc</div>
<div contenteditable aria-label="Rich"><p>one</p><p>two <b>bold</b></p></div>
<input aria-label="Field" value="hello"></main>`)+"/edit.html")
	mustRun(t, b, `[{"op":"type","locator":{"label":"Note"},"text":"Y"},{"op":"type","locator":{"label":"Field"},"text":"X"},{"op":"type","locator":{"label":"Rich"},"text":"Z"}]`)
	if got := evalIn(t, b, `document.querySelector("[aria-label=Note]").textContent+"|"+document.querySelector("input").value+"|"+document.querySelector("[aria-label=Rich]").textContent`); got != "abcY|helloX|onetwo boldZ" {
		t.Fatalf("typed: %q, want abcY|helloX|onetwo boldZ", got)
	}
	mustRun(t, b, `[{"op":"fill","locator":{"label":"Note"},"value":"new"}]`)
	if got := evalIn(t, b, `document.querySelector("[aria-label=Note]").textContent`); got != "new" {
		t.Fatalf("filled: %q, want new", got)
	}
}

// A goto the reach guard refuses answers where the tab then is, its error
// page under the refused address (never url ""), as the next snapshot
// does; the snapshot says it is the browser's error page, and why.
func TestRefusedGotoAnswersItsErrorPage(t *testing.T) {
	rs := newReachServers(t)
	p := *rs.policy
	p.SessionHosts = []string{"127.0.0.1"}
	b := attach(t, Options{Reach: &p})
	gotoPage(t, b, rs.a.URL+"/plain")
	refused := strings.Replace(rs.a.URL, "127.0.0.1", "localhost", 1) + "/x"
	acts, _ := ParseActions(json.RawMessage(fmt.Sprintf(`[{"op":"goto","url":%q}]`, refused)))
	res, err := b.Run(ctxT(t), acts, RunOptions{})
	var be *BlockedError
	if !errors.As(err, &be) || res == nil {
		t.Fatalf("goto %s: %v, want it refused", refused, err)
	}
	if res.URL != refused {
		t.Fatalf("refused goto answers url %q (title %q), want the error page's %q", res.URL, res.Title, refused)
	}
	s := snap(t, b, SnapshotOptions{})
	if s.URL != res.URL || s.Title != res.Title {
		t.Fatalf("snapshot at %q %q, the run answered %q %q", s.URL, s.Title, res.URL, res.Title)
	}
	for _, want := range []string{"the browser's own error page for " + refused, "reach policy refused it", "allow_hosts"} {
		if !strings.Contains(s.Cut, want) {
			t.Fatalf("snapshot of the error page: cut %q does not say %q", s.Cut, want)
		}
	}

	// A server that cannot be reached: the same, with Chrome's reason.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String() + "/down"
	ln.Close()
	acts, _ = ParseActions(json.RawMessage(fmt.Sprintf(`[{"op":"goto","url":%q}]`, down)))
	res, err = b.Run(ctxT(t), acts, RunOptions{})
	var ae *ActionError
	if !errors.As(err, &ae) || ae.Kind != KindNavigation || res.URL != down {
		t.Fatalf("goto %s: %v, url %q, want a failed navigation answering the error page's address", down, err, res.URL)
	}
	s = snap(t, b, SnapshotOptions{})
	if s.URL != down || !strings.Contains(s.Cut, "error page for "+down) || !strings.Contains(s.Cut, "ERR_CONNECTION_REFUSED") {
		t.Fatalf("snapshot of the error page: %q %q", s.URL, s.Cut)
	}
}

// A frame is an iframe, as lower case as every other role; a file input
// says it is one (browser_upload chooses its file) and which file it
// holds; a title escapes what names escape.
func TestFrameFileInputAndTitleShown(t *testing.T) {
	b := attach(t, Options{})
	u := serveHTML(t, "<!doctype html><title>Doc \u202egnp.exe</title><main><iframe title=\"Inner\" srcdoc=\"<button>In frame</button>\"></iframe>"+
		`<label>Doc <input type="file"></label><button>B `+"\u202e"+`x</button></main>`)
	gotoPage(t, b, u+"/shown.html")
	s := snap(t, b, SnapshotOptions{})
	for _, want := range []string{`] iframe "Inner"`, `] button "Doc" file`, `button "B \u202ex"`} {
		if !strings.Contains(s.Text, want) {
			t.Fatalf("snapshot lacks %s:\n%s", want, s.Text)
		}
	}
	if want := `Doc \u202egnp.exe`; s.Title != want {
		t.Fatalf("snapshot title %q, want %q", s.Title, want)
	}
	if res := mustRun(t, b, `[{"op":"wait","ms":1}]`); res.Title != s.Title {
		t.Fatalf("run title %q, snapshot's %q", res.Title, s.Title)
	}
	if got := b.Title(ctxT(t)); got != s.Title {
		t.Fatalf("Title() %q, snapshot's %q", got, s.Title)
	}
	f := filepath.Join(t.TempDir(), "report.pdf")
	if err := os.WriteFile(f, []byte("%PDF-1.4"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := b.Upload(ctxT(t), Target{ID: idOf(t, s.Text, `button "Doc" file`)}, f); err != nil {
		t.Fatal(err)
	}
	if s := snap(t, b, SnapshotOptions{}); !strings.Contains(s.Text, `button "Doc" file value="report.pdf"`) {
		t.Fatalf("file input after an upload:\n%s", s.Text)
	}
}

// escaped writes what strconv.Quote escapes as unprintable as Quote does,
// and nothing else: a title reads as a quoted name would.
func TestEscapedAsQuoted(t *testing.T) {
	for _, s := range []string{"plain", "B \u202ex", "zero\u200bwidth", "tab\there", "bom\ufeff", "nl\nx", "é ü 日本", "\u2028sep"} {
		if got, want := `"`+escaped(s)+`"`, strconv.Quote(s); got != want {
			t.Errorf("escaped(%q) = %s, Quote = %s", s, got, want)
		}
	}
	if got := escaped(`a "quoted" \ title`); got != `a "quoted" \ title` {
		t.Errorf("quotes and backslashes changed: %s", got)
	}
}
