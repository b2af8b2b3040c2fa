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

// hitJS (js/hit.js) checks that a click at the element's centre reaches it.
var hitJS = program("hit.js")

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
	if m["hover"].Bool() {
		// Shown only while the pointer is over the element that holds it
		// (the snapshot said shown-on-hover): move the pointer there, then
		// check again.
		x, y, err := b.center(ctx, r)
		if err != nil {
			return 0, 0, err
		}
		if err := (proto.InputDispatchMouseEvent{Type: proto.InputDispatchMouseEventTypeMouseMoved, X: x, Y: y}).Call(b.client(ctx, t.sess)); err != nil {
			return 0, 0, err
		}
		if res, err = b.callOn(ctx, r, hitJS); err != nil {
			return 0, 0, err
		}
		m = res.Value.Map()
		if m["hover"].Bool() {
			return 0, 0, &ActionError{Kind: KindNotVisible, Reason: "the element stays hidden with the pointer over it; take a new snapshot"}
		}
	}
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
	return b.center(ctx, r)
}

// center is the viewport point (in the tab's coordinates) at the centre of
// r's box.
func (b *Browser) center(ctx context.Context, r ref) (float64, float64, error) {
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

// focusJS (js/focus.js) focuses the element, selecting its text if asked.
var focusJS = program("focus.js")

// refusals maps a page program's answers to the refusal each one means.
type refusals map[string]ActionError

// answer calls fn on the element and returns its string answer, or the
// refusal that answer means.
func (b *Browser) answer(ctx context.Context, r ref, fn string, refuse refusals, args ...interface{}) (string, error) {
	res, err := b.callOn(ctx, r, fn, args...)
	if err != nil {
		return "", err
	}
	got := res.Value.Str()
	if e, ok := refuse[got]; ok {
		return got, &e
	}
	return got, nil
}

var focusRefusals = refusals{
	"gone":         {Kind: KindNotVisible, Reason: "the element is gone from the page; take a new snapshot"},
	"notfocusable": {Kind: KindInvalid, Reason: "the element cannot take focus or text; pick a text field"},
}

func (b *Browser) focus(ctx context.Context, r ref, selectAll bool) error {
	_, err := b.answer(ctx, r, focusJS, focusRefusals, selectAll)
	return err
}

// kindJS (js/kind.js) classifies a fill target.
var kindJS = program("kind.js")

// setValueJS (js/setvalue.js) sets an input's value directly.
var setValueJS = program("setvalue.js")

var fillRefusals = refusals{
	"select": {Kind: KindInvalid, Reason: "the element is a <select>; use select with values"},
	"check":  {Kind: KindInvalid, Reason: "the element is a checkbox or radio; use check or uncheck"},
	"file":   {Kind: KindInvalid, Reason: "the element is a file input; use upload"},
	"other":  {Kind: KindInvalid, Reason: "the element is not a text field; pick a textbox from the snapshot"},
}

func (b *Browser) fill(ctx context.Context, t *tab, r ref, value string) error {
	kind, err := b.answer(ctx, r, kindJS, fillRefusals)
	if err != nil {
		return err
	}
	if kind == "direct" {
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

// selectJS (js/select.js) picks a <select>'s options.
var selectJS = program("select.js")

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

// checkedJS (js/checked.js) reads a checkbox, radio or switch's state.
var checkedJS = program("checked.js")

var checkedRefusals = refusals{
	"none": {Kind: KindInvalid, Reason: "the element is not a checkbox, radio or switch; use click"},
}

func (b *Browser) setChecked(ctx context.Context, t *tab, r ref, want bool) error {
	state, err := b.answer(ctx, r, checkedJS, checkedRefusals)
	if err != nil {
		return err
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
	state, err = b.answer(ctx, r, checkedJS, nil)
	if err != nil {
		return err
	}
	if (state == "true") != want {
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

// ableJS (js/able.js) says whether an element is disabled or read-only.
var ableJS = program("able.js")

// unableOps are the ops a disabled element cannot take (fill and type are
// refused by a read-only field too).
var unableOps = map[string]bool{"click": true, "fill": true, "type": true, "press": true, "select": true, "check": true, "uncheck": true}

// unable refuses action a on its element r before anything is sent to the
// page when the element is disabled or, for fill and type, read-only. It
// reads the element in the snapshot's isolated world, so a page's own
// patches of the DOM's methods do not answer; an element it cannot read is
// left to the action to report.
func (b *Browser) unable(ctx context.Context, a Action, r ref) error {
	if !unableOps[a.Op] || a.ID == "" || r.backend == 0 {
		return nil
	}
	var res *proto.RuntimeRemoteObject
	if r.ctxID != 0 {
		c := b.client(ctx, r.sess)
		if obj, err := (proto.DOMResolveNode{BackendNodeID: r.backend, ExecutionContextID: r.ctxID}).Call(c); err == nil {
			got, err := proto.RuntimeCallFunctionOn{ObjectID: obj.Object.ObjectID, FunctionDeclaration: ableJS, Arguments: argsOf([]interface{}{a.Op}), ReturnByValue: true}.Call(c)
			_ = proto.RuntimeReleaseObject{ObjectID: obj.Object.ObjectID}.Call(b.client(context.Background(), r.sess))
			if err == nil && got.ExceptionDetails == nil {
				res = got.Result
			}
		}
	}
	if res == nil { // the world is gone: ask the page's own
		var err error
		if res, err = b.callOn(ctx, r, ableJS, a.Op); err != nil {
			return nil
		}
	}
	what := fmt.Sprintf("[%s] %s", a.ID, r.role)
	if r.name != "" {
		what += " " + strconv.Quote(b.clip(r.name, 60))
	}
	switch res.Value.Str() {
	case "disabled":
		return &ActionError{Kind: KindInvalid, Reason: what + " is disabled: the page does not accept it yet; snapshot to see what it needs first"}
	case "readonly":
		verb := "filled"
		if a.Op == "type" {
			verb = "typed into"
		}
		return &ActionError{Kind: KindInvalid, Reason: what + " is read-only: it cannot be " + verb}
	}
	return nil
}
