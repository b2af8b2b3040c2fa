package driver

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// bigWalk is a walk of a reference page: a navigation of links, then a main
// with chapters (h2) of sections (h3), each with links, a field and a button.
func bigWalk(chapters, sections, links int) string {
	var main []map[string]any
	n := 100
	next := func() int { n++; return n }
	main = append(main, map[string]any{"r": "heading", "n": "Reference", "lv": 1, "i": next()})
	for c := 1; c <= chapters; c++ {
		main = append(main, map[string]any{"r": "heading", "n": fmt.Sprintf("Chapter %d", c), "lv": 2, "i": next()})
		for s := 1; s <= sections; s++ {
			main = append(main, map[string]any{"r": "heading", "n": fmt.Sprintf("Section %d.%d", c, s), "lv": 3, "i": next()})
			main = append(main, map[string]any{"r": "paragraph", "i": next(), "c": []map[string]any{{"t": fmt.Sprintf("Text of section %d.%d about widgets.", c, s)}}})
			for l := 1; l <= links; l++ {
				main = append(main, map[string]any{"r": "link", "n": fmt.Sprintf("Topic %d.%d.%d", c, s, l), "i": next(), "h": fmt.Sprintf("http://h.test/t/%d/%d/%d", c, s, l)})
			}
			main = append(main, map[string]any{"r": "textbox", "n": fmt.Sprintf("Note %d.%d", c, s), "i": next()})
			main = append(main, map[string]any{"r": "button", "n": fmt.Sprintf("Save %d.%d", c, s), "i": next()})
		}
	}
	var nav []map[string]any
	for l := 1; l <= 40; l++ {
		nav = append(nav, map[string]any{"r": "link", "n": fmt.Sprintf("Page %d", l), "i": l, "h": fmt.Sprintf("http://h.test/p/%d", l)})
	}
	walk := map[string]any{"u": "http://h.test/ref", "c": []map[string]any{
		{"r": "link", "n": "Skip to content", "i": 99, "h": "http://h.test/ref#main"},
		{"r": "navigation", "n": "Site", "i": 98, "c": nav},
		{"r": "main", "i": 97, "c": main},
	}}
	b, _ := json.Marshal(walk)
	return string(b)
}

func renderer0(t *testing.T, js string) *renderer {
	t.Helper()
	var res walkResult
	if err := json.Unmarshal([]byte(js), &res); err != nil {
		t.Fatal(err)
	}
	b := &Browser{o: Options{Redact: func(s string) string { return s }}}
	r := &renderer{b: b, pageURL: res.U, refs: map[int]ref{}, ids: newIDTable(""), ctxLine: -1, children: map[*snode]*frameDoc{}}
	d := &frameDoc{res: res}
	for _, n := range res.C {
		r.walk(n, d, 0, "", false)
	}
	return r
}

var (
	countsRe = regexp.MustCompile(`\): ((?:\d+ [A-Za-z]+(?:, )?)+)`)
	idRe     = regexp.MustCompile(`\[(\d+)\] (\w+)(?: "([^"]*)")?`)
)

// outlineCount adds up the actionable elements an outline's lines count.
func outlineCount(text string) int {
	total := 0
	for _, l := range strings.Split(text, "\n") {
		if m := regexp.MustCompile(`^\(outside[^:]*: ((?:\d+ [A-Za-z]+(?:, )?)+)`).FindStringSubmatch(l); m != nil {
			total += sumParts(m[1])
		} else if m := countsRe.FindStringSubmatch(l); m != nil {
			total += sumParts(m[1])
		}
		if m := regexp.MustCompile(`^\.\.\. \d+ more regions holding (\d+) actionable`).FindStringSubmatch(l); m != nil {
			total += atoi(m[1])
		}
		if m := regexp.MustCompile(`\((\d+) actionable`).FindStringSubmatch(l); m != nil && !strings.HasPrefix(l, "...") {
			total += atoi(m[1])
		}
	}
	return total
}

func sumParts(s string) int {
	n := 0
	for _, p := range strings.Split(s, ", ") {
		n += atoi(strings.Fields(p)[0])
	}
	return n
}

// TestOutline: a page over its budget is answered with an outline within
// the budget, as deep as fits; every actionable element is counted in some
// region, and every id it shows is the one the full rendering shows for the
// same element.
func TestOutline(t *testing.T) {
	r := renderer0(t, bigWalk(12, 8, 6))
	fullText := r.full(1<<30, 0).text
	ids := map[string]string{} // id -> role "name" in the full rendering
	for _, m := range idRe.FindAllStringSubmatch(fullText, -1) {
		ids[m[1]] = m[2] + " " + m[3]
	}
	actions := r.actionable()
	for _, tc := range []struct {
		max               int
		subsections, more bool // sections folded into chapters; regions left for offset
	}{
		{max: 12000},
		{max: 1900, subsections: true},
		{max: 1000, subsections: true, more: true},
	} {
		t.Run(fmt.Sprint(tc.max), func(t *testing.T) {
			if !r.full(tc.max, 0).truncated {
				// The fixture must be over every case's budget, or the case
				// proves nothing about the outline.
				t.Fatalf("the fixture's full rendering fits in %d characters; make it bigger", tc.max)
			}
			pg := r.first(false, tc.max)
			if len(pg.text) > tc.max || !pg.truncated || pg.next != 1 || !strings.Contains(pg.cut, "scope") || !strings.Contains(pg.cut, "find") {
				t.Fatalf("outline of %d characters (budget %d), cut %q:\n%.2000s", len(pg.text), tc.max, pg.cut, pg.text)
			}
			if got := outlineCount(pg.text); got != actions {
				t.Errorf("outline counts %d actionable elements, the page has %d:\n%.3000s", got, actions, pg.text)
			}
			for _, m := range idRe.FindAllStringSubmatch(pg.text, -1) {
				if want := ids[m[1]]; want != m[2]+" "+m[3] && !strings.HasSuffix(m[3], "…") {
					t.Errorf("[%s] is %q in the outline, %q in the full rendering", m[1], m[2]+" "+m[3], want)
				}
			}
			if got := strings.Contains(pg.text, `heading "Section 3.2"`); got == tc.subsections {
				t.Errorf("sections shown %v, want %v:\n%.2000s", got, !tc.subsections, pg.text)
			}
			if got := strings.Contains(pg.text, "more regions holding"); got != tc.more || !strings.Contains(pg.text, `heading "Chapter 3"`) {
				t.Errorf("regions left for offset %v, want %v:\n%.2000s", got, tc.more, pg.text)
			}
			if !tc.more && !strings.Contains(pg.text, `navigation "Site" (41 lines): 40 link`) {
				t.Errorf("navigation not counted:\n%.1000s", pg.text)
			}
		})
	}
	// Interactive mode over the budget: the same outline.
	if a, b := r.first(true, 12000), r.first(false, 12000); a.text != b.text {
		t.Errorf("interactive and full outlines differ")
	}
	// Under the budget, the page itself.
	if pg := r.first(true, 1<<30); pg.truncated || pg.text != r.interactive(1<<30, 0).text {
		t.Errorf("a page under its budget is not listed whole")
	}
}

// TestSection: scope on a heading reads its section, up to the next
// heading of its level or higher, with the page's ids.
func TestSection(t *testing.T) {
	r := renderer0(t, bigWalk(3, 3, 2))
	full := r.full(1<<30, 0).text
	id := idOf(t, full, `heading "Chapter 2"`)
	s := r.section(atoi(id))
	if s == nil {
		t.Fatal("no section")
	}
	text := s.full(1<<30, 0).text
	if !strings.HasPrefix(text, "["+id+`] heading "Chapter 2" level=2`) || !strings.Contains(text, `heading "Section 2.3"`) ||
		strings.Contains(text, "Chapter 3") || strings.Contains(text, "Section 1.") {
		t.Errorf("section of Chapter 2:\n%s", text)
	}
	save := idOf(t, full, `button "Save 2.2"`)
	if !strings.Contains(text, "["+save+`] button "Save 2.2"`) {
		t.Errorf("the section's ids are not the page's: want [%s] for Save 2.2:\n%s", save, text)
	}
	sub := r.section(atoi(idOf(t, full, `heading "Section 2.2"`))).full(1<<30, 0).text
	if strings.Contains(sub, "Section 2.3") || strings.Contains(sub, "Section 2.1") || !strings.Contains(sub, `"Save 2.2"`) {
		t.Errorf("section of 2.2:\n%s", sub)
	}
	if interactive := s.interactive(1<<30, 0).text; strings.Contains(interactive, "Chapter 3") || !strings.Contains(interactive, "["+save+`] button "Save 2.2"`) {
		t.Errorf("interactive section:\n%s", interactive)
	}
}

// TestFind: elements by role and name, substring or regex, each under the
// region it sits in; text matches name the element holding them; a bad
// regex is refused naming the fix; many matches page.
func TestFind(t *testing.T) {
	r := renderer0(t, bigWalk(12, 8, 6))
	full := r.full(1<<30, 0).text
	find := func(role, f string, max, offset int) page {
		t.Helper()
		m, err := newMatcher(role, f)
		if err != nil {
			t.Fatal(err)
		}
		return r.find(m, max, offset)
	}
	pg := find("button", "save 7.3", 12000, 0)
	want := fmt.Sprintf("[%s] heading \"Section 7.3\" (in [%s] heading \"Chapter 7\")\n[%s] button \"Save 7.3\"\n",
		idOf(t, full, `heading "Section 7.3"`), idOf(t, full, `heading "Chapter 7"`), idOf(t, full, `button "Save 7.3"`))
	if pg.text != want || !strings.Contains(pg.cut, "1 matches") {
		t.Errorf("find button save 7.3:\n%s\nwant:\n%s\ncut %q", pg.text, want, pg.cut)
	}
	if pg := find("", "/^Save 1[01]\\.1$/", 12000, 0); strings.Count(pg.text, "button") != 2 {
		t.Errorf("regex:\n%s", pg.text)
	}
	if pg := find("", "about widgets", 12000, 0); !strings.Contains(pg.text, `"Text of section 1.1 about widgets."`) {
		t.Errorf("text:\n%.500s", pg.text)
	}
	if pg := find("link", "", 12000, 0); !strings.Contains(pg.text, `[`+idOf(t, full, `link "Page 1"`)+`] link "Page 1"`) {
		t.Errorf("role only:\n%.500s", pg.text)
	}
	if pg := find("checkbox", "", 12000, 0); pg.text != "" || !strings.Contains(pg.cut, "nothing on the page matches role checkbox") {
		t.Errorf("no match: %q %q", pg.text, pg.cut)
	}
	var fe *FindError
	if _, err := newMatcher("", "/(/"); !errors.As(err, &fe) || !strings.Contains(err.Error(), "between slashes") {
		t.Errorf("bad regex: %v", err)
	}
	// Paging: every link once, each page in the budget, a page that starts
	// inside a region repeats its header.
	seen, pages := 0, 0
	for off := 1; off != 0; pages++ {
		pg := find("link", "topic", 3000, off)
		if len(pg.text) > 3000 || pages > 1000 {
			t.Fatalf("page at %d: %d characters", off, len(pg.text))
		}
		if off > 1 && !strings.Contains(strings.SplitN(pg.text, "\n", 2)[0], "heading") {
			t.Errorf("page at %d starts without its region:\n%.300s", off, pg.text)
		}
		seen += strings.Count(pg.text, `link "Topic`)
		off = pg.next
	}
	if seen != 12*8*6 || pages < 2 {
		t.Errorf("%d pages held %d of %d links", pages, seen, 12*8*6)
	}
}
