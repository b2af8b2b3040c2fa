package driver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/internal/states"
)

// A state read out of one browser and put into a fresh one (a Chrome of
// its own: its own cookie jar) signs it in: the cookies are there before
// the first page loads, and the origin's local and session storage on its
// first page. A key the page then deletes is not put back on the next
// load, and the marker is never exported.
func TestStateExportImport(t *testing.T) {
	ctx := ctxT(t)
	b1 := attachOwnChrome(t, Options{})
	gotoPage(t, b1, siteURL+"/")
	if _, err := b1.Eval(ctx, `() => { localStorage.setItem("k", "local-value"); sessionStorage.setItem("s", "session-value"); document.cookie = "c=cookie-value; path=/"; }`, "[]"); err != nil {
		t.Fatal(err)
	}
	// A page's cookie write reaches Chrome's cookie store on its own pipe,
	// after the script returns: export until it is there.
	var st states.State
	var cookie *states.Cookie
	for cookie == nil && ctx.Err() == nil {
		var err error
		if st, err = b1.ExportState(ctx); err != nil {
			t.Fatal(err)
		}
		for i, c := range st.Cookies {
			if c.Name == "c" {
				cookie = &st.Cookies[i]
			}
		}
	}
	if cookie == nil || cookie.Value != "cookie-value" || len(st.Origins) != 1 || st.Origins[0].Origin != siteURL ||
		st.Origins[0].Local["k"] != "local-value" || st.Origins[0].Session["s"] != "session-value" {
		t.Fatalf("exported %+v", st)
	}

	b2 := attachOwnChrome(t, Options{})
	if err := b2.ImportState(ctx, st); err != nil {
		t.Fatal(err)
	}
	gotoPage(t, b2, siteURL+"/")
	read := func(b *Browser) map[string]any {
		t.Helper()
		raw, err := b.Eval(ctx, `() => ({k: localStorage.getItem("k"), s: sessionStorage.getItem("s"), c: document.cookie})`, "[]")
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		return out
	}
	got := read(b2)
	if got["k"] != "local-value" || got["s"] != "session-value" || !strings.Contains(got["c"].(string), "c=cookie-value") {
		t.Fatalf("the fresh browser's page sees %v", got)
	}
	again, err := b2.ExportState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := again.Origins[0].Session[seededMark]; ok {
		t.Fatal("the seeding marker was exported")
	}
	if _, err := b2.Eval(ctx, `() => { localStorage.removeItem("k"); }`, "[]"); err != nil {
		t.Fatal(err)
	}
	gotoPage(t, b2, siteURL+"/")
	if got := read(b2); got["k"] != nil {
		t.Fatalf("a key the page deleted came back: %v", got)
	}
}
