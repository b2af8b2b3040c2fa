package driver

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-rod/rod/lib/proto"
)

// SnapshotOptions choose what a snapshot shows.
type SnapshotOptions struct {
	// Mode is "full" (default) or "interactive" (actionable elements only,
	// each under its nearest heading or landmark).
	Mode string
	// Scope, an id like "[12]" from the latest snapshot, limits the snapshot to that subtree.
	Scope string
	// Offset skips that many lines of the full rendering, to page through a
	// snapshot over the size bound.
	Offset int
}

// Snapshot is the page as compact text, one element a line.
type Snapshot struct {
	Text        string `json:"text"`
	Epoch       int    `json:"epoch"`
	URL         string `json:"url"`
	Title       string `json:"title"`
	Elements    int    `json:"elements"`    // element lines with ids in the full rendering
	Interactive int    `json:"interactive"` // actionable elements among them
	Truncated   bool   `json:"truncated"`
	Cut         string `json:"cut,omitempty"` // what was left out and how to see it
}

// ref is what an id points to.
type ref struct {
	sess    proto.TargetSessionID
	backend proto.DOMBackendNodeID
	frame   *frameDoc
	role    string
	name    string
}

type snapState struct {
	epoch  int
	tab    *tab
	navSeq int
	url    string
	refs   map[int]ref
}

// frameDoc is one frame's accessibility tree and where it hangs in its parent.
type frameDoc struct {
	sess    proto.TargetSessionID
	frameID proto.PageFrameID
	nodes   []*proto.AccessibilityAXNode
	byID    map[proto.AccessibilityAXNodeID]*proto.AccessibilityAXNode
	owner   proto.DOMBackendNodeID // the iframe element in the parent document
	parent  *frameDoc
	oopif   bool // in its own session, so coordinates need the owner's offset
	err     error
}

var interactiveRoles = map[string]bool{
	"button": true, "link": true, "textbox": true, "searchbox": true, "combobox": true, "listbox": true,
	"option": true, "checkbox": true, "radio": true, "switch": true, "slider": true, "spinbutton": true,
	"menuitem": true, "menuitemcheckbox": true, "menuitemradio": true, "tab": true, "treeitem": true,
	"DisclosureTriangle": true, "ColorWell": true, "Date": true, "DateTime": true, "InputTime": true,
}

var landmarkRoles = map[string]bool{
	"main": true, "navigation": true, "banner": true, "contentinfo": true, "complementary": true,
	"form": true, "search": true, "region": true, "dialog": true, "alertdialog": true,
}

var valueRoles = map[string]bool{
	"textbox": true, "searchbox": true, "combobox": true, "spinbutton": true, "slider": true,
	"Date": true, "DateTime": true, "InputTime": true, "ColorWell": true,
}

// Snapshot renders the active tab and makes its ids the ones actions use.
func (b *Browser) Snapshot(ctx context.Context, so SnapshotOptions) (*Snapshot, error) {
	b.opMu.Lock()
	defer b.opMu.Unlock()
	t, err := b.activeTab()
	if err != nil {
		return nil, err
	}
	switch so.Mode {
	case "", "full", "interactive":
	default:
		return nil, fmt.Errorf("driver: snapshot mode %q: use \"full\" or \"interactive\"", truncate(so.Mode, 20))
	}
	if so.Offset < 0 {
		return nil, fmt.Errorf("driver: snapshot offset must be 0 or more")
	}
	var scope *ref
	if strings.TrimSpace(so.Scope) != "" {
		id, err := NormalizeID(so.Scope)
		if err != nil {
			return nil, err
		}
		r, err := b.lookup(ctx, t, []string{id})
		if err != nil {
			return nil, err
		}
		scope = &r[0]
	}
	b.mu.Lock()
	navSeq := t.navSeq
	b.mu.Unlock()

	t0 := time.Now()
	docs, err := b.collect(ctx, t)
	if err != nil {
		return nil, err
	}
	t1 := time.Now()
	loc, title := b.docInfo(ctx, t.sess)

	r := &renderer{b: b, pageURL: loc, refs: map[int]ref{}}
	b.mu.Lock()
	r.next = b.idSeq
	b.mu.Unlock()
	r.prepare(ctx, docs)
	if scope != nil {
		n, d := findNode(docs, scope.sess, scope.backend)
		if n == nil {
			return nil, &StaleError{ID: so.Scope, Reason: "is no longer on the page"}
		}
		r.walk(n, d, 0, "", false)
	} else {
		r.walk(docs[0].root(), docs[0], 0, "", false)
	}

	t2 := time.Now()
	b.log.Debug().Dur("collect", t1.Sub(t0)).Dur("render", t2.Sub(t1)).Msg("driver: snapshot")
	snap := &Snapshot{URL: loc, Title: title}
	for _, l := range r.lines {
		if l.id > 0 {
			snap.Elements++
			if l.interactive {
				snap.Interactive++
			}
		}
	}
	if so.Mode == "interactive" {
		snap.Text, snap.Truncated, snap.Cut = r.interactive(b.o.MaxSnapshotChars, so.Offset)
	} else {
		snap.Text, snap.Truncated, snap.Cut = r.full(b.o.MaxSnapshotChars, so.Offset)
	}

	b.mu.Lock()
	b.epoch++
	b.idSeq = r.next
	snap.Epoch = b.epoch
	b.snap = &snapState{epoch: b.epoch, tab: t, navSeq: navSeq, url: loc, refs: r.refs}
	b.mu.Unlock()
	return snap, nil
}

// docInfo reads location.href and document.title of a session's main frame.
func (b *Browser) docInfo(ctx context.Context, sid proto.TargetSessionID) (string, string) {
	res, err := proto.RuntimeEvaluate{Expression: `[location.href, document.title]`, ReturnByValue: true}.Call(b.client(ctx, sid))
	if err != nil || res.ExceptionDetails != nil {
		return "", ""
	}
	arr := res.Result.Value.Arr()
	if len(arr) != 2 {
		return "", ""
	}
	return arr[0].Str(), arr[1].Str()
}

func (d *frameDoc) root() *proto.AccessibilityAXNode {
	for _, n := range d.nodes {
		if n.ParentID == "" {
			return n
		}
	}
	if len(d.nodes) > 0 {
		return d.nodes[0]
	}
	return nil
}

func findNode(docs []*frameDoc, sid proto.TargetSessionID, backend proto.DOMBackendNodeID) (*proto.AccessibilityAXNode, *frameDoc) {
	for _, d := range docs {
		if d.sess != sid {
			continue
		}
		for _, n := range d.nodes {
			if n.BackendDOMNodeID == backend && !n.Ignored {
				return n, d
			}
		}
	}
	return nil, nil
}

const maxFrames = 40

// collect fetches the accessibility trees of the tab's frames, same-process
// ones through the tab's session, out-of-process ones through their own.
func (b *Browser) collect(ctx context.Context, t *tab) ([]*frameDoc, error) {
	var docs []*frameDoc
	var walkTree func(sid proto.TargetSessionID, ft *proto.PageFrameTree, parent *frameDoc, oopif bool) *frameDoc
	walkTree = func(sid proto.TargetSessionID, ft *proto.PageFrameTree, parent *frameDoc, oopif bool) *frameDoc {
		if ft == nil || ft.Frame == nil || len(docs) >= maxFrames {
			return nil
		}
		d := &frameDoc{sess: sid, frameID: ft.Frame.ID, parent: parent, oopif: oopif}
		docs = append(docs, d)
		for _, ch := range ft.ChildFrames {
			walkTree(sid, ch, d, false)
		}
		return d
	}
	// A session's frame tree holds its same-process frames; out-of-process
	// ones are children of the session that attached them.
	var walkSession func(sid proto.TargetSessionID, parent *frameDoc, oopif bool, depth int) error
	walkSession = func(sid proto.TargetSessionID, parent *frameDoc, oopif bool, depth int) error {
		ft, err := proto.PageGetFrameTree{}.Call(b.client(ctx, sid))
		if err != nil {
			return err
		}
		root := walkTree(sid, ft.FrameTree, parent, oopif)
		if root == nil || depth > 5 {
			return nil
		}
		b.mu.Lock()
		var kids []proto.TargetSessionID
		for fid, csid := range b.frameSess {
			if b.frameParent[fid] == sid {
				kids = append(kids, csid)
			}
		}
		b.mu.Unlock()
		sort.Slice(kids, func(i, j int) bool { return kids[i] < kids[j] })
		for _, csid := range kids {
			_ = walkSession(csid, root, true, depth+1)
		}
		return nil
	}
	if err := walkSession(t.sess, nil, false, 0); err != nil || len(docs) == 0 {
		return nil, fmt.Errorf("driver: read the page's frames: %v", err)
	}

	var wg sync.WaitGroup
	for _, d := range docs {
		wg.Add(1)
		go func(d *frameDoc) {
			defer wg.Done()
			// With the domain on, the renderer keeps its tree between snapshots
			// (much faster on big pages) and out-of-process frames stay fresh.
			b.axEnable(ctx, d.sess)
			res, err := proto.AccessibilityGetFullAXTree{FrameID: d.frameID}.Call(b.client(ctx, d.sess))
			if err != nil {
				d.err = err
				b.log.Debug().Err(err).Bool("oopif", d.oopif).Msg("driver: frame tree")
				return
			}
			d.nodes = res.Nodes
			d.byID = make(map[proto.AccessibilityAXNodeID]*proto.AccessibilityAXNode, len(res.Nodes))
			for _, n := range res.Nodes {
				d.byID[n.NodeID] = n
			}
			if d.parent != nil {
				// The owner lives in the parent's document, so ask the parent's session.
				own, err := proto.DOMGetFrameOwner{FrameID: d.frameID}.Call(b.client(ctx, d.parent.sess))
				if err == nil {
					d.owner = own.BackendNodeID
				} else {
					b.log.Debug().Err(err).Bool("oopif", d.oopif).Msg("driver: frame owner")
				}
			}
		}(d)
	}
	wg.Wait()
	if docs[0].err != nil {
		return nil, fmt.Errorf("driver: read the accessibility tree: %w", docs[0].err)
	}
	return docs, nil
}

// line is one rendered element or text.
type line struct {
	depth       int
	id          int
	text        string
	interactive bool
	inMain      bool
	outline     bool // heading or landmark
	ctx         int  // index of the nearest heading/landmark line before it, -1 if none
	end         int  // index of the last line of its subtree
}

type renderer struct {
	b        *Browser
	pageURL  string
	lines    []line
	refs     map[int]ref
	next     int
	children map[*proto.AccessibilityAXNode]*frameDoc // iframe node -> child document
	secret   map[proto.TargetSessionID]map[proto.DOMBackendNodeID]bool
	ctxLine  int
}

// prepare links child frames to their iframe nodes and finds password fields.
func (r *renderer) prepare(ctx context.Context, docs []*frameDoc) {
	r.children = map[*proto.AccessibilityAXNode]*frameDoc{}
	r.secret = map[proto.TargetSessionID]map[proto.DOMBackendNodeID]bool{}
	r.ctxLine = -1
	for _, d := range docs[1:] {
		if d.err != nil || d.parent == nil || d.owner == 0 {
			continue
		}
		// The owner is in some document of the parent's session.
	find:
		for _, pd := range docs {
			if pd.sess != d.parent.sess {
				continue
			}
			for _, n := range pd.nodes {
				if n.BackendDOMNodeID == d.owner {
					r.children[n] = d
					break find
				}
			}
		}
	}
	// A password field's value must never be shown: check every text field
	// that has a value (few per page), failing closed.
	type check struct {
		sid proto.TargetSessionID
		id  proto.DOMBackendNodeID
	}
	var checks []check
	for _, d := range docs {
		for _, n := range d.nodes {
			if role := axStr(n.Role); n.Ignored || n.BackendDOMNodeID == 0 || (role != "textbox" && role != "searchbox") || axStr(n.Value) == "" {
				continue
			}
			checks = append(checks, check{d.sess, n.BackendDOMNodeID})
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for _, c := range checks {
		wg.Add(1)
		go func(c check) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			secret := true
			res, err := proto.DOMDescribeNode{BackendNodeID: c.id}.Call(r.b.client(ctx, c.sid))
			if err == nil && res.Node != nil {
				secret = false
				for i := 0; i+1 < len(res.Node.Attributes); i += 2 {
					if strings.EqualFold(res.Node.Attributes[i], "type") && strings.EqualFold(strings.TrimSpace(res.Node.Attributes[i+1]), "password") {
						secret = true
					}
				}
			}
			if secret {
				mu.Lock()
				if r.secret[c.sid] == nil {
					r.secret[c.sid] = map[proto.DOMBackendNodeID]bool{}
				}
				r.secret[c.sid][c.id] = true
				mu.Unlock()
			}
		}(c)
	}
	wg.Wait()
}

func axStr(v *proto.AccessibilityAXValue) string {
	if v == nil || v.Value.Nil() {
		return ""
	}
	val := v.Value.Val()
	switch x := val.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}

func clean(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return truncate(s, 150)
}

// walk renders node n at depth; parentName lets text that repeats its
// parent's name be dropped.
func (r *renderer) walk(n *proto.AccessibilityAXNode, d *frameDoc, depth int, parentName string, inMain bool) {
	if n == nil {
		return
	}
	role := axStr(n.Role)
	name := clean(axStr(n.Name))
	kids := func(depth int, pname string, inMain bool) {
		for _, cid := range n.ChildIDs {
			r.walk(d.byID[cid], d, depth, pname, inMain)
		}
		if cd := r.children[n]; cd != nil {
			r.walk(cd.root(), cd, depth, pname, inMain)
		}
	}
	if n.Ignored {
		kids(depth, parentName, inMain)
		return
	}
	switch role {
	case "InlineTextBox", "LineBreak":
		return
	case "StaticText":
		if name == "" || (parentName != "" && strings.Contains(parentName, name)) {
			return
		}
		r.lines = append(r.lines, line{depth: depth, text: strconv.Quote(name), inMain: inMain, ctx: r.ctxLine, end: len(r.lines)})
		return
	case "RootWebArea":
		kids(depth, parentName, inMain)
		return
	}
	props := map[string]string{}
	for _, p := range n.Properties {
		props[string(p.Name)] = axValStr(p.Value)
	}
	focusable := props["focusable"] == "true"
	interactive := interactiveRoles[role] || (focusable && (role == "generic" || role == "none" || role == ""))
	if (role == "generic" || role == "none" || role == "presentation" || role == "" || role == "Section" ||
		role == "LayoutTable" || role == "LayoutTableRow" || role == "LayoutTableCell" || role == "Canvas") && !interactive && name == "" {
		kids(depth, parentName, inMain)
		return
	}
	if role == "generic" || role == "none" || role == "" {
		role = "clickable"
	}

	var sb strings.Builder
	sb.WriteString(role)
	if name != "" {
		sb.WriteString(" ")
		sb.WriteString(strconv.Quote(name))
	}
	r.states(&sb, n, role, props, d)

	idx := len(r.lines)
	id := 0
	if n.BackendDOMNodeID != 0 {
		r.next++
		id = r.next
		r.refs[id] = ref{sess: d.sess, backend: n.BackendDOMNodeID, frame: d, role: role, name: name}
	}
	outline := role == "heading" || landmarkRoles[role]
	if role == "main" {
		inMain = true
	}
	r.lines = append(r.lines, line{depth: depth, id: id, text: sb.String(), interactive: interactive, inMain: inMain, outline: outline, ctx: r.ctxLine})
	savedCtx := r.ctxLine
	if outline {
		r.ctxLine = idx
	}
	pname := name
	if pname == "" {
		pname = parentName
	}
	kids(depth+1, pname, inMain)
	if landmarkRoles[role] {
		r.ctxLine = savedCtx
	}
	// A native select's options fold into its line; select takes their labels.
	if role == "combobox" && len(r.lines) > idx+1 {
		var opts []string
		all := true
		for _, l := range r.lines[idx+1:] {
			if !strings.HasPrefix(l.text, "option") {
				all = false
				break
			}
			if len(opts) < 12 {
				name := strings.TrimPrefix(l.text, "option ")
				if i := strings.LastIndex(name, `"`); i > 0 {
					name = name[:i+1]
				}
				opts = append(opts, name)
			}
		}
		if all {
			n := len(r.lines) - idx - 1
			for _, l := range r.lines[idx+1:] {
				delete(r.refs, l.id)
			}
			r.lines = r.lines[:idx+1]
			more := ""
			if n > len(opts) {
				more = fmt.Sprintf(",+%d more", n-len(opts))
			}
			r.lines[idx].text += " options=[" + strings.Join(opts, ",") + more + "]"
		}
	}
	// Fold a container holding only text into its own line.
	if !interactive && name == "" && len(r.lines) > idx+1 {
		allText := true
		var parts []string
		for _, l := range r.lines[idx+1:] {
			if l.id != 0 || l.depth != depth+1 {
				allText = false
				break
			}
			s, _ := strconv.Unquote(l.text)
			parts = append(parts, s)
		}
		if allText {
			joined := truncate(strings.Join(parts, " "), 300)
			r.lines = r.lines[:idx+1]
			r.lines[idx].text += " " + strconv.Quote(joined)
		}
	}
	r.lines[idx].end = len(r.lines) - 1
}

func axValStr(v *proto.AccessibilityAXValue) string {
	if v == nil {
		return ""
	}
	return axStr(v)
}

// states appends the states that matter to an element line.
func (r *renderer) states(sb *strings.Builder, n *proto.AccessibilityAXNode, role string, props map[string]string, d *frameDoc) {
	if lv := props["level"]; lv != "" && role == "heading" {
		sb.WriteString(" level=" + lv)
	}
	if c, ok := props["checked"]; ok {
		switch c {
		case "true":
			sb.WriteString(" checked")
		case "mixed":
			sb.WriteString(" checked=mixed")
		default:
			sb.WriteString(" checked=false")
		}
	}
	if p, ok := props["pressed"]; ok {
		if p == "true" {
			sb.WriteString(" pressed")
		} else {
			sb.WriteString(" pressed=" + p)
		}
	}
	if e, ok := props["expanded"]; ok {
		if e == "true" {
			sb.WriteString(" expanded")
		} else {
			sb.WriteString(" expanded=false")
		}
	}
	for _, k := range []string{"selected", "disabled", "required", "focused", "readonly", "invalid", "multiselectable"} {
		if v := props[k]; v == "true" || (k == "invalid" && v != "" && v != "false") {
			sb.WriteString(" " + k)
		}
	}
	if valueRoles[role] {
		if v := axStr(n.Value); v != "" {
			if r.secret[d.sess][n.BackendDOMNodeID] && (role == "textbox" || role == "searchbox") {
				sb.WriteString(` value=[hidden]`)
			} else {
				sb.WriteString(" value=" + strconv.Quote(truncate(strings.TrimSpace(v), 100)))
			}
		}
	}
	if u := props["url"]; u != "" && role == "link" {
		sb.WriteString(" -> " + r.linkTarget(u))
	}
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
			return truncate(u.EscapedPath(), 100)
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
	return truncate(out, 150)
}

func (l line) render() string {
	var sb strings.Builder
	for i := 0; i < l.depth; i++ {
		sb.WriteString("  ")
	}
	if l.id > 0 {
		sb.WriteString("[")
		sb.WriteString(strconv.Itoa(l.id))
		sb.WriteString("] ")
	}
	sb.WriteString(l.text)
	return sb.String()
}

// full renders every line, or over max chars, interactive lines, the outline
// and main content first.
func (r *renderer) full(max, offset int) (string, bool, string) {
	rendered := make([]string, len(r.lines))
	total := 0
	for i, l := range r.lines {
		rendered[i] = l.render()
		total += len(rendered[i]) + 1
	}
	if offset > 0 {
		if offset >= len(r.lines) {
			return "", false, fmt.Sprintf("offset %d is past the end (%d lines)", offset, len(r.lines))
		}
		var sb strings.Builder
		i := offset
		for ; i < len(r.lines) && (sb.Len()+len(rendered[i]) < max || i == offset); i++ {
			sb.WriteString(rendered[i])
			sb.WriteByte('\n')
		}
		if i < len(r.lines) {
			return sb.String(), true, fmt.Sprintf("lines %d-%d of %d shown; see more with offset=%d", offset, i-1, len(r.lines), i)
		}
		return sb.String(), offset > 0, fmt.Sprintf("lines %d-%d of %d shown (the end)", offset, i-1, len(r.lines))
	}
	if total <= max {
		return strings.Join(rendered, "\n") + "\n", false, ""
	}
	keep := make([]bool, len(r.lines))
	used := 0
	take := func(pred func(l line) bool, budget bool) {
		for i, l := range r.lines {
			if keep[i] || !pred(l) {
				continue
			}
			if budget && used+len(rendered[i])+1 > max {
				continue
			}
			keep[i] = true
			used += len(rendered[i]) + 1
		}
	}
	take(func(l line) bool { return l.interactive || l.outline }, false)
	take(func(l line) bool { return l.inMain }, true)
	take(func(l line) bool { return true }, true)
	var sb strings.Builder
	cut := 0
	for i, l := range r.lines {
		if keep[i] {
			sb.WriteString(rendered[i])
			sb.WriteByte('\n')
		} else if l.id >= 0 {
			cut++
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
	msg := fmt.Sprintf("cut %d of %d lines of non-interactive content to stay under %d characters (every interactive element, heading and landmark is kept)", cut, len(r.lines), max)
	if len(hints) > 0 {
		msg += "; see a part with " + strings.Join(hints, ", ")
	}
	msg += "; or page through everything with offset=1, then the offset each page names"
	return sb.String(), true, msg
}

// interactive renders actionable elements under their nearest heading or landmark.
func (r *renderer) interactive(max, offset int) (string, bool, string) {
	var sb strings.Builder
	lastCtx := -2
	count := 0
	skipped := 0
	for _, l := range r.lines {
		if !l.interactive || l.id == 0 {
			continue
		}
		count++
		if count <= offset {
			skipped++
			continue
		}
		if l.ctx != lastCtx {
			lastCtx = l.ctx
			if l.ctx >= 0 {
				c := r.lines[l.ctx]
				c.depth = 0
				sb.WriteString(c.render())
				sb.WriteByte('\n')
			}
		}
		l.depth = 1
		if l.ctx < 0 {
			l.depth = 0
		}
		sb.WriteString(l.render())
		sb.WriteByte('\n')
	}
	cut := ""
	if skipped > 0 {
		cut = fmt.Sprintf("skipped the first %d interactive elements (offset)", skipped)
	}
	if sb.Len() > max {
		if cut != "" {
			cut += "; "
		}
		cut += fmt.Sprintf("over %d characters, but every interactive element is kept", max)
	}
	return sb.String(), skipped > 0, cut
}

func (b *Browser) axEnable(ctx context.Context, sid proto.TargetSessionID) {
	b.mu.Lock()
	done := b.axOn[sid]
	b.mu.Unlock()
	if done {
		return
	}
	if err := (proto.AccessibilityEnable{}).Call(b.client(ctx, sid)); err == nil {
		b.mu.Lock()
		b.axOn[sid] = true
		b.mu.Unlock()
	}
}
