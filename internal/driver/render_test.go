package driver

import (
	"encoding/json"
	"strings"
	"testing"
)

// renderWalk renders a walk result given as walk.js's JSON, in both modes,
// the way a snapshot does (no size bound).
func renderWalk(t *testing.T, js string) (full, interactive string) {
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
	return r.full(1<<20, 0).text, r.interactive(1<<20, 0).text
}

// TestRenderModes: the full rendering indents by depth and says a
// heading's level and where links go; the interactive listing is flat, each
// element after its heading or landmark, without levels or link targets
// except for a link with no name, whose target is all that tells it apart.
func TestRenderModes(t *testing.T) {
	for _, tc := range []struct {
		name, walk, full, interactive string
	}{
		{
			name: "section of links",
			walk: `{"u":"http://h.test/docs/a.html","c":[{"r":"main","i":1,"c":[
				{"r":"heading","n":"Functions","lv":2,"i":2},
				{"r":"list","i":3,"c":[
					{"r":"listitem","i":4,"c":[{"r":"link","n":"map","i":5,"h":"http://h.test/docs/map.html#x"}]},
					{"r":"listitem","i":6,"c":[{"r":"link","n":"here","i":7,"h":"http://h.test/docs/a.html#top"}]},
					{"r":"listitem","i":8,"c":[{"r":"link","i":9,"h":"https://other.test/p?q=secret"}]}]}]}]}`,
			full: "[1] main\n" +
				"  [2] heading \"Functions\" level=2\n" +
				"  [3] list\n" +
				"    [4] link \"map\" -> /docs/map.html\n" +
				"    [5] link \"here\"\n" +
				"    [6] link -> https://other.test/p?q=\n",
			interactive: "[2] heading \"Functions\"\n" +
				"[4] link \"map\"\n" +
				"[5] \"here\"\n" + // a link, as the line above says
				"[6] link -> https://other.test/p?q=\n",
		},
		{
			name: "form in a landmark",
			walk: `{"u":"http://h.test/f","c":[{"r":"form","n":"Sign up","i":1,"c":[
				{"r":"textbox","n":"Email","i":2,"f":["required"]},
				{"r":"checkbox","n":"I agree","i":3,"ck":"false"},
				{"r":"button","n":"Go","i":4,"v":"Go"}]},
				{"r":"link","n":"Terms","i":5,"h":"http://h.test/terms?x=1"}]}`,
			full: "[1] form \"Sign up\"\n" +
				"  [2] textbox \"Email\" required\n" +
				"  [3] checkbox \"I agree\" checked=false\n" +
				"  [4] button \"Go\"\n" +
				"[5] link \"Terms\" -> /terms?x=\n",
			interactive: "[1] form \"Sign up\"\n" +
				"[2] textbox \"Email\" required\n" +
				"[3] checkbox \"I agree\" checked=false\n" +
				"[4] button \"Go\"\n" +
				"[5] link \"Terms\"\n",
		},
		{
			// An unnamed form under a heading says nothing the heading
			// does not: the heading heads its fields. Navigation, the
			// footer and a dialog head theirs, named or not, so the footer's
			// links do not read as part of "Orders".
			name: "unnamed landmarks",
			walk: `{"u":"http://h.test/f","c":[
				{"r":"navigation","i":1,"c":[{"r":"link","n":"Home","i":2,"h":"http://h.test/"}]},
				{"r":"main","i":3,"c":[
					{"r":"heading","n":"Sign up","lv":1,"i":4},
					{"r":"form","i":5,"c":[{"r":"textbox","n":"Email","i":6}]},
					{"r":"dialog","i":7,"c":[{"r":"button","n":"Close","i":8}]},
					{"r":"heading","n":"Orders","lv":2,"i":9},
					{"r":"link","n":"Browse","i":10,"h":"http://h.test/o"}]},
				{"r":"contentinfo","i":11,"c":[{"r":"link","n":"Privacy","i":12,"h":"http://h.test/p"}]}]}`,
			full: "[1] navigation\n" +
				"  [2] link \"Home\" -> /\n" +
				"[3] main\n" +
				"  [4] heading \"Sign up\" level=1\n" +
				"  [5] form\n" +
				"    [6] textbox \"Email\"\n" +
				"  [7] dialog\n" +
				"    [8] button \"Close\"\n" +
				"  [9] heading \"Orders\" level=2\n" +
				"  [10] link \"Browse\" -> /o\n" +
				"[11] contentinfo\n" +
				"  [12] link \"Privacy\" -> /p\n",
			interactive: "[1] navigation\n" +
				"[2] link \"Home\"\n" +
				"[4] heading \"Sign up\"\n" +
				"[6] textbox \"Email\"\n" +
				"[7] dialog\n" +
				"[8] button \"Close\"\n" +
				"[9] heading \"Orders\"\n" +
				"[10] link \"Browse\"\n" +
				"[11] contentinfo\n" +
				"[12] link \"Privacy\"\n",
		},
		{
			// Five "Source" links are one line, where the first is; a run
			// of links says "link" once; a summary around a method's
			// heading is listed under it, without the name it repeats.
			name: "repeats fold",
			walk: `{"u":"http://h.test/a.html","c":[{"r":"heading","n":"Methods","lv":2,"i":1},
				{"r":"DisclosureTriangle","n":"Source fn f1()","i":10,"ex":"true","c":[{"r":"link","n":"Source","i":11,"h":"http://h.test/src.html#1"},{"r":"heading","n":"fn f1()","lv":3,"i":12},{"r":"link","n":"f1","i":13,"h":"http://h.test/f1.html"}]},
				{"r":"DisclosureTriangle","n":"Source fn f2()","i":14,"ex":"true","c":[{"r":"link","n":"Source","i":15,"h":"http://h.test/src.html#2"},{"r":"heading","n":"fn f2()","lv":3,"i":16},{"r":"link","n":"f2","i":17,"h":"http://h.test/f2.html"}]},
				{"r":"DisclosureTriangle","n":"Source fn f3()","i":18,"ex":"true","c":[{"r":"link","n":"Source","i":19,"h":"http://h.test/src.html#3"},{"r":"heading","n":"fn f3()","lv":3,"i":20},{"r":"link","n":"f3","i":21,"h":"http://h.test/f3.html"}]},
				{"r":"DisclosureTriangle","n":"Source fn f4()","i":22,"ex":"true","c":[{"r":"link","n":"Source","i":23,"h":"http://h.test/src.html#4"},{"r":"heading","n":"fn f4()","lv":3,"i":24},{"r":"link","n":"f4","i":25,"h":"http://h.test/f4.html"}]},
				{"r":"DisclosureTriangle","n":"Source fn f5()","i":26,"ex":"true","c":[{"r":"link","n":"Source","i":27,"h":"http://h.test/src.html#5"},{"r":"heading","n":"fn f5()","lv":3,"i":28},{"r":"link","n":"f5","i":29,"h":"http://h.test/f5.html"}]}]}`,
			interactive: "[4] heading \"fn f1()\"\n" +
				"[2] DisclosureTriangle expanded\n" +
				"[3] link \"Source\" (5 on the page; find \"Source\" lists them)\n" +
				"[5] \"f1\"\n" +
				"[8] heading \"fn f2()\"\n" +
				"[6] DisclosureTriangle expanded\n" +
				"[9] link \"f2\"\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			full, inter := renderWalk(t, tc.walk)
			if tc.full == "" {
				// Only the interactive listing is in question.
				full, inter = tc.full, strings.Join(strings.SplitAfter(inter, "\n")[:min(7, strings.Count(inter, "\n"))], "")
			}
			if full != tc.full {
				t.Errorf("full:\n%s\nwant:\n%s", full, tc.full)
			}
			if inter != tc.interactive {
				t.Errorf("interactive:\n%s\nwant:\n%s", inter, tc.interactive)
			}
		})
	}
}

// TestSays: a summary names the heading inside it when it holds the
// heading's name, also when both were cut at the same length.
func TestSays(t *testing.T) {
	long := strings.Repeat("pub fn splice<R, I>(&mut self) ", 6)
	for _, tc := range []struct {
		name, heading string
		want          bool
	}{
		{"1.0.0 · Source pub fn get(&self)", "pub fn get(&self)", true},
		{("Source " + long)[:150] + "…", long[:150] + "…", true},
		{"Source pub fn get(&self)", "pub fn set(&self)", false},
		{"Source pub fn…", "pub fn get(&self)", false},
	} {
		if got := says(tc.name, tc.heading); got != tc.want {
			t.Errorf("says(%q, %q) = %v", tc.name, tc.heading, got)
		}
	}
}
