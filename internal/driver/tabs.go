package driver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-rod/rod/lib/proto"

	"github.com/durable-browser/durable-browser/contract"
)

// tab is one page target and the session this driver set up on it.
type tab struct {
	id      proto.TargetTargetID
	short   string
	sess    proto.TargetSessionID
	opener  proto.TargetTargetID
	ready   chan struct{}
	navSeq  int
	url     string // its main frame's URL without the fragment (bumpNav)
	loading bool
	// parsed: the document the tab loads has fired DOMContentLoaded.
	parsed bool
	closed bool
	// reopened: opened by tabNow in place of the session's last tab, which
	// was closed; the first snapshot of it says so.
	reopened bool
	openedAt int           // b.ev.openSeq when it appeared
	ids      *idTable      // its elements' ids, for the document it shows
	pend     *navPending   // its main frame's unanswered navigation, if any
	navCh    chan struct{} // closed when pend, the committed document or loading changes
	// docConsole and docFailed are the console errors and failed requests
	// of the document the tab shows (since its main frame last asked for a
	// document), bounded and counted; Check reads them, Run does not drain them.
	docConsole, docFailed capped
	// docStatus is the HTTP status of the document the tab shows (0: none seen).
	docStatus int
	// docMethod is the method of the main frame's latest document request
	// (a checkpoint loads a tab again only when it was a GET).
	docMethod string
	// docResponses counts the main frame's document responses; unreached
	// is the egress proxy's mark on the latest (the cause, when it is the
	// proxy's "could not reach" page) and unreachedURL that one's URL.
	docResponses            int
	unreached, unreachedURL string
	// unreachable is the address the main frame failed to load when the
	// document it shows is the browser's error page (Chrome's
	// chrome-error://chromewebdata/), "" otherwise; failURL and failWhy
	// are the latest main-frame navigation that failed and why (the reach
	// guard's refusal, or Chrome's net::ERR_... text).
	unreachable      string
	failURL, failWhy string
}

// popupCreated attaches to a page opened by one of this session's tabs
// (Options.TargetID mode, where the browser's other pages are left alone).
func (b *Browser) popupCreated(ti *proto.TargetTargetInfo) {
	if ti.Type != proto.TargetTargetInfoTypePage || ti.OpenerID == "" {
		return
	}
	b.mu.Lock()
	opener, known := b.tabs[ti.OpenerID], b.tabs[ti.TargetID] != nil
	b.mu.Unlock()
	if opener == nil || known {
		return
	}
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	if _, err := (proto.TargetAttachToTarget{TargetID: ti.TargetID, Flatten: true}).Call(b.client(ctx, "")); err != nil {
		b.log.Debug().Err(err).Msg("driver: attach to popup")
	}
}

// openTab opens a blank tab of this session (in its browser context,
// when it has one of its own) and waits until it is set up.
func (b *Browser) openTab(ctx context.Context) (*tab, error) {
	root := b.client(ctx, "")
	r, err := proto.TargetCreateTarget{URL: "about:blank", BrowserContextID: proto.BrowserBrowserContextID(b.o.BrowserContextID)}.Call(root)
	if err != nil {
		return nil, err
	}
	if b.o.TargetID != "" {
		// Only the session's pages are attached in this mode: this one too.
		if _, err := (proto.TargetAttachToTarget{TargetID: r.TargetID, Flatten: true}).Call(root); err != nil {
			return nil, err
		}
	}
	return b.waitTab(ctx, r.TargetID)
}

// waitTab waits until the page target id is attached and set up.
func (b *Browser) waitTab(ctx context.Context, id proto.TargetTargetID) (*tab, error) {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		b.mu.Lock()
		t := b.tabs[id]
		b.mu.Unlock()
		if t != nil {
			select {
			case <-t.ready:
				return t, nil
			case <-ctx.Done():
				return nil, fmt.Errorf("driver: tab not ready: %w", ctx.Err())
			}
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return nil, fmt.Errorf("driver: tab not attached: %w", ctx.Err())
		}
	}
}

// activeTab returns the active tab, ErrClosed, or ErrNoTab when the
// session has no open tab left (tabNow opens one in its place).
func (b *Browser) activeTab() (*tab, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ctx.Err() != nil {
		return nil, ErrClosed
	}
	if b.active == nil || b.active.closed {
		// Closing the active tab makes another open one active
		// (dropTab): none is left.
		return nil, ErrNoTab
	}
	return b.active, nil
}

// tabNow is the tab a call works on: the active one. When the session has
// no open tab left (its page closed itself with window.close(), a person
// closed it, it crashed away; close_tab refuses to close the last one),
// a blank tab is opened in its place and made active, so the session goes
// on instead of failing every call: a goto loads there, and a snapshot of
// it says why it is blank (tab.reopened). ErrNoTab when even that fails.
func (b *Browser) tabNow(ctx context.Context) (*tab, error) {
	t, err := b.activeTab()
	if !errors.Is(err, ErrNoTab) {
		return t, err
	}
	octx, cancel := context.WithTimeout(ctx, b.o.ActionTimeout)
	defer cancel()
	nt, oerr := b.openTab(octx)
	if oerr != nil {
		b.log.Debug().Err(oerr).Msg("driver: open a tab in place of the closed one")
		return nil, fmt.Errorf("%w, and a new one could not be opened (%v): relaunch the browser with browser_relaunch", ErrNoTab, oerr)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.active == nil || b.active.closed {
		b.active = nt
		nt.reopened = true
	}
	return b.active, nil
}

// URL returns the active tab's URL, "" if unknown.
func (b *Browser) URL(ctx context.Context) string {
	u, _ := b.info(ctx)
	return u
}

// Title returns the active tab's title, "" if unknown.
func (b *Browser) Title(ctx context.Context) string {
	_, t := b.info(ctx)
	return t
}

func (b *Browser) info(ctx context.Context) (string, string) {
	t, err := b.activeTab()
	if err != nil {
		return "", ""
	}
	ctx, cancel := context.WithTimeout(ctx, b.o.ActionTimeout)
	defer cancel()
	r, err := proto.TargetGetTargetInfo{TargetID: t.id}.Call(b.client(ctx, ""))
	if err != nil {
		return "", ""
	}
	return r.TargetInfo.URL, shownTitle(r.TargetInfo.URL, r.TargetInfo.Title)
}

// Tabs lists open tabs.
func (b *Browser) Tabs(ctx context.Context) ([]contract.Tab, error) {
	res, err := proto.TargetGetTargets{}.Call(b.client(ctx, ""))
	if err != nil {
		return nil, fmt.Errorf("driver: list tabs: %w", err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []contract.Tab
	for _, ti := range res.TargetInfos {
		t := b.tabs[ti.TargetID]
		if t == nil || t.closed {
			continue
		}
		out = append(out, contract.Tab{ID: t.short, URL: ti.URL, Title: shownTitle(ti.URL, ti.Title), Active: t == b.active})
	}
	return out, nil
}

// ActiveTarget is Chrome's id of the active tab, for building a DevTools
// address on the worker (such an address is a credential: it goes in no
// result). It fails when no tab is active.
func (b *Browser) ActiveTarget() (string, error) {
	t, err := b.activeTab()
	if err != nil {
		return "", err
	}
	return string(t.id), nil
}

func (b *Browser) tabByShort(id string) *tab {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, t := range b.tabs {
		if t.short == id && !t.closed {
			return t
		}
	}
	return nil
}

// SwitchTab makes tab id active. Ids of the latest snapshot become stale.
func (b *Browser) SwitchTab(ctx context.Context, id string) error {
	t := b.tabByShort(id)
	if t == nil {
		return fmt.Errorf("driver: no tab %q: list tabs for their ids", truncate(id, 20))
	}
	_ = proto.TargetActivateTarget{TargetID: t.id}.Call(b.client(ctx, ""))
	b.mu.Lock()
	b.active = t
	b.mu.Unlock()
	return nil
}

// openTabs counts the session's open tabs.
func (b *Browser) openTabs() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, t := range b.tabs {
		if !t.closed {
			n++
		}
	}
	return n
}

// CloseTab closes tab id. Closing the active tab activates another one.
// The session's last open tab is not closed (*LastTabError): a session
// with no page has nothing to act on.
func (b *Browser) CloseTab(ctx context.Context, id string) error {
	t := b.tabByShort(id)
	if t == nil {
		return fmt.Errorf("driver: no tab %q: list tabs for their ids", truncate(id, 20))
	}
	if b.openTabs() <= 1 {
		return &LastTabError{Tab: t.short}
	}
	if _, err := (proto.TargetCloseTarget{TargetID: t.id}).Call(b.client(ctx, "")); err != nil {
		return fmt.Errorf("driver: close tab: %w", err)
	}
	b.dropTab(t.id)
	// closeTarget answers before the page is gone: confirm it, so nobody
	// (a later attach too) picks a closing page.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		res, err := proto.TargetGetTargets{}.Call(b.client(ctx, ""))
		if err != nil {
			break
		}
		gone := true
		for _, ti := range res.TargetInfos {
			if ti.TargetID == t.id {
				gone = false
			}
		}
		if gone {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

func (b *Browser) dropTab(id proto.TargetTargetID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.tabs[id]
	if t == nil || t.closed {
		return
	}
	t.closed = true
	if b.active == t {
		b.active = nil
		// Back to the page that opened it, else the newest open tab.
		if o := b.tabs[t.opener]; o != nil && !o.closed {
			b.active = o
			return
		}
		var best *tab
		for _, o := range b.tabs {
			if !o.closed && (best == nil || o.openedAt > best.openedAt) {
				best = o
			}
		}
		b.active = best
	}
}
