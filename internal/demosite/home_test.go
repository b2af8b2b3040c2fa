package demosite

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

// Every page of the demo site is reachable from its home page, with a line
// on what to try there.
func TestEveryPageLinkedFromHome(t *testing.T) {
	home, err := fs.ReadFile(siteFS, "site/index.html")
	if err != nil {
		t.Fatal(err)
	}
	items := regexp.MustCompile(`<li><a href="/([^"]+)">[^<]+</a>: ([^<]{20,})`).FindAllStringSubmatch(string(home), -1)
	linked := map[string]bool{}
	for _, m := range items {
		linked[m[1]] = true
	}
	pages, err := fs.Glob(siteFS, "site/*.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		name := strings.TrimPrefix(p, "site/")
		switch name {
		case "index.html", "frame-inner.html", "about.html", "contact.html":
			// The home page itself, a frame's inner page (shown inside
			// iframes.html), and the pages its header links.
			continue
		}
		if !linked[name] {
			t.Errorf("%s is not linked from the home page with a line on what to try", name)
		}
	}
}
