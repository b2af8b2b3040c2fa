package driver

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/go-rod/rod/lib/proto"
)

// gateGrace is how long a gated session waits after an action for a request
// it caused to reach the gate.
const gateGrace = 300 * time.Millisecond

// loadGrace is how long, after a navigation an action made as a side
// effect has parsed its document (DOMContentLoaded), the answer waits for
// the page's load event. Past it the run answers with the page as it is
// and says it was still loading (RunResult.Loading): a slow image or a
// late script no longer holds a click's answer.
const loadGrace = 250 * time.Millisecond

// settle waits, after an action, for gated requests to be decided and for a
// navigation the action started to load. goto, back, forward and reload
// wait for the load event (within the action timeout): loading a page is
// what they were asked for. Other actions that navigate wait for the new
// document to be parsed and then at most loadGrace for its load; early
// says the answer did not wait for it.
func (b *Browser) settle(ctx context.Context, t *tab, a Action) (early bool, err error) {
	graced := false
	switch a.Op {
	case "goto", "back", "forward", "reload":
	case "click", "press", "check", "uncheck", "select":
		graced = true
	default:
		return false, nil
	}
	// A round trip to the page lets events the action caused arrive first.
	// Bounded: Chrome holds it if the action started a navigation whose
	// server does not answer.
	rctx, rcancel := b.pageCtx(ctx, t)
	_, perr := proto.RuntimeEvaluate{Expression: "0"}.Call(b.client(rctx, t.sess))
	var be *BusyError
	if errors.As(pendingErr(rctx, perr), &be) {
		// The action set off a script that does not stop (a handler's
		// endless loop); it was stopped, and the action failed.
		rcancel()
		return false, be
	}
	rcancel()
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
				return false, ctx.Err()
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	deadline := time.Now().Add(b.o.ActionTimeout)
	var parsedAt time.Time
	for {
		b.mu.Lock()
		gating, loading, parsed := b.gating, t.loading && !t.closed && b.active == t, t.parsed
		b.mu.Unlock()
		switch {
		case gating > 0:
			deadline = time.Now().Add(b.o.ActionTimeout) // a person may be deciding; ctx bounds it
		case !loading:
			return false, nil
		case time.Now().After(deadline):
			// Still loading at the action's bound (a server that sends
			// part of a page and keeps the connection, a form's POST not
			// yet answered): answer, and say the load was not waited out.
			return true, nil
		case graced && parsed:
			if parsedAt.IsZero() {
				parsedAt = time.Now()
			} else if time.Since(parsedAt) >= loadGrace {
				return true, nil
			}
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// visibleJS (js/visible.js) tells whether an element has a box on screen.
var visibleJS = program("visible.js")

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
		case a.Locator != nil:
			_, _, err := b.locate(ctx, t, *a.Locator)
			var le *LocatorError
			if errors.As(err, &le) && le.Found == 0 {
				return false, nil
			}
			return err == nil, err
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
		if err != nil && ctx.Err() == nil && (a.ID != "" || a.Locator != nil) {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			var what string
			switch {
			case a.Locator != nil:
				what = "an element matching " + locatorText(*a.Locator) + " did not appear"
			case a.Text != "":
				what = "text " + strconv.Quote(b.clip(a.Text, 40)) + " did not appear"
			case a.ID != "":
				what = "element [" + a.ID + "] did not become visible"
			case a.URL != "":
				what = "the URL did not match " + strconv.Quote(b.clip(a.URL, 80))
			case a.Load:
				what = "the page did not finish loading"
			default:
				what = "the condition did not hold"
			}
			return &ActionError{Kind: KindTimeout, Reason: fmt.Sprintf("waited for it, but %s within %s; take a snapshot to see the page, then wait again or go on", what, b.o.ActionTimeout), Err: ctx.Err()}
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
