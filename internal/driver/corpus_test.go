package driver

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestSnapshotCorpus snapshots real documentation pages (testdata/corpus,
// see its README) whole, in both modes, and logs their sizes: the figures in
// docs/benchmarks.md. It fails when a page's rendering grows past its
// recorded ceiling, or when a link or control the page shows has no id.
func TestSnapshotCorpus(t *testing.T) {
	dir := filepath.Join("testdata", "corpus")
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	files, _ := filepath.Glob(filepath.Join(dir, "*.html"))
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatal("no corpus pages")
	}
	b := attach(t, Options{MaxSnapshotChars: 10_000_000})
	for _, f := range files {
		name := filepath.Base(f)
		gotoPage(t, b, srv.URL+"/"+name)
		full := snap(t, b, SnapshotOptions{})
		inter := snap(t, b, SnapshotOptions{Mode: "interactive"})
		// What a person can act on: visible links with an href, and controls.
		visible := evalIn(t, b, `String([...document.querySelectorAll("a[href],button,input:not([type=hidden]),select,textarea,summary")].filter(e=>e.checkVisibility({checkVisibilityCSS:true,visibilityProperty:true})).length)`)
		t.Logf("%-28s full %7d chars %6d lines | interactive %7d chars, %5d elements (page has %s visible links and controls)",
			name, len(full.Text), strings.Count(full.Text, "\n"), len(inter.Text), inter.Interactive, visible)
		if full.Truncated || inter.Truncated {
			t.Errorf("%s: cut at 10M characters: %s %s", name, full.Cut, inter.Cut)
		}
		if ceiling, ok := corpusCeiling[name]; ok && (len(full.Text) > ceiling[0] || len(inter.Text) > ceiling[1]) {
			t.Errorf("%s: full %d / interactive %d characters, over the ceiling %v", name, len(full.Text), len(inter.Text), ceiling)
		}
		if n := countIDs(inter.Text); n < atoi(visible) {
			t.Errorf("%s: interactive snapshot has %d ids for %s visible links and controls", name, n, visible)
		}
	}
}

// corpusCeiling is each page's full and interactive size in characters,
// a little over what docs/benchmarks.md records, so growth is noticed.
var corpusCeiling = map[string][2]int{
	"APIfunctions.html":          {58700, 41100},
	"go_mem.html":                {21800, 800},
	"go_spec.html":               {222300, 26800},
	"libxslt-xsltInternals.html": {62600, 26800},
	"python-policy.html":         {42600, 8000},
	"underscore.html":            {119900, 26400},
}

func countIDs(text string) int {
	n := 0
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "[") {
			n++
		}
	}
	return n
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}
