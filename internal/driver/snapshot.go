package driver

import (
	"context"
	"encoding/json"
	"errors"
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
	// one flat line each after the nearest heading or landmark that says something (see header); link targets
	// only for links without a name).
	Mode string
	// Scope, an id like "[12]" from the latest snapshot, limits the snapshot to that subtree.
	Scope string
	// Offset skips that many lines of the full rendering, to page through a
	// snapshot over the size bound.
	Offset int
	// Since, an earlier snapshot's epoch, shows only what changed since
	// then, or the whole page saying why when it cannot be compared.
	Since int
	// Budget bounds the answer in tokens (about three characters each);
	// 0 means the browser's MaxSnapshotChars. A page over it is answered
	// with an outline (outline.go) unless Offset pages through it.
	Budget int
	// Find and Role ask for the matching elements only (find.go): Find a
	// case-insensitive substring of a name or text, or a /regex/; Role a
	// role as the snapshot prints it.
	Find string
	Role string
}

// charsPerToken turns a budget in tokens into characters: snapshot text
// (ids, quotes, short names) runs under four characters a token.
const charsPerToken = 3

// Snapshot is the page as compact text, one element a line.
type Snapshot struct {
	Text        string `json:"text"`
	Epoch       int    `json:"epoch"`
	URL         string `json:"url"`
	Title       string `json:"title"`
	Elements    int    `json:"elements"`    // element lines with ids in the full rendering
	Interactive int    `json:"interactive"` // actionable elements among them
	Truncated   bool   `json:"truncated"`
	Cut         string `json:"cut,omitempty"`         // what was left out and how to see it
	NextOffset  int    `json:"next_offset,omitempty"` // the offset of the next page; 0 at the end
	Viewport    string `json:"viewport"`              // WIDTHxHEIGHT in CSS pixels
	// Changes is set for a snapshot since an earlier one: Text then holds
	// only the changed lines, unless Changes.Full.
	Changes *Changes `json:"changes,omitempty"`
}

// ref is what an id points to.
type ref struct {
	sess    proto.TargetSessionID
	frame   *frameDoc
	ctxID   proto.RuntimeExecutionContextID // the frame's isolated world
	idx     int                             // its element's number in that frame's document (walk.js)
	backend proto.DOMBackendNodeID          // resolved lazily, when an action needs it
	role    string
	name    string
	ph      string // placeholder
	tid     string // data-testid
}

type snapState struct {
	epoch  int
	tab    *tab
	navSeq int
	url    string
	refs   map[int]ref
}

// frameDoc is one frame's walked document and where it hangs in its parent.
type frameDoc struct {
	sess    proto.TargetSessionID
	frameID proto.PageFrameID
	ctxID   proto.RuntimeExecutionContextID
	res     walkResult
	owner   proto.DOMBackendNodeID // the iframe element in the parent document
	parent  *frameDoc
	oopif   bool // in its own session, so coordinates need the owner's offset
	err     error
}

// snode is one node of walkJS's tree (see walk.go and walk.js for the fields).
type snode struct {
	R  string   `json:"r"`
	N  string   `json:"n"`
	I  int      `json:"i"`
	C  []*snode `json:"c"`
	T  string   `json:"t"`
	Lv int      `json:"lv"`
	Ck string   `json:"ck"`
	Pr string   `json:"pr"`
	Ex string   `json:"ex"`
	F  []string `json:"f"`
	V  *string  `json:"v"`
	Pw int      `json:"pw"`
	H  string   `json:"h"`
	Fr int      `json:"fr"`
	O  []string `json:"o"`
	No int      `json:"no"`
	Sc int      `json:"sc"`
	Cl int      `json:"cl"`
	Ph string   `json:"ph"`
	Ti string   `json:"tid"`
}

type walkResult struct {
	D   string   `json:"d"` // the document's token, new for each document
	U   string   `json:"u"`
	Ti  string   `json:"ti"`
	C   []*snode `json:"c"`
	Cut bool     `json:"cut"`
}

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

// maxWalkNodes bounds the nodes one frame reports, so a hostile page with a
// huge DOM cannot make a snapshot unbounded.
const maxWalkNodes = 30000

// worldName names the isolated world the walker runs in. Chrome keeps one
// world per name per CDP session, so later snapshots reuse it.
const worldName = "durable-browser"

// Snapshot renders the active tab and makes its ids the ones actions use.
func (b *Browser) Snapshot(ctx context.Context, so SnapshotOptions) (*Snapshot, error) {
	b.opMu.Lock()
	defer b.opMu.Unlock()
	t, err := b.activeTab()
	if err != nil {
		return nil, err
	}
	ctx, cancel := b.pageCtx(ctx, t)
	defer cancel()
	switch so.Mode {
	case "", "full", "interactive":
	default:
		return nil, fmt.Errorf("driver: snapshot mode %q: use \"full\" or \"interactive\"", truncate(so.Mode, 20))
	}
	if so.Offset < 0 {
		return nil, fmt.Errorf("driver: snapshot offset must be 0 or more")
	}
	if so.Since != 0 && (so.Offset != 0 || strings.TrimSpace(so.Scope) != "" || so.Find != "" || so.Role != "") {
		return nil, fmt.Errorf("driver: since compares whole pages: leave out scope, offset, find and role")
	}
	max := b.o.MaxSnapshotChars
	if so.Budget > 0 {
		max = so.Budget * charsPerToken
	}
	var find *matcher
	if so.Find != "" || so.Role != "" {
		m, err := newMatcher(so.Role, so.Find)
		if err != nil {
			return nil, err
		}
		find = m
	}
	var scope *ref
	if strings.TrimSpace(so.Scope) != "" {
		id, err := NormalizeID(so.Scope)
		if err != nil {
			return nil, err
		}
		r, err := b.lookup(ctx, t, []string{id}, false)
		if err != nil {
			return nil, pendingErr(ctx, err)
		}
		scope = &r[0]
	}
	b.mu.Lock()
	navSeq := t.navSeq
	b.mu.Unlock()

	t0 := time.Now()
	// A heading's section is not a subtree: walk the page and cut it out.
	walkScope := scope
	if scope != nil && scope.role == "heading" {
		walkScope = nil
	}
	r, docs, err := b.walkPage(ctx, t, walkScope, so.Scope)
	if err != nil {
		return nil, pendingErr(ctx, err)
	}
	if walkScope == nil && scope != nil {
		id, _ := NormalizeID(so.Scope)
		n, _ := strconv.Atoi(id)
		if r = r.section(n); r == nil {
			return nil, &StaleError{ID: so.Scope, Reason: "is no longer on the page"}
		}
	}
	loc := docs[0].res.U
	b.log.Debug().Dur("walk", time.Since(t0)).Int("frames", len(docs)).Msg("driver: snapshot")
	snap := b.newSnapshot(r, docs)
	now := &kept{tab: t, doc: docs[0].res.D, navSeq: navSeq, url: loc, title: docs[0].res.Ti, lines: r.lines}
	var pg page
	if so.Since != 0 {
		b.mu.Lock()
		base := b.kept[so.Since]
		b.mu.Unlock()
		snap.Changes = &Changes{Since: so.Since, Full: true}
		switch {
		case base == nil:
			snap.Changes.Reason = fmt.Sprintf("snapshot %d is not kept (the last %d snapshots are)", so.Since, keptSnapshots)
		case sameDocument(base, now) != "":
			snap.Changes.Reason = sameDocument(base, now) + fmt.Sprintf(" since snapshot %d", so.Since)
		default:
			text, ch := diff(base.lines, r.lines, so.Mode == "interactive")
			ch.Since = so.Since
			ch.Title = base.title != now.title
			snap.Changes = &ch
			pg = changesPage(text, b.o.MaxSnapshotChars)
		}
	}
	switch {
	case snap.Changes != nil && !snap.Changes.Full:
	case find != nil:
		pg = r.find(find, max, so.Offset)
	case so.Offset == 0:
		pg = r.first(so.Mode == "interactive", max)
	case so.Mode == "interactive":
		pg = r.interactive(max, so.Offset)
	default:
		pg = r.full(max, so.Offset)
	}
	snap.Text, snap.Truncated, snap.Cut, snap.NextOffset = pg.text, pg.truncated, pg.cut, pg.next
	for _, d := range docs {
		if d.res.Cut {
			snap.Truncated = true
			if snap.Cut != "" {
				snap.Cut += "; "
			}
			snap.Cut += fmt.Sprintf("a frame has over %d nodes or is nested too deep, and the rest was not read; scope into a part of the page", maxWalkNodes)
			break
		}
	}

	if scope != nil {
		now = nil // a part of the page is nothing to compare a later snapshot with
	}
	snap.Epoch = b.record(t, navSeq, loc, r, now)
	return snap, nil
}

// newSnapshot starts a snapshot's result from a walk: where, and what it counts.
func (b *Browser) newSnapshot(r *renderer, docs []*frameDoc) *Snapshot {
	snap := &Snapshot{URL: docs[0].res.U, Title: docs[0].res.Ti, Viewport: b.Viewport()}
	for _, l := range r.lines {
		if l.id > 0 {
			snap.Elements++
			if l.interactive {
				snap.Interactive++
			}
		}
	}
	return snap
}

// record makes a walk the latest snapshot, whose ids actions use, and keeps
// what it saw (k, when set) for a later since; it returns the new epoch.
func (b *Browser) record(t *tab, navSeq int, loc string, r *renderer, k *kept) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.epoch++
	b.snap = &snapState{epoch: b.epoch, tab: t, navSeq: navSeq, url: loc, refs: r.refs}
	if k != nil {
		b.keep(b.epoch, k)
	}
	return b.epoch
}

// walkPage walks every frame of tab t and renders it (only the scope's
// subtree when scope is set; scopeArg is how the caller wrote it), giving
// elements the tab's ids.
func (b *Browser) walkPage(ctx context.Context, t *tab, scope *ref, scopeArg string) (*renderer, []*frameDoc, error) {
	docs, err := b.collect(ctx, t, scope)
	if err != nil {
		return nil, nil, err
	}
	// Ids stay with their elements while the tab shows one document.
	b.mu.Lock()
	ids := t.ids
	b.mu.Unlock()
	if ids == nil || ids.doc != docs[0].res.D {
		ids = newIDTable(docs[0].res.D)
	}
	r := &renderer{b: b, pageURL: docs[0].res.U, refs: map[int]ref{}, ids: ids, ctxLine: -1}
	r.link(ctx, docs)
	if scope != nil {
		n, d := findScope(docs)
		if n == nil {
			return nil, nil, &StaleError{ID: scopeArg, Reason: "is no longer on the page"}
		}
		r.walk(n, d, 0, "", false)
	} else {
		for _, n := range docs[0].res.C {
			r.walk(n, docs[0], 0, "", false)
		}
		ids.keep(docs)
	}
	b.mu.Lock()
	t.ids = ids
	b.mu.Unlock()
	return r, docs, nil
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

// findScope finds the node walkJS marked as the scope element.
func findScope(docs []*frameDoc) (*snode, *frameDoc) {
	var find func(ns []*snode) *snode
	find = func(ns []*snode) *snode {
		for _, n := range ns {
			if n.Sc == 1 {
				return n
			}
			if f := find(n.C); f != nil {
				return f
			}
		}
		return nil
	}
	for _, d := range docs {
		if n := find(d.res.C); n != nil {
			return n, d
		}
	}
	return nil, nil
}

const maxFrames = 40

// collect walks every frame of the tab, same-process ones through the tab's
// session, out-of-process ones through their own, all at once.
func (b *Browser) collect(ctx context.Context, t *tab, scope *ref) ([]*frameDoc, error) {
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
			si := 0
			if scope != nil && scope.frame != nil && scope.sess == d.sess && scope.frame.frameID == d.frameID {
				si = scope.idx
			}
			d.err = b.walkFrame(ctx, d, si)
			if d.err != nil {
				b.log.Debug().Err(d.err).Bool("oopif", d.oopif).Msg("driver: walk frame")
			}
		}(d)
	}
	wg.Wait()
	if docs[0].err != nil {
		return nil, fmt.Errorf("driver: read the page: %w", docs[0].err)
	}
	return docs, nil
}

// walkFrame runs walkJS in the frame's isolated world.
func (b *Browser) walkFrame(ctx context.Context, d *frameDoc, scopeIdx int) error {
	c := b.client(ctx, d.sess)
	w, err := proto.PageCreateIsolatedWorld{FrameID: d.frameID, WorldName: worldName}.Call(c)
	if err != nil {
		return err
	}
	d.ctxID = w.ExecutionContextID
	res, err := proto.RuntimeCallFunctionOn{FunctionDeclaration: walkJS, ExecutionContextID: d.ctxID, ReturnByValue: true,
		Arguments: argsOf([]interface{}{scopeIdx, maxWalkNodes})}.Call(c)
	if err != nil {
		return err
	}
	if res.ExceptionDetails != nil {
		return fmt.Errorf("the page walk threw: %s", b.clip(res.ExceptionDetails.Text, 100))
	}
	if err := json.Unmarshal([]byte(res.Result.Value.Str()), &d.res); err != nil {
		return fmt.Errorf("decode the page walk: %w", err)
	}
	return nil
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
	outline     bool // heading or landmark
	dup         bool // its name repeats its parent's: left out of the full rendering
	ctx         int  // index of the nearest heading/landmark line before it, -1 if none
	end         int  // index of the last line of its subtree
}

// idKey names one element for the life of its document: the frame it is
// in, that document's token (walk.js makes one per document) and the
// number walk.js gave it there.
type idKey struct {
	sess  proto.TargetSessionID
	frame proto.PageFrameID
	doc   string
	n     int
}

// idTable gives a tab's elements short ids that stay with them across
// snapshots of one document: numbered from 1 in the order they are first
// seen, and started again when the tab's main document changes.
type idTable struct {
	doc  string // the main frame's document token
	next int
	ids  map[idKey]int
}

func newIDTable(doc string) *idTable { return &idTable{doc: doc, ids: map[idKey]int{}} }

func (t *idTable) id(k idKey) int {
	if id, ok := t.ids[k]; ok {
		return id
	}
	t.next++
	t.ids[k] = t.next
	return t.next
}

// keep forgets the elements of documents no longer in the tab (a frame
// that navigated), so the table does not grow with a page's life.
func (t *idTable) keep(docs []*frameDoc) {
	live := map[[3]string]bool{}
	for _, d := range docs {
		live[[3]string{string(d.sess), string(d.frameID), d.res.D}] = true
	}
	for k := range t.ids {
		if !live[[3]string{string(k.sess), string(k.frame), k.doc}] {
			delete(t.ids, k)
		}
	}
}

type renderer struct {
	b        *Browser
	pageURL  string
	lines    []line
	refs     map[int]ref
	ids      *idTable
	children map[*snode]*frameDoc // iframe node -> child document
	ctxLine  int
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

// link hangs each child frame's document under its iframe node: the
// iframe element, described by CDP, names its frame.
func (r *renderer) link(ctx context.Context, docs []*frameDoc) {
	r.children = map[*snode]*frameDoc{}
	if len(docs) < 2 {
		return
	}
	type owner struct {
		d *frameDoc
		n *snode
	}
	var owners []owner
	var find func(d *frameDoc, ns []*snode)
	find = func(d *frameDoc, ns []*snode) {
		for _, n := range ns {
			if n.Fr == 1 {
				owners = append(owners, owner{d, n})
			}
			find(d, n.C)
		}
	}
	for _, d := range docs {
		if d.err == nil {
			find(d, d.res.C)
		}
	}
	byFrame := map[proto.PageFrameID]*frameDoc{}
	for _, d := range docs[1:] {
		if d.err == nil {
			byFrame[d.frameID] = d
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, o := range owners {
		wg.Add(1)
		go func(o owner) {
			defer wg.Done()
			fid, backend, err := r.b.describe(ctx, ref{sess: o.d.sess, ctxID: o.d.ctxID, idx: o.n.I})
			if err != nil {
				r.b.log.Debug().Err(err).Msg("driver: frame owner")
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if cd := byFrame[fid]; cd != nil {
				r.children[o.n] = cd
				cd.owner = backend
				cd.parent = o.d
			}
		}(o)
	}
	wg.Wait()
}

// describe resolves a ref to its element's frame id (for frame owners) and
// backend node id.
func (b *Browser) describe(ctx context.Context, r ref) (proto.PageFrameID, proto.DOMBackendNodeID, error) {
	c := b.client(ctx, r.sess)
	res, err := proto.RuntimeCallFunctionOn{FunctionDeclaration: resolveJS, ExecutionContextID: r.ctxID,
		Arguments: argsOf([]interface{}{r.idx})}.Call(c)
	if err != nil {
		return "", 0, err
	}
	if res.ExceptionDetails != nil || res.Result.ObjectID == "" {
		return "", 0, errGone
	}
	defer func() {
		_ = proto.RuntimeReleaseObject{ObjectID: res.Result.ObjectID}.Call(b.client(context.Background(), r.sess))
	}()
	desc, err := proto.DOMDescribeNode{ObjectID: res.Result.ObjectID}.Call(c)
	if err != nil || desc.Node == nil {
		return "", 0, fmt.Errorf("describe the element: %v", err)
	}
	return desc.Node.FrameID, desc.Node.BackendNodeID, nil
}

var errGone = errors.New("the element is no longer on the page")

// clean collapses whitespace, then redacts and bounds page text.
func (r *renderer) clean(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return r.b.clip(s, 150)
}

// walk renders node n at depth; parentName lets text that repeats its
// parent's name be dropped.
func (r *renderer) walk(n *snode, d *frameDoc, depth int, parentName string, inMain bool) {
	if n == nil {
		return
	}
	if n.R == "" {
		name := r.clean(n.T)
		if name == "" || (parentName != "" && strings.Contains(parentName, name)) {
			return
		}
		r.lines = append(r.lines, line{depth: depth, name: name, inMain: inMain, ctx: r.ctxLine, end: len(r.lines)})
		return
	}
	role := n.R
	name := r.clean(n.N)
	interactive := interactiveRoles[role]

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
	pname := name
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
			parts := make([]string, len(kids))
			for i, k := range kids {
				parts[i] = r.lines[k].name
			}
			r.lines = r.lines[:idx+1]
			r.lines[idx].name = r.b.clip(strings.Join(parts, " | "), 300)
			r.lines[idx].end = idx
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
		parts := make([]string, len(kids))
		for i, k := range kids {
			parts[i] = r.lines[k].name
		}
		r.lines = r.lines[:idx+1]
		r.lines[idx].name = r.b.clip(strings.Join(parts, " "), 300)
		r.lines[idx].end = idx
	case bare && len(kids) == 1 && r.lines[kids[0]].elem:
		// A wrapper (a list item, a cell) of one element: the element
		// takes its place.
		r.drop(idx, true)
	}
}

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
	for _, f := range n.F {
		switch f {
		case "selected", "disabled", "required", "focused", "readonly", "invalid", "multiselectable":
			sb.WriteString(" " + f)
		}
	}
	if n.Pw == 1 {
		sb.WriteString(` value=[hidden]`)
	} else if n.V != nil && *n.V != "" && !(role == "button" && strings.Join(strings.Fields(*n.V), " ") == strings.Join(strings.Fields(n.N), " ")) {
		// A button's value that is its name (<input type=submit value=Go>) says nothing more.
		sb.WriteString(" value=" + strconv.Quote(r.b.clip(strings.TrimSpace(*n.V), 100)))
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
// landmark (see header), one flat line each (see format), paged like full's offset pages.
func (r *renderer) interactive(max, offset int) page {
	var rendered []string
	var heads []int // for each rendered line, the index in rendered of its header line, or -1
	lastCtx, lastHead := -2, -1
	for _, l := range r.lines {
		if !l.interactive || l.id == 0 {
			continue
		}
		if ctx := r.header(l.ctx); ctx != lastCtx {
			lastCtx, lastHead = ctx, -1
			if ctx >= 0 {
				lastHead = len(rendered)
				rendered = append(rendered, r.lines[ctx].format(false))
				heads = append(heads, -1)
			}
		}
		rendered = append(rendered, l.format(false))
		heads = append(heads, lastHead)
	}
	return sequence(rendered, max, offset, "lines", func(i int) string {
		if h := heads[i]; h >= 0 {
			return rendered[h]
		}
		return ""
	})
}
