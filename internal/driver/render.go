package driver

// Rendering: a snapshot's collected frame documents (snapshot.go) become
// the text the model reads, a line per element or text, in full or
// interactive mode, paged and bounded.

import (
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

var interactiveRoles = map[string]bool{
	"button": true, "link": true, "textbox": true, "searchbox": true, "combobox": true, "listbox": true,
	"option": true, "checkbox": true, "radio": true, "switch": true, "slider": true, "spinbutton": true,
	"menuitem": true, "menuitemcheckbox": true, "menuitemradio": true, "tab": true, "treeitem": true,
	"DisclosureTriangle": true, "ColorWell": true, "Date": true, "DateTime": true, "InputTime": true,
	"clickable": true,
}

var landmarkRoles = map[string]bool{
	"main": true, "navigation": true, "banner": true, "contentinfo": true, "complementary": true,
	"form": true, "search": true, "region": true, "dialog": true, "alertdialog": true,
}

// line is one rendered element or text.
type line struct {
	depth       int
	id          int    // 0 for text and for elements shown without an id
	elem        bool   // an element (else a run of text, in name)
	role        string // elements only
	name        string
	level       int    // a heading's level, 0 if none
	tail        string // states, value, options
	href        string // a link's target as shown, "" when it says nothing (the page itself)
	interactive bool
	inMain      bool
	outline     bool   // heading or landmark
	dup         bool   // its name repeats its parent's: left out of the full rendering
	ctx         int    // index of the nearest heading/landmark line before it, -1 if none
	end         int    // index of the last line of its subtree
	live        string // a live region's (alert, status) text: the interactive listing shows it
}

type renderer struct {
	b        *Browser
	pageURL  string
	lines    []line
	refs     map[int]ref
	ids      *idTable
	children map[*snode]*frameDoc // iframe node -> child document
	ctxLine  int
	// partial: the walk did not read the whole page (its bound of nodes,
	// or its depth), so what it lacks may be in the rest.
	partial bool
}

// plainRoles are shown without an id: text containers nobody acts on or
// scopes into. Every actionable element, heading, landmark, list, table,
// image and frame keeps one.
var plainRoles = map[string]bool{
	"paragraph": true, "listitem": true, "cell": true, "row": true, "rowgroup": true, "strong": true,
	"emphasis": true, "code": true, "subscript": true, "superscript": true, "deletion": true, "insertion": true,
	"term": true, "definition": true, "time": true, "separator": true, "caption": true, "legend": true,
	"generic": true, "blockquote": true, "note": true, "columnheader": true, "rowheader": true, "gridcell": true,
}

// clean collapses whitespace, then redacts and bounds page text.
func (r *renderer) clean(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return r.b.clip(s, 150)
}

// walk renders node n at depth; parentName, the parent's name as the page
// has it (not redacted), lets text that repeats it be dropped: compared
// after redaction, a redacted name would let the pieces of a secret a page
// split across elements show on the lines below it.
func (r *renderer) walk(n *snode, d *frameDoc, depth int, parentName string, inMain bool) {
	if n == nil {
		return
	}
	if n.R == "" {
		raw := strings.Join(strings.Fields(n.T), " ")
		if raw == "" || (parentName != "" && strings.Contains(parentName, raw)) {
			return
		}
		name := r.clean(n.T)
		r.lines = append(r.lines, line{depth: depth, name: name, inMain: inMain, ctx: r.ctxLine, end: len(r.lines)})
		return
	}
	role := n.R
	name := r.clean(n.N)
	// An element of another role that shows its own pointer (cl) is acted on too.
	interactive := interactiveRoles[role] || n.Cl == 1

	var sb strings.Builder
	r.states(&sb, n, role)

	idx := len(r.lines)
	id := 0
	if interactive || !plainRoles[role] {
		id = r.ids.id(idKey{sess: d.sess, frame: d.frameID, doc: d.res.D, n: n.I})
		r.refs[id] = ref{sess: d.sess, frame: d, ctxID: d.ctxID, idx: n.I, role: role, name: name,
			ph: r.b.clip(n.Ph, 150), tid: r.b.clip(n.Ti, 150)}
	}
	outline := role == "heading" || landmarkRoles[role]
	if role == "main" {
		inMain = true
	}
	ln := line{depth: depth, id: id, elem: true, role: role, name: name, tail: sb.String(),
		interactive: interactive, inMain: inMain, outline: outline, ctx: r.ctxLine}
	if role == "heading" && n.Lv > 0 {
		ln.level = n.Lv
	}
	if role == "link" && n.H != "" && !r.samePage(n.H) {
		ln.href = r.linkTarget(n.H)
	}
	r.lines = append(r.lines, ln)
	savedCtx := r.ctxLine
	if outline {
		r.ctxLine = idx
	}
	pname := strings.Join(strings.Fields(n.N), " ")
	if pname == "" {
		pname = parentName
	}
	for _, c := range n.C {
		r.walk(c, d, depth+1, pname, inMain)
	}
	if cd := r.children[n]; cd != nil {
		for _, c := range cd.res.C {
			r.walk(c, cd, depth+1, pname, inMain)
		}
	}
	if landmarkRoles[role] {
		r.ctxLine = savedCtx
	}
	r.lines[idx].end = len(r.lines) - 1
	kids := r.childLines(idx)
	if name != "" && len(kids) == 1 && r.lines[kids[0]].elem && r.lines[kids[0]].name == name {
		// The only child repeats the name: say it once.
		k := kids[0]
		switch c := r.lines[k]; {
		case !outline && !interactive:
			r.lines[idx].name, name = "", "" // the child says it
		case !c.interactive && !c.outline && c.end == k && c.tail == "":
			r.drop(k, false)
			r.lines[idx].end = len(r.lines) - 1
			kids = nil
		default:
			r.lines[k].dup = true // named in interactive mode, where its parent may not show
		}
	}
	if role == "row" && len(kids) > 0 {
		// A row's name is its cells' text, which they show.
		r.lines[idx].name, name = "", ""
		if r.plainCells(kids) {
			r.fold(idx, kids, " | ")
			return
		}
	}
	bare := id == 0 && name == "" && r.lines[idx].tail == ""
	switch {
	case bare && len(kids) == 0:
		// An empty paragraph, a separator: nothing to say.
		r.lines = r.lines[:idx]
	case !interactive && name == "" && len(kids) > 0 && r.allText(kids):
		// A container holding only text: one line.
		r.fold(idx, kids, " ")
	case bare && len(kids) == 1 && r.lines[kids[0]].elem:
		// A wrapper (a list item, a cell) of one element: the element
		// takes its place.
		r.drop(idx, true)
		return
	}
	if liveRoles[role] && id > 0 && idx < len(r.lines) {
		r.lines[idx].live = r.liveText(idx)
	}
}

// liveRoles are the roles of the messages a page shows after an action (a
// toast, "Saved", an error): the interactive listing shows their text, as
// a model that acts needs to read it.
var liveRoles = map[string]bool{"alert": true, "status": true}

// liveText is the text of line idx's subtree that is not in an actionable
// element (a toast's title and message, not its Close button), bounded; a
// line without one says its name.
func (r *renderer) liveText(idx int) string {
	end := min(r.lines[idx].end, len(r.lines)-1)
	if end == idx {
		return r.lines[idx].name
	}
	var parts []string
	for j := idx + 1; j <= end; j++ {
		l := r.lines[j]
		if l.interactive {
			j = l.end // its own text names it
			continue
		}
		if l.name != "" && !l.dup {
			parts = append(parts, l.name)
		}
	}
	return clipRunes(strings.Join(parts, " "), 150)
}

// listed says whether the interactive listing shows line l: an actionable
// element, or a live region with text to say.
func (l line) listed() bool { return l.id > 0 && (l.interactive || l.live != "") }

// plainCells says whether lines are table cells holding only their text.
func (r *renderer) plainCells(idx []int) bool {
	for _, i := range idx {
		l := r.lines[i]
		if !l.elem || l.id != 0 || l.tail != "" || l.end != i || (l.role != "cell" && l.role != "columnheader" && l.role != "rowheader" && l.role != "gridcell") {
			return false
		}
	}
	return true
}

// childLines lists the lines directly under line idx.
func (r *renderer) childLines(idx int) []int {
	var out []int
	for i := idx + 1; i < len(r.lines); i = r.lines[i].end + 1 {
		out = append(out, i)
	}
	return out
}

func (r *renderer) allText(idx []int) bool {
	for _, i := range idx {
		if r.lines[i].elem {
			return false
		}
	}
	return true
}

// drop removes line i, the last subtree walked; with hoist its subtree
// moves up a level to take its place, else the line must have none. Only
// lines from i on move: the ones before it are finished subtrees or
// ancestors whose end is not set yet.
func (r *renderer) drop(i int, hoist bool) {
	end := r.lines[i].end
	r.lines = append(r.lines[:i], r.lines[i+1:]...)
	for j := i; j < len(r.lines); j++ {
		l := &r.lines[j]
		if hoist && j < end {
			l.depth--
		}
		if l.ctx > i { // a dropped line is never a heading or landmark
			l.ctx--
		}
		if l.end >= i {
			l.end--
		}
	}
	if r.ctxLine > i {
		r.ctxLine--
	}
}

// states appends the states that matter to an element line.
func (r *renderer) states(sb *strings.Builder, n *snode, role string) {
	switch n.Ck {
	case "":
	case "true":
		sb.WriteString(" checked")
	case "mixed":
		sb.WriteString(" checked=mixed")
	default:
		sb.WriteString(" checked=false")
	}
	switch n.Pr {
	case "":
	case "true":
		sb.WriteString(" pressed")
	default:
		sb.WriteString(" pressed=" + strconv.Quote(r.b.clip(n.Pr, 10)))
	}
	switch n.Ex {
	case "":
	case "true":
		sb.WriteString(" expanded")
	default:
		sb.WriteString(" expanded=false")
	}
	if n.Cl == 1 && role != "clickable" {
		sb.WriteString(" clickable")
	}
	if n.Hv == 1 {
		// Hidden until the pointer is over it; a click moves the pointer there first.
		sb.WriteString(" shown-on-hover")
	}
	for _, f := range n.F {
		switch f {
		case "file", "selected", "disabled", "required", "focused", "readonly", "invalid", "multiselectable":
			sb.WriteString(" " + f)
		}
	}
	if n.Pw == 1 {
		sb.WriteString(` value=[hidden]`)
	} else if n.V != nil && *n.V != "" && !(role == "button" && strings.Join(strings.Fields(*n.V), " ") == strings.Join(strings.Fields(n.N), " ")) {
		// A button's value that is its name (<input type=submit value=Go>) says nothing more.
		sb.WriteString(" value=" + strconv.Quote(r.b.clip(strings.TrimSpace(*n.V), 100)))
	}
	if n.Ns != nil {
		// A multiple select: every option selected (selected=[] for none),
		// as a single select's value= says its one.
		sel := make([]string, 0, len(n.Sl))
		for _, o := range n.Sl {
			sel = append(sel, strconv.Quote(r.b.clip(o, 60)))
		}
		more := ""
		if *n.Ns > len(sel) {
			more = fmt.Sprintf(",+%d more", *n.Ns-len(sel))
		}
		sb.WriteString(" selected=[" + strings.Join(sel, ",") + more + "]")
	}
	if len(n.O) > 0 {
		opts := make([]string, 0, len(n.O))
		for _, o := range n.O {
			opts = append(opts, strconv.Quote(r.b.clip(o, 60)))
		}
		more := ""
		if n.No > len(opts) {
			more = fmt.Sprintf(",+%d more", n.No-len(opts))
		}
		sb.WriteString(" options=[" + strings.Join(opts, ",") + more + "]")
	}
}

// samePage says whether a link leads to the page it is on (itself or a
// fragment of it): its target then says nothing, since fragments are not shown.
func (r *renderer) samePage(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	p, err := url.Parse(r.pageURL)
	if err != nil {
		return false
	}
	return u.Scheme == p.Scheme && u.Host == p.Host && u.EscapedPath() == p.EscapedPath() && u.RawQuery == p.RawQuery
}

// linkTarget shows a link without query values or fragment, relative to the
// page's origin when it shares it.
func (r *renderer) linkTarget(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "?"
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		if u.Scheme == "" {
			return r.b.clip(u.EscapedPath(), 100)
		}
		return u.Scheme + ":"
	}
	out := u.Scheme + "://" + u.Host + u.EscapedPath()
	if pu, err := url.Parse(r.pageURL); err == nil && pu.Scheme == u.Scheme && pu.Host == u.Host {
		out = u.EscapedPath()
		if out == "" {
			out = "/"
		}
	}
	if u.RawQuery != "" {
		q := u.Query()
		keys := make([]string, 0, len(q))
		for k := range q {
			keys = append(keys, url.QueryEscape(k)+"=")
		}
		sort.Strings(keys)
		out += "?" + strings.Join(keys, "&")
	}
	return r.b.clip(out, 150)
}

// shownTitle is the title the driver answers for a page at pageURL whose
// title Chrome reports as title: every title the driver answers (run,
// snapshot, read, the active tab's for a screenshot or a cell, tabs
// opened or listed) goes through it. A page with no <title> (or an empty
// one) has none: Chrome's target info stands its address in for it
// (standIn), query values and fragment and all, which no answer may carry
// (a URL is answered scrubbed), and document.title, which a snapshot
// reads, is "". Such a title is answered as "", whichever way it was
// read. Any other title is escaped.
func shownTitle(pageURL, title string) string {
	if standIn(pageURL, title) {
		return ""
	}
	return escaped(title)
}

// standIn says title is the page's address shown as a title: what Chrome
// reports for a page without one (its address formatted for display:
// without http:// and the userinfo, percent escapes decoded, a bare host
// without its slash, and over 4,096 characters cut in the middle with an
// ellipsis), or a title that copies the address. Such a title says nothing
// the address does not, so it is matched loosely: two addresses that differ
// only in query values or fragment are one (a redacted copy of the address
// is still a stand-in for it).
func standIn(pageURL, title string) bool {
	if title == "" || pageURL == "" {
		return false
	}
	t, u := shownAddress(title), shownAddress(pageURL)
	if t == u || addressShape(t) == addressShape(u) {
		return true
	}
	// Elided in the middle: what is left on either side is the address's.
	head, tail, cut := strings.Cut(t, "\u2026")
	return cut && len(head) >= 8 && strings.HasPrefix(u, head) && strings.HasSuffix(u, tail)
}

// shownAddress is an address as Chrome shows it for a title, near enough
// to compare: no scheme, no userinfo, percent escapes decoded, the host in
// ASCII (punycode) and lower case, no trailing slash.
func shownAddress(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, "://"); i > 0 && isScheme(s[:i]) {
		s = s[i+3:]
	}
	end := strings.IndexAny(s, "/?#")
	if end < 0 {
		end = len(s)
	}
	host, rest := s[:end], s[end:]
	if at := strings.LastIndex(host, "@"); at >= 0 {
		host = host[at+1:]
	}
	name, port := host, ""
	if i := strings.LastIndex(host, ":"); i >= 0 && !strings.HasSuffix(host, "]") {
		name, port = host[:i], host[i:]
	}
	if a, err := idna.Punycode.ToASCII(strings.ToLower(name)); err == nil {
		name = a
	}
	return strings.TrimSuffix(name+port+unescapedAll(rest), "/")
}

// unescapedAll decodes every well-formed percent escape in s and keeps
// the rest as it is.
func unescapedAll(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			v, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			sb.WriteByte(byte(v))
			i += 2
			continue
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// addressShape is a shownAddress without its fragment and with every
// query value left out, the names kept.
func addressShape(s string) string {
	s, _, _ = strings.Cut(s, "#")
	s, q, ok := strings.Cut(s, "?")
	if !ok {
		return s
	}
	parts := strings.FieldsFunc(q, func(r rune) bool { return r == '&' || r == ';' })
	for i, p := range parts {
		parts[i], _, _ = strings.Cut(p, "=")
	}
	return s + "?" + strings.Join(parts, "&")
}

func isScheme(s string) bool {
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && (r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.'):
		default:
			return false
		}
	}
	return s != ""
}

// escaped is s as a name in a line shows it (strconv.Quote), without the
// quotes: every character Quote escapes as unprintable (a bidi override
// such as U+202E, a zero-width or other format character, a control
// character) is written as its Go escape, \u202e, so no page makes its
// title read otherwise than it is. Quotes and backslashes stay as they
// are: a title is not quoted. Titles reach it through shownTitle (a
// read's, which capture hands back redacted, through standIn first).
func escaped(s string) string {
	plain := true
	for _, r := range s {
		if !strconv.IsPrint(r) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	var sb strings.Builder
	for _, r := range s {
		if strconv.IsPrint(r) {
			sb.WriteRune(r)
			continue
		}
		q := strconv.QuoteRune(r) // the escape Quote writes for r
		sb.WriteString(q[1 : len(q)-1])
	}
	return sb.String()
}

// render is the line as the full rendering (and a diff) shows it.
func (l line) render() string { return l.format(true) }

// format renders the line; full says everything. The interactive listing
// (full false) is flat, each element after the heading or landmark it falls
// under, so it leaves out what only helps reading: indentation, a heading's
// level, a link's target (unless the link has no name, when the target is
// what tells it apart). Full mode, scoped to a section, shows them.
func (l line) format(full bool) string {
	var sb strings.Builder
	for i := 0; full && i < l.depth; i++ {
		sb.WriteString("  ")
	}
	if l.id > 0 {
		sb.WriteString("[")
		sb.WriteString(strconv.Itoa(l.id))
		sb.WriteString("] ")
	}
	if !l.elem {
		sb.WriteString(strconv.Quote(l.name))
		return sb.String()
	}
	sb.WriteString(l.role)
	named := l.name != "" && (!l.dup || !full)
	if named {
		sb.WriteString(" ")
		sb.WriteString(strconv.Quote(l.name))
	}
	if full && l.level > 0 {
		sb.WriteString(" level=" + strconv.Itoa(l.level))
	}
	sb.WriteString(l.tail)
	if l.href != "" && (full || !named) {
		sb.WriteString(" -> " + l.href)
	}
	return sb.String()
}

// page is one rendering of a snapshot, bounded.
type page struct {
	text      string
	truncated bool   // lines were left out of this page
	cut       string // what was left out and how to see it
	next      int    // the offset that shows the next lines; 0 at the end
}

// sequence pages through rendered lines from offset (1 is the first line),
// at most max characters a page, at least one line. head, when set, gives
// a line to repeat above a page that starts inside its section.
func sequence(rendered []string, max, offset int, what string, head func(i int) string) page {
	start := offset - 1
	if start < 0 {
		start = 0
	}
	if start >= len(rendered) {
		if start == 0 {
			return page{}
		}
		return page{cut: fmt.Sprintf("offset %d is past the end (%d %s)", offset, len(rendered), what)}
	}
	var sb strings.Builder
	if head != nil && start > 0 {
		if h := head(start); h != "" {
			sb.WriteString(h)
			sb.WriteByte('\n')
		}
	}
	i := start
	for ; i < len(rendered) && (i == start || sb.Len()+len(rendered[i])+1 <= max); i++ {
		sb.WriteString(rendered[i])
		sb.WriteByte('\n')
	}
	pg := page{text: sb.String()}
	switch {
	case i < len(rendered):
		pg.truncated, pg.next = true, i+1
		pg.cut = fmt.Sprintf("%s %d-%d of %d shown, to stay under %d characters; see the next with offset=%d", what, start+1, i, len(rendered), max, i+1)
	case start > 0:
		pg.cut = fmt.Sprintf("%s %d-%d of %d shown (the end)", what, start+1, i, len(rendered))
	}
	return pg
}

// full renders every line. Over max characters without an offset it shows
// headings, landmarks and interactive elements first, then main content,
// then the rest, as many as fit; an offset pages through every line in order.
func (r *renderer) full(max, offset int) page {
	rendered := make([]string, len(r.lines))
	total := 0
	for i, l := range r.lines {
		rendered[i] = l.render()
		total += len(rendered[i]) + 1
	}
	if offset > 0 || total <= max {
		return sequence(rendered, max, offset, "lines", nil)
	}
	keep := make([]bool, len(r.lines))
	used := 0
	take := func(pred func(l line) bool) {
		for i, l := range r.lines {
			if keep[i] || !pred(l) || used+len(rendered[i])+1 > max {
				continue
			}
			keep[i] = true
			used += len(rendered[i]) + 1
		}
	}
	take(func(l line) bool { return l.outline })
	take(func(l line) bool { return l.interactive })
	take(func(l line) bool { return l.inMain })
	take(func(l line) bool { return true })
	var sb strings.Builder
	cut, cutActive := 0, 0
	for i, l := range r.lines {
		if keep[i] {
			sb.WriteString(rendered[i])
			sb.WriteByte('\n')
		} else {
			cut++
			if l.interactive {
				cutActive++
			}
		}
	}
	// Name the sections holding the most cut lines, to scope into.
	type sec struct{ id, n int }
	var secs []sec
	for i, l := range r.lines {
		if l.id == 0 || l.end-i < 3 || (!l.outline && l.depth > 2) {
			continue
		}
		n := 0
		for j := i; j <= l.end; j++ {
			if !keep[j] {
				n++
			}
		}
		if n > 0 {
			secs = append(secs, sec{l.id, n})
		}
	}
	sort.SliceStable(secs, func(i, j int) bool { return secs[i].n > secs[j].n })
	var hints []string
	for i := 0; i < len(secs) && i < 5; i++ {
		hints = append(hints, fmt.Sprintf(`scope "[%d]" (%d cut lines)`, secs[i].id, secs[i].n))
	}
	msg := fmt.Sprintf("showing %d of %d lines to stay under %d characters: headings and landmarks first, then interactive elements, then main content", len(r.lines)-cut, len(r.lines), max)
	if cutActive > 0 {
		msg += fmt.Sprintf(" (%d interactive elements did not fit; mode interactive lists them)", cutActive)
	}
	if len(hints) > 0 {
		msg += "; see a part with " + strings.Join(hints, ", ")
	}
	msg += "; or page through every line in order with offset=1"
	return page{text: sb.String(), truncated: true, cut: msg, next: 1}
}

// header is the context line an interactive listing shows for ctx: the
// nearest heading or landmark that says something. An unnamed main, form,
// region or search, under a heading, says nothing that heading does not
// (every page has them), so the heading stands in. Site chrome
// (navigation, banner, contentinfo, complementary) and dialogs always head
// their elements, named or not: in a flat list, a group without a header
// reads as part of the group before it.
func (r *renderer) header(ctx int) int {
	if ctx < 0 {
		return ctx
	}
	if l := r.lines[ctx]; l.name == "" && contentLandmarks[l.role] {
		if up := r.header(l.ctx); up >= 0 {
			return up
		}
	}
	return ctx
}

// contentLandmarks are the landmarks a heading before them may stand in for.
var contentLandmarks = map[string]bool{"main": true, "form": true, "region": true, "search": true}

// interactive lists actionable elements, each after its nearest heading or
// landmark (see header), one flat line each (see format), paged like full's
// offset pages. Two things make a long listing shorter without leaving
// anything out: a link or button whose role, name and states repeat on
// foldMin lines or more (hundreds of "Source" or "§" anchors, a "Copy"
// button on every code block) is listed once, where it
// first appears, with how many there are and how to list them all (find);
// and a line of the same role as the element line above it leaves the role
// out (a run of links says "link" once). An element that holds others
// shows at most containerName characters of its name, the lines after it
// saying the rest; one around a heading (a summary holding a method's
// signature) is listed under that heading, without the name it says.
func (r *renderer) interactive(max, offset int) page {
	same := map[string]int{}
	for _, l := range r.lines {
		if k := foldKey(l); k != "" {
			same[k]++
		}
	}
	listed := map[string]bool{}
	under := map[int]int{} // lines inside an element around a heading: that heading
	var rendered, alone []string
	var heads []int // for each rendered line, the index in rendered of its header line, or -1
	lastCtx, lastHead, lastLine, lastRole := -2, -1, -1, ""
	for i, l := range r.lines {
		if !l.listed() {
			continue
		}
		if !l.interactive {
			l.name = l.live
		}
		k := foldKey(l)
		folded := k != "" && same[k] >= foldMin
		if folded && listed[k] {
			continue
		}
		ctx := r.header(l.ctx)
		if o, ok := under[i]; ok {
			ctx = o
		}
		if h := r.innerHeading(i); h >= 0 {
			// An element around a heading (a summary holding a method's
			// signature) goes under that heading, with what comes before
			// the heading in it; the heading says its name.
			ctx = h
			for j := i + 1; j < h; j++ {
				under[j] = h
			}
			if says(l.name, r.lines[h].name) {
				l.name = ""
			}
		}
		if ctx != lastCtx {
			lastCtx, lastHead = ctx, -1
			switch {
			case ctx >= 0 && ctx == lastLine:
				// A heading one acts on (a pointer of its own) is listed already.
				lastHead = len(rendered) - 1
			case ctx >= 0:
				lastHead = len(rendered)
				rendered = append(rendered, r.lines[ctx].format(false))
				alone = append(alone, "")
				heads = append(heads, -1)
				lastRole = ""
			}
		}
		if l.interactive && l.end > i && r.holdsIDs(i) {
			l.name = clipRunes(l.name, containerName)
		}
		s := l.format(false)
		if folded {
			listed[k] = true
			s += fmt.Sprintf(" (%d on the page; find %s lists them)", same[k], strconv.Quote(l.name))
		}
		if l.role == lastRole && l.name != "" {
			rendered = append(rendered, l.ditto(s))
			alone = append(alone, s)
		} else {
			rendered = append(rendered, s)
			alone = append(alone, "")
		}
		heads = append(heads, lastHead)
		lastLine, lastRole = i, l.role
	}
	if start := offset - 1; start > 0 && start < len(rendered) && alone[start] != "" {
		// A page starts on a line that leaves its role to the line above.
		rendered = append([]string(nil), rendered...)
		rendered[start] = alone[start]
	}
	return sequence(rendered, max, offset, "lines", func(i int) string {
		if h := heads[i]; h >= 0 {
			return rendered[h]
		}
		return ""
	})
}

// foldMin is how many links or buttons of one name and state the
// interactive listing shows as one line.
const foldMin = 5

// containerName is how much of an actionable container's name the
// interactive listing shows.
const containerName = 60

// foldRoles are the roles whose repeats fold: what is only clicked (a
// field's value or a checkbox's state sets each apart).
var foldRoles = map[string]bool{"link": true, "button": true, "clickable": true}

// foldKey is what makes lines the same for the interactive listing's
// folding, or "" for a line that is never folded.
func foldKey(l line) string {
	if !l.interactive || l.id == 0 || !foldRoles[l.role] || l.name == "" {
		return ""
	}
	return l.name + "\x00" + l.tail
}

// says tells whether name says all a heading inside it does: it holds the
// heading's name, or, both cut at the same length (…), its start.
func says(name, heading string) bool {
	if strings.Contains(name, heading) {
		return true
	}
	h := strings.TrimSuffix(heading, "…")
	if h == heading || !strings.HasSuffix(name, "…") {
		return false
	}
	i := strings.Index(name, h[:min(len(h), 40)])
	return i >= 0 && strings.HasPrefix(h, strings.TrimSuffix(name[i:], "…"))
}

// innerHeading is the first heading with an id inside line i, or -1.
func (r *renderer) innerHeading(i int) int {
	for j := i + 1; j <= r.lines[i].end && j < len(r.lines); j++ {
		if r.lines[j].role == "heading" && r.lines[j].id > 0 {
			return j
		}
	}
	return -1
}

// holdsIDs says whether line i holds lines with ids.
func (r *renderer) holdsIDs(i int) bool {
	for j := i + 1; j <= r.lines[i].end && j < len(r.lines); j++ {
		if r.lines[j].id > 0 {
			return true
		}
	}
	return false
}

// ditto is s, line l as the interactive listing shows it, without its role,
// which the line above says.
func (l line) ditto(s string) string {
	return strings.Replace(s, "] "+l.role+" ", "] ", 1)
}

// fold makes line idx one line: its kids' names joined by sep, the kids
// dropped.
func (r *renderer) fold(idx int, kids []int, sep string) {
	parts := make([]string, len(kids))
	for i, k := range kids {
		parts[i] = r.lines[k].name
	}
	r.lines = r.lines[:idx+1]
	r.lines[idx].name = r.b.clip(strings.Join(parts, sep), 300)
	r.lines[idx].end = idx
}
