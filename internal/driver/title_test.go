package driver

import (
	"fmt"
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/internal/capture"
)

// A page without a <title> has none in any answer: Chrome's target info
// gives it its address (without http://, its query values and fragment
// whole) as a title, which the run, the read, the active tab's Title (a
// screenshot's, a cell's), a tab opened and the tab list answered while
// the snapshot said "". Every one of them now says "", and a page that
// has a title keeps it.
func TestUntitledPageTitleHoldsNoAddress(t *testing.T) {
	const query = "?mb=0&otp=884211&reset=rst_77hhAA91&access_token=tokABCDEF123456#frag_tok_1234"
	leaks := []string{"884211", "rst_77hhAA91", "tokABCDEF123456", "frag_tok_1234", "otp", "127.0.0.1"}
	base := serveHTML(t, `<!doctype html><p>no title here</p><a href="/opened`+strings.ReplaceAll(query, "&", "&amp;")+`" target="_blank">open</a>`)
	b := attach(t, Options{})
	check := func(where, title string) {
		t.Helper()
		for _, l := range leaks {
			if strings.Contains(title, l) {
				t.Errorf("%s: title %q holds %q, a part of the page's address", where, title, l)
			}
		}
		if title != "" {
			t.Errorf("%s: title %q, want \"\" (the page has none)", where, title)
		}
	}

	res := mustRun(t, b, fmt.Sprintf(`[{"op":"goto","url":%q},{"op":"wait","load":true}]`, base+"/gen/huge"+query))
	if !strings.Contains(res.URL, "884211") {
		t.Fatalf("run url %q: not at the page asked for", res.URL)
	}
	check("run", res.Title)
	s := snap(t, b, SnapshotOptions{})
	check("snapshot", s.Title)
	check("Title()", b.Title(ctxT(t)))
	for _, what := range []string{capture.ReadMarkdown, capture.ReadTitle} {
		r, err := b.Read(ctxT(t), ReadOptions{What: what})
		if err != nil {
			t.Fatal(err)
		}
		check("read "+what, r.Title)
		if what == capture.ReadTitle {
			check("read title's content", r.Content)
			check("read title's raw", string(r.Raw))
		}
	}

	res = mustRun(t, b, fmt.Sprintf(`[{"op":"click","id":"%s"},{"op":"wait","load":true}]`, idOf(t, s.Text, `link "open"`)))
	if len(res.TabsOpened) != 1 {
		t.Fatalf("tabs opened: %+v", res.TabsOpened)
	}
	check("tab opened", res.TabsOpened[0].Title)
	check("run in the opened tab", res.Title)
	tabs, err := b.Tabs(ctxT(t))
	if err != nil {
		t.Fatalf("tabs: %v", err)
	}
	// The package's tests share one Chrome, so the list may hold another
	// test's titled page: check this test's two.
	ours := 0
	for _, tb := range tabs {
		if strings.HasPrefix(tb.URL, base+"/") {
			ours++
			check("tab "+tb.ID, tb.Title)
		}
	}
	if ours != 2 {
		t.Fatalf("tabs at %s: %d of %+v, want the page and the one it opened", base, ours, tabs)
	}

	// A titled page keeps its title, a bare host's too.
	titled := serveHTML(t, `<!doctype html><title>Orders</title><p>x</p>`)
	if res := mustRun(t, b, fmt.Sprintf(`[{"op":"goto","url":%q},{"op":"wait","load":true}]`, titled+query)); res.Title != "Orders" {
		t.Fatalf("a titled page's run title %q, want Orders", res.Title)
	}
	if s := snap(t, b, SnapshotOptions{}); s.Title != "Orders" {
		t.Fatalf("a titled page's snapshot title %q, want Orders", s.Title)
	}
	res = mustRun(t, b, fmt.Sprintf(`[{"op":"goto","url":%q},{"op":"wait","load":true}]`, base+"/"))
	check("run at a bare host", res.Title)
}

// standIn knows the forms Chrome gives an address as a title: no http://,
// no userinfo, escapes decoded, a bare host without its slash, a long one
// cut in the middle; and a redacted copy. A title that is not the address
// is not one.
func TestTitleStandIn(t *testing.T) {
	long := "http://127.0.0.1:4/long?q=" + strings.Repeat("abcdefghij", 1000) + "&z=END"
	for _, tc := range []struct {
		url, title string
		want       bool
	}{
		{"http://127.0.0.1:4/", "127.0.0.1:4", true},
		{"http://127.0.0.1:4/a%20b/c?x=1&otp=884211#frag", "127.0.0.1:4/a b/c?x=1&otp=884211#frag", true},
		{"http://127.0.0.1:4/p?q=%E2%9C%93&s=a+b", "127.0.0.1:4/p?q=\u2713&s=a+b", true},
		{"http://user:pass@127.0.0.1:4/u?k=v", "127.0.0.1:4/u?k=v", true},
		{"http://localhost:4/Caps/%7Euser?a=%2F", "localhost:4/Caps/~user?a=%2F", true},
		{"https://example.com/x?token=abc", "https://example.com/x?token=abc", true},
		{"http://127.0.0.1:4/p?access_token=tok123456789#f", "127.0.0.1:4/p?access_token=[redacted]#f", true},
		{"http://xn--bcher-kva.example/", "b\u00fccher.example", true},
		{long, long[len("http://"):2000] + "\u2026" + long[len(long)-2000:], true},
		{"http://127.0.0.1:4/", "Orders", false},
		{"http://127.0.0.1:4/p?x=1", "127.0.0.1:4/q?x=1", false},
		{"http://127.0.0.1:4/p?x=1", "", false},
		{"", "Orders", false},
	} {
		if got := standIn(tc.url, tc.title); got != tc.want {
			t.Errorf("standIn(%.60q, %.60q) = %v, want %v", tc.url, tc.title, got, tc.want)
		}
	}
	if got := shownTitle("http://127.0.0.1:4/", "B \u202ex"); got != `B \u202ex` {
		t.Errorf("a title that is not the address is escaped: %q", got)
	}
}
