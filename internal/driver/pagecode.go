package driver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-rod/rod/lib/proto"
)

// MaxEvalBytes bounds the JSON a page-side function may return to a cell.
const MaxEvalBytes = 64 << 10

// ErrSecretTyped refuses page-side code in a session where a secret was
// typed: the page's own script could read it back.
var ErrSecretTyped = errors.New("page.eval is off in this session because a {{secret:NAME}} value was typed into it, and code in the page could read it back; read the page with snapshot, text or attr instead (their answers are redacted), or use a new session")

// ErrPageCodeRan refuses typing a secret in a session where a cell ran
// code in the page: what that code started (a timer, a listener) may still
// run, and could read the field back and write it, re-spelled, where the
// redactor does not recognise it.
var ErrPageCodeRan = errors.New("a {{secret:NAME}} value is not typed in this session because page.eval ran code in it, and code it started may still be running and could read the secret back; type the secret in a new session, before any page.eval")

// Hold makes ctx the context the request gate sees between calls as well
// as during them, until release is called: a code cell's requests are
// journalled and held for approval exactly as a batch's, also when the page
// sends one while the cell is computing between page calls.
func (b *Browser) Hold(ctx context.Context) (release func()) {
	return b.gateSees(&b.holdCtx, ctx)
}

// gateSees puts ctx in slot (runCtx or holdCtx, read by the request gate)
// until restore puts back what was there.
func (b *Browser) gateSees(slot *context.Context, ctx context.Context) (restore func()) {
	b.mu.Lock()
	prev := *slot
	*slot = ctx
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		*slot = prev
		b.mu.Unlock()
	}
}

// textJS (js/text.js) reads an element's rendered text.
var textJS = program("text.js")

// attrJS (js/attr.js) reads an element's attribute.
var attrJS = program("attr.js")

// Text returns the rendered text of the element id names in the latest
// snapshot, redacted and cut to the snapshot's bound. A stale id fails
// with *StaleError.
func (b *Browser) Text(ctx context.Context, id string) (string, error) {
	v, _, err := b.onElement(ctx, id, textJS)
	return v, err
}

// Attr returns an attribute of the element id names (value and checked
// read the live property), redacted; ok is false when it has none.
func (b *Browser) Attr(ctx context.Context, id, name string) (string, bool, error) {
	return b.onElement(ctx, id, attrJS, name)
}

func (b *Browser) onElement(ctx context.Context, id, fn string, args ...any) (string, bool, error) {
	b.opMu.Lock()
	defer b.opMu.Unlock()
	nid, err := NormalizeID(id)
	if err != nil {
		return "", false, &ParseError{Index: -1, Reason: err.Error()}
	}
	t, err := b.tabNow(ctx)
	if err != nil {
		return "", false, err
	}
	ctx, cancel := b.pageCtx(ctx, t)
	defer cancel()
	refs, err := b.lookup(ctx, t, []string{nid}, true)
	if err != nil {
		return "", false, pendingErr(ctx, err)
	}
	res, err := b.callOn(ctx, refs[0], fn, args...)
	if err != nil {
		return "", false, pendingErr(ctx, err)
	}
	m := res.Value.Map()
	if _, gone := m["gone"]; gone {
		return "", false, &StaleError{ID: nid, Reason: "is no longer on the page"}
	}
	v, ok := m["v"]
	if !ok {
		return "", false, nil
	}
	return b.clip(v.Str(), b.o.MaxSnapshotChars), true, nil
}

// evalJS (js/eval.js) runs a cell's function (or expression) in the page's
// main world with JSON arguments and returns its result as JSON.
var evalJS = program("eval.js")

// evalExpr puts args (a JSON array) and source into evalJS in one pass, so
// neither's text is read for the other's placeholder.
func evalExpr(args, source string) string {
	return strings.NewReplacer("__ARGS__", args, "__SOURCE__", source).Replace(evalJS)
}

// Eval runs source (a function's source, called with args, a JSON array;
// or an expression) in the active tab's main world and returns the result
// as JSON, redacted. It is refused in a session where a secret was typed;
// once it ran, no secret is typed in the session (ErrPageCodeRan): code it
// started may outlive the call.
func (b *Browser) Eval(ctx context.Context, source, args string) (json.RawMessage, error) {
	b.opMu.Lock()
	defer b.opMu.Unlock()
	if args == "" {
		args = "[]"
	}
	if !json.Valid([]byte(args)) {
		return nil, &ParseError{Index: -1, Reason: "eval arguments must be a JSON array"}
	}
	b.mu.Lock()
	typed := b.armed.Len() > 0
	if !typed {
		// Marked before anything is sent: from here the page may hold
		// code of the cell's.
		b.pageCode = true
	}
	b.mu.Unlock()
	if typed {
		return nil, ErrSecretTyped
	}
	t, err := b.tabNow(ctx)
	if err != nil {
		return nil, err
	}
	defer b.gateSees(&b.runCtx, ctx)()
	pctx, pcancel := b.pageCtx(ctx, t)
	defer pcancel()
	actx, cancel := context.WithTimeout(pctx, b.o.ActionTimeout)
	defer cancel()
	began := time.Now()
	res, err := proto.RuntimeEvaluate{Expression: evalExpr(args, source), ReturnByValue: true, AwaitPromise: true, UserGesture: true}.Call(b.client(actx, t.sess))
	if err != nil {
		if pe := pendingErr(pctx, err); pe != err {
			return nil, pe
		}
		if actx.Err() != nil {
			// Cut short (its timeout, or the cell's): a page function that
			// never yields would hold the page for every later call; stop it.
			if be := b.stopBusy(ctx, t, time.Since(began)); be != nil {
				return nil, &ActionError{Op: "eval", Kind: KindTimeout, Reason: "the page function did not finish: " + be.Error(), Err: be}
			}
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, &ActionError{Op: "eval", Kind: KindTimeout, Reason: fmt.Sprintf("the page function did not finish within %s", b.o.ActionTimeout)}
		}
		return nil, err
	}
	if d := res.ExceptionDetails; d != nil {
		msg := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			msg = d.Exception.Description
		}
		return nil, &ActionError{Op: "eval", Kind: KindInvalid, Reason: "the page function threw: " + b.clip(msg, 300)}
	}
	if res.Result == nil || res.Result.Value.Nil() {
		return json.RawMessage("null"), nil
	}
	s := res.Result.Value.Str()
	if len(s) > MaxEvalBytes {
		return nil, &ActionError{Op: "eval", Kind: KindInvalid, Reason: fmt.Sprintf("the page function returned %d bytes of JSON, over the %d-byte limit; return less", len(s), MaxEvalBytes)}
	}
	if b.o.Redact != nil {
		s = b.o.Redact(s)
	}
	if !json.Valid([]byte(s)) {
		return nil, &ActionError{Op: "eval", Kind: KindInvalid, Reason: "the page function's result is not JSON"}
	}
	return json.RawMessage(s), nil
}
