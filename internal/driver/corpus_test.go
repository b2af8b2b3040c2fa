package driver

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/durable-browser/durable-browser/test/tokencount"
)

// TestSnapshotCorpus snapshots real documentation pages (testdata/corpus,
// see its README) whole, in both modes, and logs their sizes in characters:
// the figures in docs/benchmarks.md. It fails when a page's rendering grows
// past its recorded ceiling or past 0.8x of agent-browser's on that page,
// when the interactive renderings of all pages together are over 0.6x of
// agent-browser's (issue 30), or when a page lists fewer actionable
// elements than agent-browser's snapshot -i does or than the page shows
// links and controls.
// DURABLE_BROWSER_CORPUS_OUT=dir writes the renderings there
// (scripts/peer-snapshot-sizes.sh compares them with agent-browser's).
func TestSnapshotCorpus(t *testing.T) {
	dir := filepath.Join("testdata", "corpus")
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	files, _ := filepath.Glob(filepath.Join(dir, "*.html"))
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatal("no corpus pages")
	}
	var ours, theirs int
	b := attach(t, Options{MaxSnapshotChars: 10_000_000})
	for _, f := range files {
		name := filepath.Base(f)
		gotoPage(t, b, srv.URL+"/"+name)
		full := snap(t, b, SnapshotOptions{})
		inter := snap(t, b, SnapshotOptions{Mode: "interactive"})
		// What a person can act on: visible links with an href, and controls.
		visible := evalIn(t, b, `String([...document.querySelectorAll("a[href],button,input:not([type=hidden]),select,textarea,summary")].filter(e=>e.checkVisibility({checkVisibilityCSS:true,visibilityProperty:true})).length)`)
		nf, ni := utf8.RuneCountInString(full.Text), utf8.RuneCountInString(inter.Text)
		t.Logf("%-28s full %7d chars %6d lines | interactive %7d chars, %5d elements (page has %s visible links and controls)",
			name, nf, strings.Count(full.Text, "\n"), ni, inter.Interactive, visible)
		if dir := os.Getenv("DURABLE_BROWSER_CORPUS_OUT"); dir != "" {
			for mode, text := range map[string]string{"full": full.Text, "interactive": inter.Text} {
				if err := os.WriteFile(filepath.Join(dir, strings.TrimSuffix(name, ".html")+"."+mode+".txt"), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		// The first answer at the default budget (about 4,000 tokens): the
		// page, or its outline, within the budget in o200k tokens.
		for _, mode := range []string{"full", "interactive"} {
			first := snap(t, b, SnapshotOptions{Mode: mode, Budget: 4000})
			n, err := tokencount.O200K(first.Text + first.Cut)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%-28s first answer, %-11s %6d characters, %5d o200k tokens (outline %v)", name, mode, utf8.RuneCountInString(first.Text+first.Cut), n, strings.Contains(first.Cut, "an outline"))
			if n > 4000 {
				t.Errorf("%s: the first %s answer is %d tokens, over the budget of 4,000", name, mode, n)
			}
			if dir := os.Getenv("DURABLE_BROWSER_CORPUS_OUT"); dir != "" {
				if err := os.WriteFile(filepath.Join(dir, strings.TrimSuffix(name, ".html")+".first-"+mode+".txt"), []byte(first.Text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		if full.Truncated || inter.Truncated {
			t.Errorf("%s: cut at 10M characters: %s %s", name, full.Cut, inter.Cut)
		}
		if ceiling, ok := corpusCeiling[name]; ok && (nf > ceiling[0] || ni > ceiling[1]) {
			t.Errorf("%s: full %d / interactive %d characters, over the ceiling %v", name, nf, ni, ceiling)
		}
		acts := countActionable(inter.Text)
		if dir := os.Getenv("DURABLE_BROWSER_CORPUS_OUT"); dir != "" {
			if err := os.WriteFile(filepath.Join(dir, strings.TrimSuffix(name, ".html")+".actionable"), []byte(strconv.Itoa(acts)+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		peer, ok := agentBrowser[name]
		switch {
		case !ok:
			t.Errorf("%s: no agent-browser size recorded", name)
			continue
		case (nf*10 > peer.full*8 && !peer.fullOver) || ni*10 > peer.interactive*8:
			t.Errorf("%s: full %d / interactive %d characters, over 0.8x of agent-browser's %+v", name, nf, ni, peer)
		case acts < peer.actionable:
			t.Errorf("%s: the interactive snapshot lists %d actionable elements, agent-browser's %d", name, acts, peer.actionable)
		}
		ours, theirs = ours+ni, theirs+peer.interactive
		if acts < atoi(visible) {
			t.Errorf("%s: interactive snapshot lists %d actionable elements for %s visible links and controls", name, acts, visible)
		}
	}
	t.Logf("interactive, all pages: %d characters, agent-browser's %d (%.2fx)", ours, theirs, float64(ours)/float64(max(theirs, 1)))
	if ours*10 > theirs*6 {
		t.Errorf("interactive renderings total %d characters, over 0.6x of agent-browser's %d", ours, theirs)
	}
}

// corpusCeiling is each page's full and interactive size in characters,
// a little over what docs/benchmarks.md records, so growth is noticed.
var corpusCeiling = map[string][2]int{
	"APIfunctions.html":          {58700, 18000},
	"bootstrap-dashboard.html":   {1800, 560},
	"go_mem.html":                {21800, 480},
	"go_spec.html":               {222300, 17000},
	"libxslt-xsltInternals.html": {62600, 15100},
	"node-cli.html":              {111000, 19000},
	"python-policy.html":         {42600, 3500},
	"rust-book-ownership.html":   {35800, 6400},
	"rustdoc-VecDeque.html":      {186000, 32000},
	"rustdoc-std-all.html":       {149000, 60500},
	"underscore.html":            {119900, 5500},
}

// peerSize is agent-browser 0.41.2's snapshot and snapshot -i of a page in
// characters, and the actionable elements its snapshot -i lists (refs of
// interactive roles, or marked clickable), from scripts/peer-snapshot-sizes.sh
// (docs/benchmarks.md). fullOver marks a page whose full rendering is over
// 0.8x of agent-browser's, which docs/benchmarks.md says why.
type peerSize struct {
	full, interactive, actionable int
	fullOver                      bool
}

// agentBrowser is each corpus page's peerSize: issue 14's and 30's target
// is at most 0.8x of each size (interactive only on a fullOver page), and at
// least its actionable elements.
var agentBrowser = map[string]peerSize{
	"APIfunctions.html":          {full: 81726, interactive: 26331, actionable: 558},
	"bootstrap-dashboard.html":   {full: 4510, interactive: 3129, actionable: 18},
	"go_mem.html":                {full: 33548, interactive: 1332, actionable: 11},
	"go_spec.html":               {full: 376118, interactive: 32209, actionable: 715},
	"libxslt-xsltInternals.html": {full: 117872, interactive: 41473, actionable: 513},
	"node-cli.html":              {full: 256947, interactive: 36864, actionable: 694},
	"python-policy.html":         {full: 88311, interactive: 7896, actionable: 127},
	"rust-book-ownership.html":   {full: 55974, interactive: 9310, actionable: 163},
	"rustdoc-VecDeque.html":      {full: 251636, interactive: 53458, actionable: 1066},
	"rustdoc-std-all.html":       {full: 165419, interactive: 85182, actionable: 2048, fullOver: true},
	"underscore.html":            {full: 151861, interactive: 23497, actionable: 439},
}

// countActionable counts the actionable elements an interactive listing
// shows: its element lines (not the headings and landmarks that head
// them, unless marked clickable), a folded line counting as the elements it
// stands for.
func countActionable(text string) int {
	n := 0
	for _, l := range strings.Split(text, "\n") {
		m := actionLine.FindStringSubmatch(l)
		if m == nil || (headRoles[m[1]] && !strings.Contains(l, " clickable")) {
			continue
		}
		if f := foldedLine.FindStringSubmatch(l); f != nil {
			n += atoi(f[1])
			continue
		}
		n++
	}
	return n
}

var (
	actionLine = regexp.MustCompile(`^\[\d+\] (\w*)`)
	foldedLine = regexp.MustCompile(`\((\d+) on the page; find `)
	headRoles  = map[string]bool{"heading": true, "main": true, "navigation": true, "banner": true, "contentinfo": true,
		"complementary": true, "form": true, "search": true, "region": true, "dialog": true, "alertdialog": true,
		"alert": true, "status": true} // live regions: listed for their text, not acted on
)

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}
