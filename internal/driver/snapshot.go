package driver

// Collection: a snapshot walks each frame of the active tab (js/walk.js in
// an isolated world), numbers the elements for actions, and hands the
// frame documents to the renderer (render.go).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-rod/rod/lib/proto"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/scrub"
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

// snode is one node of walkJS's tree, in the short keys walk.js writes.
type snode struct {
	// What the element is: role, name, text, link href, placeholder,
	// data-testid, and its number in its frame's document (an id resolves
	// to the element through it).
	R  string `json:"r"`
	N  string `json:"n"`
	T  string `json:"t"`
	H  string `json:"h"`
	Ph string `json:"ph"`
	Ti string `json:"tid"`
	I  int    `json:"i"`
	// Its state: heading level; checked, pressed, expanded; flags
	// (disabled, required, ...); value; a password field with a value (1;
	// the value itself never leaves the page); a select's options (the
	// first 12) and how many it has; a multiple select's selected options
	// (the first 12; a single select's is its value) and how many there are.
	Lv int      `json:"lv"`
	Ck string   `json:"ck"`
	Pr string   `json:"pr"`
	Ex string   `json:"ex"`
	F  []string `json:"f"`
	V  *string  `json:"v"`
	Pw int      `json:"pw"`
	O  []string `json:"o"`
	No int      `json:"no"`
	Sl []string `json:"sl"`
	Ns *int     `json:"ns"`
	// Marks, 1 when set: a frame's owner element, the scope element,
	// clickable (a tabindex, an onclick or a pointer of its own), hidden
	// until hovered (a :hover rule shows it).
	Fr int `json:"fr"`
	Sc int `json:"sc"`
	Cl int `json:"cl"`
	Hv int `json:"hv"`
	// C are its children.
	C []*snode `json:"c"`
}

type walkResult struct {
	D  string   `json:"d"` // the document's token, new for each document
	U  string   `json:"u"`
	Ti string   `json:"ti"`
	C  []*snode `json:"c"`
	// Cut: the walk stopped at its bound of nodes, and the rest of the
	// document was not read; Deep: parts nested past its depth were not.
	Cut  bool `json:"cut"`
	Deep bool `json:"deep"`
}

// maxWalkNodes bounds the nodes one frame reports to a snapshot, so a
// hostile page with a huge DOM cannot make a snapshot unbounded.
const maxWalkNodes = 30000

// maxSearchNodes bounds the nodes one frame reports to a find (a snapshot
// with find or role) and a locator: they look for elements past a
// snapshot's bound (a page of 20,000 buttons is some 40,000 nodes), and
// what they answer is only what matches. Past it they say that the page
// was read only in part.
const maxSearchNodes = 100000

// worldName names the isolated world the walker runs in. Chrome keeps one
// world per name per CDP session, so later snapshots reuse it.
const worldName = "durable-browser"

// Snapshot renders the active tab and makes its ids the ones actions use.
func (b *Browser) Snapshot(ctx context.Context, so SnapshotOptions) (*contract.SnapshotResult, error) {
	b.opMu.Lock()
	defer b.opMu.Unlock()
	t, err := b.tabNow(ctx)
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
	from := fromTop
	if scope != nil && scope.role == "heading" {
		from = fromTopAll
	}
	walkMax := maxWalkNodes
	if find != nil {
		walkMax = maxSearchNodes
	}
	r, docs, err := b.walkPage(ctx, t, scope, so.Scope, walkMax, from)
	if err != nil {
		return nil, pendingErr(ctx, err)
	}
	if from == fromTopAll {
		id, _ := NormalizeID(so.Scope)
		n, _ := strconv.Atoi(id)
		sec := r.section(n)
		if sec == nil && r.partial {
			// The heading lies past where the walk of the page
			// stopped: read the element around it, under a bound of
			// its own.
			if r, docs, err = b.walkPage(ctx, t, scope, so.Scope, walkMax, fromAround); err != nil {
				return nil, pendingErr(ctx, err)
			}
			sec = r.section(n)
		}
		if r = sec; r == nil {
			return nil, &StaleError{ID: so.Scope, Reason: "is no longer on the page"}
		}
	}
	loc := docs[0].res.U
	b.log.Debug().Dur("walk", time.Since(t0)).Int("frames", len(docs)).Msg("driver: snapshot")
	snap := b.newSnapshot(t, r, docs)
	now := &kept{tab: t, doc: docs[0].res.D, navSeq: navSeq, url: loc, title: docs[0].res.Ti, lines: r.lines}
	var pg page
	if so.Since != 0 {
		b.mu.Lock()
		base := b.kept[so.Since]
		b.mu.Unlock()
		snap.Changes = &contract.Changes{Since: so.Since, Full: true}
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
	b.notes(snap, t, docs, walkMax)

	if scope != nil {
		now = nil // a part of the page is nothing to compare a later snapshot with
	}
	snap.Epoch = b.record(t, navSeq, loc, r, now)
	return snap, nil
}

// newSnapshot starts a snapshot's result from a walk of tab t: where, and
// what it counts. The browser's error page is named by the address it
// failed to load, as the tab's own address (what a run answers) names it
// (errorPage). Its text and cut are the caller's to set, then notes adds
// what else the cut says.
func (b *Browser) newSnapshot(t *tab, r *renderer, docs []*frameDoc) *contract.SnapshotResult {
	snap := &contract.SnapshotResult{OK: true, Page: contract.Page{URL: docs[0].res.U, Title: shownTitle(docs[0].res.U, docs[0].res.Ti)}, Viewport: b.Viewport()}
	if u, _ := b.errorPage(t, docs[0].res.U); u != "" {
		snap.URL = u
	}
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

// errorPage says, when loc (the address of tab t's document) is the
// browser's own error page, which address it failed to load (as the
// browser names it) and a note saying so and why, when known; "" when it
// is a page.
func (b *Browser) errorPage(t *tab, loc string) (unreachable, note string) {
	if !strings.HasPrefix(loc, errorPageScheme) {
		return "", ""
	}
	b.mu.Lock()
	u, failURL, why := t.unreachable, t.failURL, t.failWhy
	b.mu.Unlock()
	if u == "" {
		return "", "this is the browser's own error page: the tab's last navigation failed, and nothing of the site it went to is shown; goto another page, or back"
	}
	if why == "" || noFragment(failURL) != noFragment(u) {
		why = "the browser did not say why"
	}
	return u, fmt.Sprintf("this is the browser's own error page for %s, which could not be loaded (%s); nothing of that site is shown: goto another page, or back", truncate(scrub.URL(u), 200), why)
}

// notes adds to a snapshot of tab t's docs (its text and cut set; walked
// with a bound of max nodes a frame) what else the cut says: that the walk
// did not read the whole page, that the page is the browser's error page,
// that the tab is a blank one opened in place of the session's closed
// last tab.
func (b *Browser) notes(snap *contract.SnapshotResult, t *tab, docs []*frameDoc, max int) {
	if note := partNote(docs, max); note != "" {
		snap.Truncated = true
		addCut(&snap.Cut, "the page was read only in part: "+note)
	}
	loc := docs[0].res.U
	if _, note := b.errorPage(t, loc); note != "" {
		addCut(&snap.Cut, note)
	}
	b.mu.Lock()
	reopened := t.reopened && loc == "about:blank"
	t.reopened = false
	b.mu.Unlock()
	if reopened {
		addCut(&snap.Cut, "the session's tab was closed (by its page, or from outside the session), so this is a new blank tab opened in its place: goto a page")
	}
}

// partNote says what a walk bounded at max nodes a frame did not read of
// docs, and how to read it; "" when it read them whole.
func partNote(docs []*frameDoc, max int) string {
	var nodes, deep bool
	for _, d := range docs {
		nodes = nodes || d.res.Cut
		deep = deep || d.res.Deep
	}
	var parts []string
	switch {
	case nodes && max < maxSearchNodes:
		parts = append(parts, fmt.Sprintf("a frame has over %d nodes, and the rest of it was not read: find, role and locators search it (up to %d nodes a frame), and a scope on an id they give (a heading's or landmark's) reads that part", max, maxSearchNodes))
	case nodes:
		parts = append(parts, fmt.Sprintf("a frame has over %d nodes, and the rest of it was not searched: a scope on a heading's or landmark's id near it reads that part", max))
	}
	if deep {
		parts = append(parts, fmt.Sprintf("elements nested over %d deep were not read: a scope on an element around them reads them", maxWalkDepth))
	}
	return strings.Join(parts, "; ")
}

// maxWalkDepth is how deep walk.js descends (its depth>300).
const maxWalkDepth = 300

// partial says whether a walk of docs left part of them unread.
func partial(docs []*frameDoc) bool {
	for _, d := range docs {
		if d.res.Cut || d.res.Deep {
			return true
		}
	}
	return false
}

// addCut adds what else a snapshot left out, or says of the page, to cut.
func addCut(cut *string, s string) {
	if *cut != "" {
		*cut += "; "
	}
	*cut += s
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

// walkPage walks every frame of tab t, at most max nodes each, and renders
// it (only the scope's subtree when scope is set; scopeArg is how the
// caller wrote it), giving elements the tab's ids.
func (b *Browser) walkPage(ctx context.Context, t *tab, scope *ref, scopeArg string, max int, from walkStart) (*renderer, []*frameDoc, error) {
	docs, err := b.collect(ctx, t, scope, max, from)
	if err != nil {
		return nil, nil, err
	}
	if scope != nil && from == fromTop && partial(docs) {
		// The walk from the top stopped before the end of the page, maybe
		// before the scope or inside it: the scope's part is read from
		// the scope itself, under a bound of its own.
		return b.walkPage(ctx, t, scope, scopeArg, max, fromScope)
	}
	// Ids stay with their elements while the tab shows one document.
	b.mu.Lock()
	ids := t.ids
	b.mu.Unlock()
	if ids == nil || ids.doc != docs[0].res.D {
		ids = newIDTable(docs[0].res.D)
	}
	r := &renderer{b: b, pageURL: docs[0].res.U, refs: map[int]ref{}, ids: ids, ctxLine: -1, partial: partial(docs)}
	r.link(ctx, docs)
	if scope != nil && from.subtree() {
		n, d := findScope(docs)
		if n == nil {
			return nil, nil, &StaleError{ID: scopeArg, Reason: "is no longer on the page"}
		}
		r.walk(n, d, 0, "", false)
	} else {
		for _, n := range docs[0].res.C {
			r.walk(n, docs[0], 0, "", false)
		}
		if scope == nil {
			ids.keep(docs)
		}
	}
	b.mu.Lock()
	t.ids = ids
	b.mu.Unlock()
	return r, docs, nil
}

// walkStart says where the walk of the scope's frame starts (walk.js's
// start: the document's body, the scope element, or the element around
// it; the other frames are walked from their body), and what walkPage
// renders of it with a scope: the scope's subtree, or all it read.
type walkStart int

const (
	// fromTop walks from the body and renders the scope's subtree.
	fromTop walkStart = iota
	// fromScope walks from the scope and renders its subtree.
	fromScope
	// fromTopAll walks from the body and renders all it read (a
	// heading's section is cut out of it after); the scope is only
	// marked, and kept at hand for a walk from around it.
	fromTopAll
	// fromAround walks from the scope's parent and renders all it read:
	// a heading's section is in its parent.
	fromAround
)

// start is walk.js's start for w.
func (w walkStart) start() int {
	switch w {
	case fromScope:
		return 1
	case fromAround:
		return 2
	}
	return 0
}

// subtree says whether walkPage renders only the scope's subtree.
func (w walkStart) subtree() bool { return w == fromTop || w == fromScope }

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
func (b *Browser) collect(ctx context.Context, t *tab, scope *ref, max int, from walkStart) ([]*frameDoc, error) {
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
		slices.Sort(kids)
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
			si, start := 0, fromTop
			if scope != nil && scope.frame != nil && scope.sess == d.sess && scope.frame.frameID == d.frameID {
				si, start = scope.idx, from
			}
			d.err = b.walkFrame(ctx, d, si, max, start)
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
func (b *Browser) walkFrame(ctx context.Context, d *frameDoc, scopeIdx, max int, from walkStart) error {
	c := b.client(ctx, d.sess)
	w, err := proto.PageCreateIsolatedWorld{FrameID: d.frameID, WorldName: worldName}.Call(c)
	if err != nil {
		return err
	}
	d.ctxID = w.ExecutionContextID
	res, err := proto.RuntimeCallFunctionOn{FunctionDeclaration: walkJS, ExecutionContextID: d.ctxID, ReturnByValue: true,
		Arguments: argsOf([]interface{}{scopeIdx, max, from.start()})}.Call(c)
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
