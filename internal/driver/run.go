package driver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/go-rod/rod/lib/proto"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/listed"
)

// RunOptions choose what a Run reports besides its actions.
type RunOptions struct {
	// Observe, "full" or "interactive" (the snapshot's modes), walks the
	// page before and after the batch and reports what changed
	// (RunResult.Observed: the changes it made to the page, or the whole
	// page, saying why, when it went to another; it becomes the latest
	// snapshot); "" does not.
	Observe string
}

// lookup resolves ids against the latest snapshot of tab t, refusing stale
// ones. With resolve, each ref also gets its element's backend node id.
func (b *Browser) lookup(ctx context.Context, t *tab, ids []string, resolve bool) ([]ref, error) {
	b.mu.Lock()
	s := b.snap
	nav := t.navSeq
	gone := s != nil && s.tab != nil && s.tab.closed
	b.mu.Unlock()
	if s == nil {
		return nil, ErrNoSnapshot
	}
	if s.tab != t {
		if gone {
			return nil, &StaleError{Reason: "the snapshot's tab was closed"}
		}
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
	// Events may lag the page: the URL is the authority on SPA route
	// changes (not its fragment: a jump to an anchor is the same page).
	if loc, _ := b.docInfo(ctx, t.sess); loc != "" && noFragment(loc) != noFragment(s.url) {
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

// Run checks every id of the batch against the latest snapshot (a stale id
// refuses the whole batch with *StaleError and nothing is sent), then runs
// the actions one at a time. The first failure stops the batch: it is in
// RunResult.Failed and returned as *ActionError. The result's lists hold
// what happened since the previous Run, bounded. Its Held lists the
// requests the RequestGate refused (decision denied), none of which left
// the browser; a caller that keeps the gate's journal (who decided, what
// was approved and sent) may put that in its place. A refusal fails an
// action (*RefusedError) only when the refused request was the navigation
// the action made (a form's submission); one a page's script sent, even
// from the action's handler, leaves the action done.
func (b *Browser) Run(ctx context.Context, actions []Action, opts RunOptions) (*contract.RunResult, error) {
	b.opMu.Lock()
	defer b.opMu.Unlock()
	t, err := b.tabNow(ctx)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, a := range actions {
		if a.ID != "" {
			ids = append(ids, a.ID)
		}
	}
	for i, a := range actions {
		// Refused before anything is sent: typing that cannot finish
		// within the action's bound would stop with half the text typed.
		if a.Op == "type" && a.DelayMS > 0 {
			if need := time.Duration(a.DelayMS) * time.Millisecond * time.Duration(utf8.RuneCountInString(a.Text)); need > b.o.ActionTimeout {
				return nil, &ParseError{Index: i, Reason: fmt.Sprintf("typing %d characters %d ms apart takes %s, past the %s an action may take: lower delay_ms, or split the text over several type actions", utf8.RuneCountInString(a.Text), a.DelayMS, need, b.o.ActionTimeout)}
			}
		}
	}
	var refs map[string]ref
	b.mu.Lock()
	startNav := t.navSeq
	b.mu.Unlock()
	// Before anything is sent: a page waiting on a server answers nothing.
	pctx, pcancel := b.pageCtx(ctx, t)
	defer pcancel()
	if len(ids) > 0 {
		rs, err := b.lookup(pctx, t, ids, true)
		if err != nil {
			return nil, pendingErr(pctx, err)
		}
		refs = map[string]ref{}
		for i, id := range ids {
			refs[id] = rs[i]
		}
	}
	var before, seen *kept
	// The walk that keeps the page before the run also finds the first
	// action's locator: nothing ran between them, and a walk is the
	// largest part of a locator's cost.
	var beforeR *renderer
	var beforeDocs []*frameDoc
	if opts.Observe != "" {
		seen = b.lookedAt()
		before, beforeR, beforeDocs = b.walkWhole(pctx, t, "driver: walk before observing")
		if err := pageCtxCause(pctx); err != nil {
			return nil, err
		}
	}
	pcancel()
	b.mu.Lock()
	b.runCtx = ctx
	openedBefore := b.ev.openSeq
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.runCtx = nil
		b.mu.Unlock()
	}()

	res := &contract.RunResult{Total: len(actions)}
	var runErr error
	answeredEarly := false // a navigation's load was not waited for
	for i, a := range actions {
		var r ref
		if a.Locator != nil && a.Op != "wait" {
			// Found on the page as it is now, so an earlier action of
			// the batch may have made it.
			var lr ref
			var id int
			var err error
			// The walk before the batch serves when it read the whole
			// page; else locate looks past a snapshot's bound.
			if i == 0 && before != nil && before.tab == t && before.navSeq == startNav && !beforeR.partial {
				lr, id, err = b.locateIn(t, beforeR, beforeDocs, *a.Locator)
			} else {
				lr, id, err = b.locate(ctx, t, *a.Locator)
			}
			if err == nil {
				if _, lr.backend, err = b.describe(ctx, lr); err != nil {
					err = &StaleError{ID: strconv.Itoa(id), Reason: "left the page as it was found"}
				}
			}
			if err != nil {
				kind := KindStale
				var le *LocatorError
				if errors.As(err, &le) {
					kind = KindLocator
				}
				runErr = &ActionError{Index: i, Op: a.Op, Kind: kind, Reason: b.clip(err.Error(), 1500), Err: err}
				break
			}
			r, a.ID = lr, strconv.Itoa(id)
		} else if a.ID != "" {
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
		docsBefore := t.docResponses
		watch := &actionWatch{tab: t, openedBy: b.ev.openSeq}
		b.ev.act = watch
		b.mu.Unlock()
		actx, cancel := context.WithTimeout(ctx, b.o.ActionTimeout)
		err := b.gated(actx, t, a, r)
		cancel()
		if err == nil {
			var early bool
			early, err = b.settle(ctx, t, a)
			answeredEarly = answeredEarly || early
		}
		b.mu.Lock()
		// A refused request fails the action only when it was what the
		// action was for: a navigation of its tab, or of a tab it opened
		// (a form's submission, a page's that submits as it loads). What
		// a page's scripts sent on their own (fetch, XHR, a beacon as the
		// page was left), even from the action's click handler, is listed
		// in the result's Held; the action happened all the same.
		// deniedLocked and blockedLocked kept them as they came.
		own, blockedNav := watch.denied, watch.blocked
		b.ev.act = nil
		b.mu.Unlock()
		if blockedNav != nil {
			// The tab's own navigation was stopped: that, not the
			// browser's net::ERR_BLOCKED_BY_CLIENT, is the action's failure.
			be := &BlockedError{Method: blockedNav.Method, Origin: blockedNav.Origin, Rule: blockedNav.Rule, Message: blockedNav.message}
			err = &ActionError{Kind: KindBlocked, Reason: be.Error(), Err: be}
		}
		if err == nil {
			// The egress proxy answered the navigation with its page
			// saying the site could not be reached.
			err = b.unreachedErr(t, docsBefore)
		}
		if err == nil && own != nil {
			re := &RefusedError{Method: own.Method, Origin: own.Origin, Path: own.Path}
			err = &ActionError{Kind: KindRefused, Reason: re.Error(), Err: re}
		}
		if err != nil {
			var ae *ActionError
			var te *TakenOverError
			var be *BusyError
			if errors.As(err, &te) {
				ae = &ActionError{Kind: KindTakenOver, Reason: te.Error(), Err: te}
			} else if errors.As(err, &be) {
				ae = &ActionError{Kind: KindTimeout, Reason: be.Error(), Err: be}
			} else if !errors.As(err, &ae) {
				ae = &ActionError{Kind: KindBrowser, Reason: b.clip(err.Error(), 200), Err: err}
				if errors.Is(err, context.DeadlineExceeded) {
					ae.Kind, ae.Reason = KindTimeout, fmt.Sprintf("did not finish within %s; the page may be busy; wait, snapshot and retry", b.o.ActionTimeout)
					if pe := b.pendingNow(t); pe != nil {
						ae.Reason, ae.Err = fmt.Sprintf("did not finish within %s: %s", b.o.ActionTimeout, pe.Error()), pe
					} else if be := b.stopBusy(ctx, t, b.o.ActionTimeout); be != nil {
						// The page's own script held it: stopped, and said.
						ae.Reason, ae.Err = be.Error(), be
					}
				}
			}
			if errors.As(ae.Err, &be) && inputOps[a.Op] {
				// Input sent to a page whose script then never stopped
				// may have run that script (a click's handler): the
				// action may have happened, though it never finished.
				ae.MayHaveActed = true
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
		res.Failed = &contract.ActionFailure{Index: ae.Index, Op: ae.Op, Reason: ae.Reason}
	}
	var observed *contract.SnapshotResult
	if opts.Observe != "" && runErr == nil {
		// Nil while the page waits on a server, as for any page that
		// cannot be read.
		octx, ocancel := b.pageCtx(ctx, t)
		observed = b.observe(octx, before, opts.Observe == "interactive")
		// A stop of a busy page under way ends before the answer.
		_ = pageCtxCause(octx)
		ocancel()
	}
	res.OK = runErr == nil
	if answeredEarly {
		b.mu.Lock()
		res.Loading = t.loading && !t.closed
		b.mu.Unlock()
	}
	if errors.As(runErr, &ae) && (ae.Kind == KindNavigation || ae.Kind == KindBlocked) {
		// The tab goes on to the browser's error page for the address,
		// with no address for a moment before it: answer once it is
		// there, as the next call finds it.
		b.landed(ctx, t)
	}
	res.URL, res.Title = b.info(ctx)
	if res.URL == "" {
		b.landed(ctx, t)
		res.URL, res.Title = b.info(ctx)
	}
	if o := observed; o != nil {
		if o.Changes != nil && !o.Changes.Full {
			// The caller may read the changes as on the page it saw: say so
			// only when the run began there and still is (a navigation that
			// landed after the observation shows in URL).
			o.Changes.SamePage = seen != nil && before != nil && sameDocument(seen, before) == "" && res.URL == o.URL
		}
		res.Observed = &o.Observation
	}
	b.mu.Lock()
	var news []*tab
	for _, o := range b.tabs {
		if o.openedAt > openedBefore && !o.closed {
			news = append(news, o)
		}
	}
	slices.SortFunc(news, func(x, y *tab) int { return x.openedAt - y.openedAt })
	var opened listed.List[contract.Tab]
	for _, o := range news {
		opened.Add(contract.Tab{ID: o.short, Active: o == b.active})
	}
	res.TabsOpened = opened.Items()
	res.Dialogs, res.Sent = b.ev.dialogs.Items(), b.ev.sent.Items()
	res.ConsoleErrors, res.FailedRequests = b.ev.console.Items(), b.ev.failed.Items()
	for _, br := range b.ev.blocked.Items() {
		res.Blocked = append(res.Blocked, br.BlockedRequest)
	}
	for _, d := range b.ev.denied.Items() {
		res.Held = append(res.Held, contract.HeldRequest{Method: d.Method, Origin: d.Origin, Path: d.Path, Decision: DecisionDenied})
	}
	downloads := b.unreportedDownloadsLocked()
	res.NotListed = contract.NotListed{Dialogs: b.ev.dialogs.More(), ConsoleErrors: b.ev.console.More(), FailedRequests: b.ev.failed.More(),
		Sent: b.ev.sent.More(), Held: b.ev.denied.More(), Blocked: b.ev.blocked.More(), Downloads: downloads.More(), TabsOpened: opened.More()}.OrNil()
	b.ev.dialogs, b.ev.console, b.ev.failed, b.ev.sent = listed.List[contract.Dialog]{}, capped{}, capped{}, listed.List[contract.SentRequest]{}
	b.ev.denied, b.ev.blocked = listed.List[refusal]{}, listed.List[blocked]{}
	b.mu.Unlock()
	for _, d := range downloads.Items() {
		res.Downloads = append(res.Downloads, d.answerName(b))
	}
	for i := range res.TabsOpened {
		if tt := b.tabByShort(res.TabsOpened[i].ID); tt != nil {
			url, title := b.openedTabInfo(ctx, tt)
			res.TabsOpened[i].URL, res.TabsOpened[i].Title = url, shownTitle(url, title)
		}
	}
	return res, runErr
}

// landedWait bounds how long a run's answer waits for a tab that a
// navigation left without an address (landed).
const landedWait = 2 * time.Second

// landed waits until tab t has an address and is not loading: a navigation
// that failed (refused by the reach guard, a server that cannot be
// reached) leaves the tab with no address (url "") while Chrome drops the
// refused entry, then commits its error page under the refused address
// and loads it, a few hundred ms on. It wakes on the tab's commit and
// loading events, checks again every landedTick besides (an address can
// come back without an event of the tab's), and gives up at landedWait.
func (b *Browser) landed(ctx context.Context, t *tab) {
	ctx, cancel := context.WithTimeout(ctx, landedWait)
	defer cancel()
	for {
		b.mu.Lock()
		if t.navCh == nil {
			t.navCh = make(chan struct{})
		}
		ch, loading, closed := t.navCh, t.loading, t.closed
		b.mu.Unlock()
		if closed {
			return
		}
		ti, err := proto.TargetGetTargetInfo{TargetID: t.id}.Call(b.client(ctx, ""))
		if err != nil || (ti.TargetInfo.URL != "" && !loading) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-ch:
		case <-time.After(landedTick):
		}
	}
}

// landedTick is how often landed asks for the address between events.
const landedTick = 100 * time.Millisecond

// openedTabInfo is a new tab's URL and title once known: a tab opened by
// script (window.open) starts at about:blank and learns its page a moment
// later, so it is asked until it has left about:blank and finished loading,
// within a short bound (a tab meant to stay blank answers at the bound).
func (b *Browser) openedTabInfo(ctx context.Context, tt *tab) (url, title string) {
	// Every call is under the bound: a renderer busy with a request that
	// never answers answers no evaluation either.
	bound := min(b.o.ActionTimeout, 3*time.Second)
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	deadline := time.Now().Add(bound)
	for {
		ti, err := proto.TargetGetTargetInfo{TargetID: tt.id}.Call(b.client(ctx, ""))
		if err != nil {
			return url, title
		}
		url, title = ti.TargetInfo.URL, ti.TargetInfo.Title
		if url != "" && url != "about:blank" && b.loaded(ctx, tt) {
			// The title a loaded page has is its own, not its URL.
			if _, t := b.docInfo(ctx, tt.sess); t != "" {
				title = t
			}
			return url, title
		}
		if time.Now().After(deadline) {
			return url, title
		}
		select {
		case <-ctx.Done():
			return url, title
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// loaded says the tab's document has finished loading (true when the tab
// cannot be asked: there is nothing better to wait for).
func (b *Browser) loaded(ctx context.Context, tt *tab) bool {
	if tt.sess == "" {
		return true
	}
	res, err := proto.RuntimeEvaluate{Expression: `document.readyState`, ReturnByValue: true}.Call(b.client(ctx, tt.sess))
	if err != nil || res.ExceptionDetails != nil {
		return false
	}
	return res.Result.Value.Str() == "complete"
}

// followPopup makes a tab opened by t since openedBefore the active one.
func (b *Browser) followPopup(ctx context.Context, t *tab, openedBefore int) *tab {
	// Bounded: while a click's form submission waits on a server that does
	// not answer, the renderer answers no evaluation, and the run would hang
	// here until its activity's deadline.
	ctx, cancel := context.WithTimeout(ctx, b.o.ActionTimeout)
	defer cancel()
	// settle's round trip to the page, right after the click, has let a
	// window.open the click made be announced; a second one here would
	// wait for the document a navigating click loads.
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

// walkWhole walks all of tab t, answering the walk as kept for a
// comparison besides the renderer and documents; a nil kept when the walk
// failed (logged at debug with msg).
func (b *Browser) walkWhole(ctx context.Context, t *tab, msg string) (*kept, *renderer, []*frameDoc) {
	b.mu.Lock()
	navSeq := t.navSeq
	b.mu.Unlock()
	r, docs, err := b.walkPage(ctx, t, nil, "", maxWalkNodes, fromTop)
	if err != nil {
		b.log.Debug().Err(err).Msg(msg)
		return nil, nil, nil
	}
	return &kept{tab: t, doc: docs[0].res.D, navSeq: navSeq, url: docs[0].res.U, title: docs[0].res.Ti, lines: r.lines}, r, docs
}

// observe takes the snapshot a batch left, as its changes from before (the
// walk before the batch), or as the whole page when it went to another.
// It becomes the latest snapshot. Nil when the page cannot be read.
func (b *Browser) observe(ctx context.Context, before *kept, interactive bool) *contract.SnapshotResult {
	t, err := b.activeTab()
	if err != nil {
		return nil
	}
	now, r, docs := b.walkWhole(ctx, t, "driver: observe")
	if now == nil {
		return nil
	}
	navSeq := now.navSeq
	snap := b.newSnapshot(t, r, docs)
	why := "the page could not be read before the actions"
	if before != nil {
		why = sameDocument(before, now)
	}
	var pg page
	if why == "" {
		var text string
		var ch contract.Changes
		text, ch = diff(before.lines, r.lines, interactive)
		ch.Title = before.title != now.title
		snap.Changes = &ch
		pg = changesPage(text, b.o.MaxSnapshotChars)
	} else {
		snap.Changes = &contract.Changes{Full: true, Reason: why}
		pg = r.first(interactive, b.o.MaxSnapshotChars)
	}
	snap.Text, snap.Truncated, snap.Cut, snap.NextOffset = pg.text, pg.truncated, pg.cut, pg.next
	b.notes(snap, t, docs, maxWalkNodes)
	snap.Epoch = b.record(t, navSeq, now.url, r, now)
	return snap
}

// gated runs one action through the take-over gate, when there is one:
// refused there, it never reaches the page.
func (b *Browser) gated(ctx context.Context, t *tab, a Action, r ref) error {
	if b.o.Takeover == nil {
		return b.do(ctx, t, a, r)
	}
	if a.Op == "wait" {
		// A wait sends nothing; holding the gate through it would keep
		// a person's input waiting.
		if err := b.o.Takeover.Check(ctx); err != nil {
			return &TakenOverError{Err: err}
		}
		return b.do(ctx, t, a, r)
	}
	var sent bool
	err := b.o.Takeover.Dispatch(ctx, func() error {
		sent = true
		return b.do(ctx, t, a, r)
	})
	if err != nil && !sent {
		return &TakenOverError{Err: err}
	}
	return err
}
