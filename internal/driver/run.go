package driver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/input"
	"github.com/go-rod/rod/lib/proto"
	"github.com/ysmood/gson"
)

// ActionFailure is the action that stopped a batch.
type ActionFailure struct {
	Index  int    `json:"index"`
	Op     string `json:"op"`
	Kind   string `json:"kind"`
	Reason string `json:"reason"`
}

// RunResult is what a batch did. Lists hold what happened since the
// previous Run, bounded.
type RunResult struct {
	Completed      int            `json:"completed"`
	Total          int            `json:"total"`
	Failed         *ActionFailure `json:"failed,omitempty"`
	URL            string         `json:"url"`
	Title          string         `json:"title"`
	TabsOpened     []Tab          `json:"tabs_opened,omitempty"`
	Dialogs        []Dialog       `json:"dialogs,omitempty"`
	ConsoleErrors  []string       `json:"console_errors,omitempty"`
	FailedRequests []string       `json:"failed_requests,omitempty"`
	Sent           []SentRequest  `json:"sent,omitempty"`
	Held           []SentRequest  `json:"held,omitempty"`
	Denied         []SentRequest  `json:"denied,omitempty"`
}

// lookup resolves ids against the latest snapshot of tab t, refusing stale
// ones. With resolve, each ref also gets its element's backend node id.
func (b *Browser) lookup(ctx context.Context, t *tab, ids []string, resolve bool) ([]ref, error) {
	b.mu.Lock()
	s := b.snap
	nav := t.navSeq
	b.mu.Unlock()
	if s == nil {
		return nil, ErrNoSnapshot
	}
	if s.tab != t {
		return nil, &StaleError{Reason: "the active tab changed since the snapshot"}
	}
	if nav != s.navSeq {
		return nil, &StaleError{Reason: "the page navigated since the snapshot"}
	}
	out := make([]ref, 0, len(ids))
	for _, id := range ids {
		n, _ := strconv.Atoi(id)
		r, ok := s.refs[n]
		if !ok {
			return nil, &StaleError{ID: id, Reason: "is not in the latest snapshot"}
		}
		out = append(out, r)
	}
	// Events may lag the page: the URL is the authority on SPA route changes.
	if loc, _ := b.docInfo(ctx, t.sess); loc != "" && loc != s.url {
		return nil, &StaleError{Reason: "the page navigated since the snapshot"}
	}
	if resolve {
		for i, id := range ids {
			if out[i].backend != 0 {
				continue
			}
			_, backend, err := b.describe(ctx, out[i])
			if err != nil {
				return nil, &StaleError{ID: id, Reason: "is no longer on the page"}
			}
			out[i].backend = backend
			n, _ := strconv.Atoi(id)
			b.mu.Lock()
			if b.snap == s {
				s.refs[n] = out[i]
			}
			b.mu.Unlock()
		}
	}
	return out, nil
}

// Element resolves an id of the latest snapshot to a rod element, for
// screenshots of one element.
func (b *Browser) Element(ctx context.Context, id string) (*rod.Element, error) {
	nid, err := NormalizeID(id)
	if err != nil {
		return nil, err
	}
	t, err := b.activeTab()
	if err != nil {
		return nil, err
	}
	refs, err := b.lookup(ctx, t, []string{nid}, true)
	if err != nil {
		return nil, err
	}
	r := refs[0]
	target := t.id
	if r.sess != t.sess {
		b.mu.Lock()
		for fid, sid := range b.frameSess {
			if sid == r.sess {
				target = proto.TargetTargetID(fid)
			}
		}
		b.mu.Unlock()
	}
	p, err := b.rb.PageFromTarget(target)
	if err != nil {
		return nil, fmt.Errorf("driver: attach to the element's frame: %w", err)
	}
	return p.Context(ctx).ElementFromNode(&proto.DOMNode{BackendNodeID: r.backend})
}

// Upload sets one local file on the file input id of the latest snapshot.
func (b *Browser) Upload(ctx context.Context, id string, file string) error {
	b.opMu.Lock()
	defer b.opMu.Unlock()
	nid, err := NormalizeID(id)
	if err != nil {
		return err
	}
	st, err := os.Stat(file)
	if err != nil || !st.Mode().IsRegular() {
		return fmt.Errorf("driver: upload: %q is not a readable regular file", filepath.Base(file))
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return fmt.Errorf("driver: upload: %w", err)
	}
	t, err := b.activeTab()
	if err != nil {
		return err
	}
	refs, err := b.lookup(ctx, t, []string{nid}, true)
	if err != nil {
		return err
	}
	c := b.client(ctx, refs[0].sess)
	desc, err := proto.DOMDescribeNode{BackendNodeID: refs[0].backend}.Call(c)
	if err != nil {
		return &ActionError{Op: "upload", Kind: KindNotVisible, Reason: "the element is gone; take a new snapshot", Err: err}
	}
	isFile := strings.EqualFold(desc.Node.NodeName, "input")
	typ := ""
	for i := 0; i+1 < len(desc.Node.Attributes); i += 2 {
		if strings.EqualFold(desc.Node.Attributes[i], "type") {
			typ = strings.ToLower(desc.Node.Attributes[i+1])
		}
	}
	if !isFile || typ != "file" {
		return &ActionError{Op: "upload", Kind: KindInvalid, Reason: fmt.Sprintf("[%s] is not a file input; upload to an <input type=file>", nid)}
	}
	if err := (proto.DOMSetFileInputFiles{Files: []string{abs}, BackendNodeID: refs[0].backend}).Call(c); err != nil {
		return &ActionError{Op: "upload", Kind: KindBrowser, Reason: "the browser refused the file", Err: err}
	}
	return nil
}

// Run checks every id of the batch against the latest snapshot (a stale id
// refuses the whole batch with *StaleError and nothing is sent), then runs
// the actions one at a time. The first failure stops the batch: it is in
// RunResult.Failed and returned as *ActionError.
func (b *Browser) Run(ctx context.Context, actions []Action) (*RunResult, error) {
	b.opMu.Lock()
	defer b.opMu.Unlock()
	t, err := b.activeTab()
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, a := range actions {
		if a.ID != "" {
			ids = append(ids, a.ID)
		}
	}
	var refs map[string]ref
	b.mu.Lock()
	startNav := t.navSeq
	b.mu.Unlock()
	if len(ids) > 0 {
		rs, err := b.lookup(ctx, t, ids, true)
		if err != nil {
			return nil, err
		}
		refs = map[string]ref{}
		for i, id := range ids {
			refs[id] = rs[i]
		}
	}
	b.mu.Lock()
	b.runCtx = ctx
	openedBefore := b.ev.openSeq
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.runCtx = nil
		b.mu.Unlock()
	}()

	res := &RunResult{Total: len(actions)}
	var runErr error
	for i, a := range actions {
		var r ref
		if a.ID != "" {
			b.mu.Lock()
			moved := t.navSeq != startNav || b.active != t
			b.mu.Unlock()
			if moved {
				runErr = &ActionError{Index: i, Op: a.Op, Kind: KindStale, Reason: fmt.Sprintf("the page changed after an earlier action, so id [%s] is gone; take a new snapshot", a.ID)}
				break
			}
			r = refs[a.ID]
		}
		b.mu.Lock()
		deniedBefore := len(b.ev.denied)
		b.mu.Unlock()
		actx, cancel := context.WithTimeout(ctx, b.o.ActionTimeout)
		err := b.do(actx, t, a, r)
		cancel()
		if err == nil {
			err = b.settle(ctx, t, a)
		}
		b.mu.Lock()
		var denied []SentRequest
		if len(b.ev.denied) > deniedBefore {
			denied = append(denied, b.ev.denied[deniedBefore:]...)
		}
		b.mu.Unlock()
		if err == nil && len(denied) > 0 {
			d := denied[0]
			err = &ActionError{Kind: KindRefused, Reason: (&RefusedError{Method: d.Method, Origin: d.Origin, Path: d.Path}).Error(),
				Err: &RefusedError{Method: d.Method, Origin: d.Origin, Path: d.Path}}
		}
		if err != nil {
			var ae *ActionError
			if !errors.As(err, &ae) {
				ae = &ActionError{Kind: KindBrowser, Reason: truncate(err.Error(), 200), Err: err}
				if errors.Is(err, context.DeadlineExceeded) {
					ae.Kind, ae.Reason = KindTimeout, fmt.Sprintf("did not finish within %s; the page may be busy; wait, snapshot and retry", b.o.ActionTimeout)
				}
			}
			ae.Index, ae.Op = i, a.Op
			runErr = ae
			break
		}
		res.Completed++
		// A click that opened a tab is followed.
		if a.Op == "click" || a.Op == "press" {
			if nt := b.followPopup(ctx, t, openedBefore); nt != nil {
				t = nt
			}
		}
	}
	var ae *ActionError
	if errors.As(runErr, &ae) {
		res.Failed = &ActionFailure{Index: ae.Index, Op: ae.Op, Kind: ae.Kind, Reason: ae.Reason}
	}
	res.URL, res.Title = b.info(ctx)
	b.mu.Lock()
	for _, o := range b.tabs {
		if o.openedAt > openedBefore && !o.closed {
			res.TabsOpened = append(res.TabsOpened, Tab{ID: o.short, Active: o == b.active})
		}
	}
	res.Dialogs, res.ConsoleErrors, res.FailedRequests = b.ev.dialogs, b.ev.console, b.ev.failed
	res.Sent, res.Held, res.Denied = b.ev.sent, b.ev.held, b.ev.denied
	b.ev.dialogs, b.ev.console, b.ev.failed, b.ev.sent, b.ev.held, b.ev.denied = nil, nil, nil, nil, nil, nil
	b.mu.Unlock()
	for i := range res.TabsOpened {
		if tt := b.tabByShort(res.TabsOpened[i].ID); tt != nil {
			if ti, err := (proto.TargetGetTargetInfo{TargetID: tt.id}).Call(b.client(ctx, "")); err == nil {
				res.TabsOpened[i].URL, res.TabsOpened[i].Title = ti.TargetInfo.URL, ti.TargetInfo.Title
			}
		}
	}
	return res, runErr
}

// followPopup makes a tab opened by t since openedBefore the active one.
func (b *Browser) followPopup(ctx context.Context, t *tab, openedBefore int) *tab {
	// Flush the renderer so a window.open from the click has been announced.
	_, _ = proto.RuntimeEvaluate{Expression: "0"}.Call(b.client(ctx, t.sess))
	res, err := proto.TargetGetTargets{}.Call(b.client(ctx, ""))
	if err != nil {
		return nil
	}
	for _, ti := range res.TargetInfos {
		if ti.Type != proto.TargetTargetInfoTypePage || ti.OpenerID != t.id {
			continue
		}
		b.mu.Lock()
		known := b.tabs[ti.TargetID]
		b.mu.Unlock()
		if known != nil && known.openedAt <= openedBefore {
			continue
		}
		wctx, cancel := context.WithTimeout(ctx, b.o.ActionTimeout)
		nt, err := b.waitTab(wctx, ti.TargetID)
		cancel()
		if err == nil {
			b.mu.Lock()
			b.active = nt
			b.mu.Unlock()
			return nt
		}
	}
	return nil
}

// gateGrace is how long a gated session waits after an action for a request
// it caused to reach the gate.
const gateGrace = 300 * time.Millisecond

// settle waits, after an action, for gated requests to be decided and for a
// navigation the action started to load.
func (b *Browser) settle(ctx context.Context, t *tab, a Action) error {
	switch a.Op {
	case "click", "press", "goto", "back", "forward", "reload", "check", "uncheck", "select":
	default:
		return nil
	}
	// A round trip to the page lets events the action caused arrive first.
	_, _ = proto.RuntimeEvaluate{Expression: "0"}.Call(b.client(ctx, t.sess))
	if b.o.RequestGate != nil {
		// A request the action caused (a form's POST) can reach the gate a
		// little after the action: give it a moment, so the request is
		// decided within this run and listed in its result, not after it.
		grace := time.Now().Add(gateGrace)
		for time.Now().Before(grace) {
			b.mu.Lock()
			started := b.gating > 0 || t.loading
			b.mu.Unlock()
			if started {
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	deadline := time.Now().Add(b.o.ActionTimeout)
	for {
		b.mu.Lock()
		gating, loading := b.gating, t.loading && !t.closed && b.active == t
		b.mu.Unlock()
		if gating > 0 {
			deadline = time.Now().Add(b.o.ActionTimeout) // a person may be deciding; ctx bounds it
		} else if !loading || time.Now().After(deadline) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// do runs one action.
func (b *Browser) do(ctx context.Context, t *tab, a Action, r ref) error {
	page := b.client(ctx, t.sess)
	switch a.Op {
	case "click":
		n := a.Count
		if n == 0 {
			n = 1
		}
		btn := proto.InputMouseButtonLeft
		switch a.Button {
		case "right":
			btn = proto.InputMouseButtonRight
		case "middle":
			btn = proto.InputMouseButtonMiddle
		}
		x, y, err := b.point(ctx, t, r)
		if err != nil {
			return err
		}
		return b.click(page, x, y, btn, n)
	case "hover":
		x, y, err := b.point(ctx, t, r)
		if err != nil {
			return err
		}
		return proto.InputDispatchMouseEvent{Type: proto.InputDispatchMouseEventTypeMouseMoved, X: x, Y: y}.Call(page)
	case "fill":
		return b.fill(ctx, t, r, a.Value)
	case "type":
		if err := b.focus(ctx, r, false); err != nil {
			return err
		}
		return b.typeText(ctx, page, a.Text, time.Duration(a.DelayMS)*time.Millisecond)
	case "press":
		if a.ID != "" {
			if err := b.focus(ctx, r, false); err != nil {
				return err
			}
		}
		c, err := parseCombo(a.Key)
		if err != nil {
			return &ActionError{Kind: KindInvalid, Reason: err.Error()}
		}
		return b.press(page, c)
	case "select":
		return b.selectValues(ctx, r, a.Values)
	case "check", "uncheck":
		return b.setChecked(ctx, t, r, a.Op == "check")
	case "scroll":
		if a.ID != "" {
			_, err := b.callOn(ctx, r, `function(){ if(!this.isConnected) return "gone"; this.scrollIntoView({block:"center", inline:"nearest"}); return "" }`)
			return err
		}
		_, err := proto.RuntimeEvaluate{Expression: fmt.Sprintf("window.scrollBy(%d,%d)", a.DX, a.DY)}.Call(page)
		return err
	case "goto":
		res, err := proto.PageNavigate{URL: a.URL}.Call(page)
		if err != nil {
			return err
		}
		if res.ErrorText != "" {
			return &ActionError{Kind: KindNavigation, Reason: fmt.Sprintf("navigation failed: %s; check the URL", truncate(res.ErrorText, 80))}
		}
		b.markLoading(t)
		return nil
	case "back", "forward":
		h, err := proto.PageGetNavigationHistory{}.Call(page)
		if err != nil {
			return err
		}
		i := h.CurrentIndex - 1
		if a.Op == "forward" {
			i = h.CurrentIndex + 1
		}
		if i < 0 || i >= len(h.Entries) {
			return &ActionError{Kind: KindNavigation, Reason: fmt.Sprintf("there is no page to go %s to", a.Op)}
		}
		if err := (proto.PageNavigateToHistoryEntry{EntryID: h.Entries[i].ID}).Call(page); err != nil {
			return err
		}
		return nil
	case "reload":
		if err := (proto.PageReload{}).Call(page); err != nil {
			return err
		}
		b.markLoading(t)
		return nil
	case "switch_tab":
		if err := b.SwitchTab(ctx, a.Tab); err != nil {
			return &ActionError{Op: a.Op, Kind: KindInvalid, Reason: fmt.Sprintf("no tab %q; use an id from tabs_opened", a.Tab)}
		}
		return nil
	case "close_tab":
		id := a.Tab
		if id == "" {
			id = t.short
		}
		if err := b.CloseTab(ctx, id); err != nil {
			return &ActionError{Op: a.Op, Kind: KindInvalid, Reason: fmt.Sprintf("no tab %q; use an id from tabs_opened", id)}
		}
		return nil
	case "wait":
		return b.wait(ctx, t, a, r)
	}
	return &ActionError{Kind: KindInvalid, Reason: fmt.Sprintf("unknown op %q", a.Op)}
}

func (b *Browser) markLoading(t *tab) {
	b.mu.Lock()
	t.loading = true
	b.mu.Unlock()
}

func (b *Browser) click(page cdp, x, y float64, btn proto.InputMouseButton, n int) error {
	if err := (proto.InputDispatchMouseEvent{Type: proto.InputDispatchMouseEventTypeMouseMoved, X: x, Y: y}).Call(page); err != nil {
		return err
	}
	for i := 1; i <= n; i++ {
		if err := (proto.InputDispatchMouseEvent{Type: proto.InputDispatchMouseEventTypeMousePressed, X: x, Y: y, Button: btn, ClickCount: i}).Call(page); err != nil {
			return err
		}
		if err := (proto.InputDispatchMouseEvent{Type: proto.InputDispatchMouseEventTypeMouseReleased, X: x, Y: y, Button: btn, ClickCount: i}).Call(page); err != nil {
			return err
		}
	}
	return nil
}

// hitJS scrolls the element into view if needed and checks that the point
// at its centre reaches it, naming what covers it otherwise.
const hitJS = `function(){
const el=this;
if(!el.isConnected) return {err:"gone"};
let r=el.getBoundingClientRect();
if(r.width===0||r.height===0) return {err:"zero"};
const vw=window.innerWidth, vh=window.innerHeight;
if(r.top<0||r.left<0||r.bottom>vh||r.right>vw){ el.scrollIntoView({block:"center",inline:"center"}); r=el.getBoundingClientRect(); }
const x=r.left+r.width/2, y=r.top+r.height/2;
const root=el.getRootNode();
let hit=(root&&root.elementFromPoint)?root.elementFromPoint(x,y):document.elementFromPoint(x,y);
for(let i=0;i<20&&hit&&hit.shadowRoot;i++){const h=hit.shadowRoot.elementFromPoint(x,y); if(!h||h===hit) break; hit=h;}
if(!hit) return {err:"offscreen"};
for(let n=hit;n;n=n.parentNode||n.host){ if(n===el) return {ok:true}; }
const lab=hit.closest&&hit.closest("label"); if(lab&&lab.control===el) return {ok:true};
let d=hit.tagName.toLowerCase(); if(hit.id) d+="#"+hit.id;
if(typeof hit.className==="string"&&hit.className.trim()) d+="."+hit.className.trim().split(/\s+/).slice(0,2).join(".");
const t=(hit.innerText||hit.textContent||"").trim().replace(/\s+/g," ").slice(0,40); if(t) d+=' "'+t+'"';
return {covered:d};
}`

// point returns the viewport point (in the tab's coordinates) to click r at,
// failing fast with the cover's description when another element is on top.
func (b *Browser) point(ctx context.Context, t *tab, r ref) (float64, float64, error) {
	// An element in an out-of-process frame: bring its iframe into view first.
	if r.frame != nil && r.frame.oopif && r.frame.owner != 0 {
		_ = proto.DOMScrollIntoViewIfNeeded{BackendNodeID: r.frame.owner}.Call(b.client(ctx, r.frame.parent.sess))
	}
	res, err := b.callOn(ctx, r, hitJS)
	if err != nil {
		return 0, 0, err
	}
	m := res.Value.Map()
	if e := jstr(m["err"]); e != "" {
		why := map[string]string{"gone": "the element is gone from the page; take a new snapshot",
			"zero":      "the element has no size (hidden); scroll, open its menu, or take a new snapshot",
			"offscreen": "the element is outside the viewport and could not be scrolled into view"}[e]
		return 0, 0, &ActionError{Kind: KindNotVisible, Reason: why}
	}
	if c := jstr(m["covered"]); c != "" {
		return 0, 0, &ActionError{Kind: KindCovered, Cover: c,
			Reason: fmt.Sprintf("the element is covered by <%s>; close or scroll that away first, or act on it instead", c)}
	}
	q, err := proto.DOMGetContentQuads{BackendNodeID: r.backend}.Call(b.client(ctx, r.sess))
	if err != nil || len(q.Quads) == 0 || len(q.Quads[0]) < 8 {
		return 0, 0, &ActionError{Kind: KindNotVisible, Reason: "the element has no box on screen; take a new snapshot", Err: err}
	}
	quad := q.Quads[0]
	x := (quad[0] + quad[2] + quad[4] + quad[6]) / 4
	y := (quad[1] + quad[3] + quad[5] + quad[7]) / 4
	// Out-of-process frames report coordinates in their own viewport.
	for f := r.frame; f != nil && f.oopif && f.parent != nil; {
		bm, err := proto.DOMGetBoxModel{BackendNodeID: f.owner}.Call(b.client(ctx, f.parent.sess))
		if err != nil || len(bm.Model.Content) < 2 {
			return 0, 0, &ActionError{Kind: KindNotVisible, Reason: "the element's frame has no box on screen", Err: err}
		}
		x += bm.Model.Content[0]
		y += bm.Model.Content[1]
		// Climb to the next frame that lives in another session.
		p := f.parent
		for p != nil && !p.oopif {
			p = p.parent
		}
		f = p
	}
	return x, y, nil
}

// callOn calls a function on the element r, returning its value by value.
func (b *Browser) callOn(ctx context.Context, r ref, fn string, args ...interface{}) (*proto.RuntimeRemoteObject, error) {
	c := b.client(ctx, r.sess)
	obj, err := proto.DOMResolveNode{BackendNodeID: r.backend}.Call(c)
	if err != nil {
		return nil, &ActionError{Kind: KindNotVisible, Reason: "the element is gone from the page; take a new snapshot", Err: err}
	}
	defer func() {
		_ = proto.RuntimeReleaseObject{ObjectID: obj.Object.ObjectID}.Call(b.client(context.Background(), r.sess))
	}()
	res, err := proto.RuntimeCallFunctionOn{ObjectID: obj.Object.ObjectID, FunctionDeclaration: fn, Arguments: argsOf(args), ReturnByValue: true, AwaitPromise: true}.Call(c)
	if err != nil {
		return nil, err
	}
	if res.ExceptionDetails != nil {
		return nil, &ActionError{Kind: KindInvalid, Reason: "the page threw while acting: " + truncate(res.ExceptionDetails.Text, 100)}
	}
	return res.Result, nil
}

func argsOf(args []interface{}) []*proto.RuntimeCallArgument {
	out := make([]*proto.RuntimeCallArgument, 0, len(args))
	for _, a := range args {
		out = append(out, &proto.RuntimeCallArgument{Value: gson.New(a)})
	}
	return out
}

const focusJS = `function(selectAll){
const el=this;
if(!el.isConnected) return "gone";
el.scrollIntoView({block:"nearest",inline:"nearest"});
el.focus();
const doc=el.ownerDocument, act=(el.getRootNode().activeElement||doc.activeElement);
if(act!==el && !el.contains(act)) return "notfocusable";
if(selectAll){
 if(typeof el.select==="function" && ("value" in el)) { try{ el.select(); }catch(e){} }
 else if(el.isContentEditable){ const r=doc.createRange(); r.selectNodeContents(el); const s=doc.getSelection(); s.removeAllRanges(); s.addRange(r); }
} else if (("value" in el) && typeof el.setSelectionRange==="function") {
 try{ const n=el.value.length; el.setSelectionRange(n,n); }catch(e){}
}
return "";
}`

func (b *Browser) focus(ctx context.Context, r ref, selectAll bool) error {
	res, err := b.callOn(ctx, r, focusJS, selectAll)
	if err != nil {
		return err
	}
	switch res.Value.Str() {
	case "gone":
		return &ActionError{Kind: KindNotVisible, Reason: "the element is gone from the page; take a new snapshot"}
	case "notfocusable":
		return &ActionError{Kind: KindInvalid, Reason: "the element cannot take focus or text; pick a text field"}
	}
	return nil
}

// kindJS classifies a fill target.
const kindJS = `function(){
const el=this, tag=el.tagName.toLowerCase(), type=(el.getAttribute("type")||"").toLowerCase();
if(tag==="select") return "select";
if(tag==="input"&&["checkbox","radio"].includes(type)) return "check";
if(tag==="input"&&["file"].includes(type)) return "file";
if(tag==="input"&&["date","time","datetime-local","month","week","color","range"].includes(type)) return "direct";
if(tag==="input"||tag==="textarea"||el.isContentEditable) return "text";
return "other";
}`

const setValueJS = `function(v){ this.focus(); this.value=v; this.dispatchEvent(new Event("input",{bubbles:true})); this.dispatchEvent(new Event("change",{bubbles:true})); return this.value===v ? "" : "rejected"; }`

func (b *Browser) fill(ctx context.Context, t *tab, r ref, value string) error {
	res, err := b.callOn(ctx, r, kindJS)
	if err != nil {
		return err
	}
	switch res.Value.Str() {
	case "select":
		return &ActionError{Kind: KindInvalid, Reason: "the element is a <select>; use select with values"}
	case "check":
		return &ActionError{Kind: KindInvalid, Reason: "the element is a checkbox or radio; use check or uncheck"}
	case "file":
		return &ActionError{Kind: KindInvalid, Reason: "the element is a file input; use upload"}
	case "other":
		return &ActionError{Kind: KindInvalid, Reason: "the element is not a text field; pick a textbox from the snapshot"}
	case "direct":
		v, err := b.callOn(ctx, r, setValueJS, value)
		if err != nil {
			return err
		}
		if v.Value.Str() != "" {
			return &ActionError{Kind: KindInvalid, Reason: "the field rejected the value; check its format"}
		}
		return nil
	}
	if err := b.focus(ctx, r, true); err != nil {
		return err
	}
	page := b.client(ctx, t.sess)
	if value == "" {
		return b.press(page, combo{key: input.Delete})
	}
	return proto.InputInsertText{Text: value}.Call(page)
}

func (b *Browser) typeText(ctx context.Context, page cdp, text string, delay time.Duration) error {
	for _, ch := range text {
		k := input.Key(ch)
		if ch != '\n' && knownKey(k) {
			info := k.Info()
			s := string(ch)
			if err := (proto.InputDispatchKeyEvent{Type: proto.InputDispatchKeyEventTypeKeyDown, Key: s, Code: info.Code,
				Text: s, UnmodifiedText: s, WindowsVirtualKeyCode: info.KeyCode}).Call(page); err != nil {
				return err
			}
			if err := (proto.InputDispatchKeyEvent{Type: proto.InputDispatchKeyEventTypeKeyUp, Key: s, Code: info.Code,
				WindowsVirtualKeyCode: info.KeyCode}).Call(page); err != nil {
				return err
			}
		} else if ch == '\n' {
			if err := b.press(page, combo{key: input.Enter}); err != nil {
				return err
			}
		} else if err := (proto.InputInsertText{Text: string(ch)}).Call(page); err != nil {
			return err
		}
		if delay > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(delay):
			}
		}
	}
	return nil
}

func modBit(k input.Key) int {
	switch k {
	case input.AltLeft:
		return 1
	case input.ControlLeft:
		return 2
	case input.MetaLeft:
		return 4
	case input.ShiftLeft:
		return 8
	}
	return 0
}

func (b *Browser) press(page cdp, c combo) error {
	mods := 0
	for _, m := range c.mods {
		info := m.Info()
		mods |= modBit(m)
		if err := (proto.InputDispatchKeyEvent{Type: proto.InputDispatchKeyEventTypeRawKeyDown, Key: info.Key, Code: info.Code,
			WindowsVirtualKeyCode: info.KeyCode, Modifiers: mods, Location: intp(info.Location)}).Call(page); err != nil {
			return err
		}
	}
	info := c.key.Info()
	text := ""
	if mods&^8 == 0 { // only Shift (or nothing) types text
		switch {
		case c.key == input.Enter:
			text = "\r"
		case len([]rune(info.Key)) == 1:
			text = info.Key
			if mods&8 != 0 {
				if sk, ok := c.key.Shift(); ok {
					text = sk.Info().Key
				} else {
					text = strings.ToUpper(text)
				}
			}
		}
	}
	typ := proto.InputDispatchKeyEventTypeKeyDown
	if text == "" {
		typ = proto.InputDispatchKeyEventTypeRawKeyDown
	}
	if err := (proto.InputDispatchKeyEvent{Type: typ, Key: info.Key, Code: info.Code, Text: text, UnmodifiedText: text,
		WindowsVirtualKeyCode: info.KeyCode, Modifiers: mods, Location: intp(info.Location)}).Call(page); err != nil {
		return err
	}
	if err := (proto.InputDispatchKeyEvent{Type: proto.InputDispatchKeyEventTypeKeyUp, Key: info.Key, Code: info.Code,
		WindowsVirtualKeyCode: info.KeyCode, Modifiers: mods, Location: intp(info.Location)}).Call(page); err != nil {
		return err
	}
	for i := len(c.mods) - 1; i >= 0; i-- {
		m := c.mods[i]
		info := m.Info()
		mods &^= modBit(m)
		if err := (proto.InputDispatchKeyEvent{Type: proto.InputDispatchKeyEventTypeKeyUp, Key: info.Key, Code: info.Code,
			WindowsVirtualKeyCode: info.KeyCode, Modifiers: mods, Location: intp(info.Location)}).Call(page); err != nil {
			return err
		}
	}
	return nil
}

const selectJS = `function(values){
const el=this;
if(el.tagName.toLowerCase()!=="select") return {err:"notselect"};
if(el.disabled) return {err:"disabled"};
const opts=Array.from(el.options);
const picked=[];
for(const v of values){
  const o=opts.find(o=>o.value===v)||opts.find(o=>o.label.trim()===v.trim())||opts.find(o=>o.textContent.trim()===v.trim());
  if(!o) return {err:"missing", value:v, have:opts.slice(0,15).map(o=>o.label.trim()||o.value)};
  picked.push(o);
}
if(picked.length>1&&!el.multiple) return {err:"single"};
for(const o of opts) o.selected=picked.includes(o);
el.dispatchEvent(new Event("input",{bubbles:true}));
el.dispatchEvent(new Event("change",{bubbles:true}));
return {ok:true};
}`

func (b *Browser) selectValues(ctx context.Context, r ref, values []string) error {
	res, err := b.callOn(ctx, r, selectJS, values)
	if err != nil {
		return err
	}
	m := res.Value.Map()
	switch jstr(m["err"]) {
	case "":
		return nil
	case "notselect":
		return &ActionError{Kind: KindInvalid, Reason: "the element is not a <select>; click it, then click the option"}
	case "disabled":
		return &ActionError{Kind: KindInvalid, Reason: "the select is disabled"}
	case "single":
		return &ActionError{Kind: KindInvalid, Reason: "the select takes one value; give one"}
	default:
		var have []string
		for _, h := range m["have"].Arr() {
			have = append(have, strconv.Quote(truncate(h.Str(), 40)))
		}
		return &ActionError{Kind: KindInvalid, Reason: fmt.Sprintf("no option %q; options include %s", truncate(jstr(m["value"]), 40), strings.Join(have, ", "))}
	}
}

const checkedJS = `function(){ const el=this;
if("checked" in el && el.tagName.toLowerCase()==="input") return el.checked?"true":"false";
const a=el.getAttribute("aria-checked")||el.getAttribute("aria-pressed"); return a===null?"none":a; }`

func (b *Browser) setChecked(ctx context.Context, t *tab, r ref, want bool) error {
	res, err := b.callOn(ctx, r, checkedJS)
	if err != nil {
		return err
	}
	state := res.Value.Str()
	if state == "none" {
		return &ActionError{Kind: KindInvalid, Reason: "the element is not a checkbox, radio or switch; use click"}
	}
	if (state == "true") == want {
		return nil
	}
	x, y, err := b.point(ctx, t, r)
	if err != nil {
		return err
	}
	if err := b.click(b.client(ctx, t.sess), x, y, proto.InputMouseButtonLeft, 1); err != nil {
		return err
	}
	res, err = b.callOn(ctx, r, checkedJS)
	if err != nil {
		return err
	}
	if (res.Value.Str() == "true") != want {
		return &ActionError{Kind: KindInvalid, Reason: "the click did not change the state (a radio cannot be unchecked; the page may block it)"}
	}
	return nil
}

const visibleJS = `function(){ const r=this.getBoundingClientRect(); return this.isConnected && r.width>0 && r.height>0; }`

// wait polls a condition until it holds or the action's timeout passes.
func (b *Browser) wait(ctx context.Context, t *tab, a Action, r ref) error {
	if a.MS > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(a.MS) * time.Millisecond):
			return nil
		}
	}
	page := b.client(ctx, t.sess)
	check := func() (bool, error) {
		switch {
		case a.Text != "":
			res, err := proto.RuntimeEvaluate{Expression: "!!document.body && document.body.innerText.includes(" + strconv.Quote(a.Text) + ")", ReturnByValue: true}.Call(page)
			if err != nil || res.ExceptionDetails != nil {
				return false, err
			}
			return res.Result.Value.Bool(), nil
		case a.ID != "":
			res, err := b.callOn(ctx, r, visibleJS)
			if err != nil {
				return false, err
			}
			return res.Value.Bool(), nil
		case a.URL != "":
			loc, _ := b.docInfo(ctx, t.sess)
			return urlMatches(a.URL, loc), nil
		case a.Load:
			res, err := proto.RuntimeEvaluate{Expression: `document.readyState`, ReturnByValue: true}.Call(page)
			if err != nil || res.ExceptionDetails != nil {
				return false, nil // mid-navigation
			}
			return res.Result.Value.Str() == "complete", nil
		}
		return true, nil
	}
	for {
		ok, err := check()
		if err != nil && ctx.Err() == nil && a.ID != "" {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			what := map[bool]string{true: "text " + strconv.Quote(truncate(a.Text, 40))}[a.Text != ""]
			if what == "" {
				what = "the condition"
			}
			return &ActionError{Kind: KindTimeout, Reason: fmt.Sprintf("%s did not appear within %s; snapshot to see the page", what, b.o.ActionTimeout), Err: ctx.Err()}
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// urlMatches: a pattern with * is a glob over the whole URL, else a substring.
func urlMatches(pattern, u string) bool {
	if !strings.Contains(pattern, "*") {
		return strings.Contains(u, pattern)
	}
	// path.Match treats / specially; compare with / mapped away.
	p := strings.ReplaceAll(pattern, "/", "\x00")
	s := strings.ReplaceAll(u, "/", "\x00")
	ok, err := path.Match(p, s)
	return err == nil && ok
}

func intp(n int) *int { return &n }

// jstr reads a JSON string, "" when absent (gson's Str renders nil as "<nil>").
func jstr(j gson.JSON) string {
	if j.Nil() {
		return ""
	}
	return j.Str()
}
