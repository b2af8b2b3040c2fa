package driver

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-rod/rod/lib/input"
	"github.com/go-rod/rod/lib/proto"
	"github.com/ysmood/gson"
)

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
		return nil, &ActionError{Kind: KindInvalid, Reason: "the page threw while acting: " + b.clip(res.ExceptionDetails.Text, 100)}
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
			have = append(have, strconv.Quote(b.clip(h.Str(), 40)))
		}
		return &ActionError{Kind: KindInvalid, Reason: fmt.Sprintf("no option %q; options include %s", b.clip(jstr(m["value"]), 40), strings.Join(have, ", "))}
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

// jstr reads a JSON string, "" when absent (gson's Str renders nil as "<nil>").
func jstr(j gson.JSON) string {
	if j.Nil() {
		return ""
	}
	return j.Str()
}
