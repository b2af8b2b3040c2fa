package driver

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"github.com/durable-browser/durable-browser/internal/capture"

	"github.com/durable-browser/durable-browser/contract"
)

// Capture types, so callers of Screenshot and Read need only this package.
type (
	// Shot is an encoded screenshot and the region it shows.
	Shot = capture.Shot
	// ReadOptions choose what Read returns.
	ReadOptions = capture.ReadOptions
	// ReadResult is what Read returned and the raw bytes it came from.
	ReadResult = capture.ReadResult
)

// ScreenshotOptions choose the region and encoding of a Screenshot. At
// most one of FullPage, Clip, ID (or Locator) and Selector may be given;
// none means the viewport.
type ScreenshotOptions struct {
	// FullPage captures the whole document.
	FullPage bool
	// Clip is a region in CSS pixels of the document.
	Clip *contract.Rect
	// ID is an id of the latest snapshot: that element is captured.
	ID string
	// Locator, instead of ID, finds the element on the page as it is.
	Locator *contract.Locator
	// Selector is a CSS selector that must match exactly one element.
	Selector string
	// Type is "png" (default) or "jpeg".
	Type string
	// Quality is the JPEG quality, 1-100.
	Quality int
}

// Screenshot captures the active tab. An ID is checked against the latest
// snapshot like an action's (*StaleError, ErrNoSnapshot); a region that
// cannot give a useful image is *capture.RefusedError.
func (b *Browser) Screenshot(ctx context.Context, o ScreenshotOptions) (shot *Shot, err error) {
	err = b.onPage(ctx, func(ctx context.Context, t *tab) error {
		shot, err = b.screenshot(ctx, t, o)
		return err
	})
	return shot, err
}

// onPage runs op on the active tab, one operation at a time, under the
// tab's page context (it ends when the page waits on a server): an error op
// meets then is the *PendingError that says so.
func (b *Browser) onPage(ctx context.Context, op func(ctx context.Context, t *tab) error) error {
	return b.onPageBound(ctx, b.o.ActionTimeout, op)
}

// onPageBound is onPage with the busy watch's bound given (pageCtxBound).
func (b *Browser) onPageBound(ctx context.Context, bound time.Duration, op func(ctx context.Context, t *tab) error) error {
	b.opMu.Lock()
	defer b.opMu.Unlock()
	t, err := b.tabNow(ctx)
	if err != nil {
		return err
	}
	ctx, cancel := b.pageCtxBound(ctx, t, bound)
	defer cancel()
	return pendingErr(ctx, op(ctx, t))
}

func (b *Browser) screenshot(ctx context.Context, t *tab, o ScreenshotOptions) (*Shot, error) {
	page, err := b.page(ctx, t.id)
	if err != nil {
		return nil, err
	}
	co := capture.ScreenshotOptions{FullPage: o.FullPage, Clip: o.Clip, Selector: o.Selector, Type: o.Type, Quality: o.Quality}
	if o.ID != "" || o.Locator != nil {
		el, err := b.element(ctx, Target{ID: o.ID, Locator: o.Locator})
		if err != nil {
			return nil, err
		}
		co.Element = el
	}
	return capture.Screenshot(ctx, page, co)
}

// Read reads the active tab's content. An unknown What is
// *capture.RefusedError.
func (b *Browser) Read(ctx context.Context, o ReadOptions) (res *ReadResult, err error) {
	// A huge page's text or HTML takes the renderer a while to lay out and
	// serialise: a longer wait before the page is taken for busy.
	err = b.onPageBound(ctx, b.heavyBound(), func(ctx context.Context, t *tab) error {
		page, err := b.page(ctx, t.id)
		if err != nil {
			return err
		}
		if o.Redact == nil {
			o.Redact = b.o.Redact
		}
		// The address and title as Chrome has them, before the read
		// redacts the title: a page without a title is given its address
		// as one (shownTitle), and the read answers none, as a snapshot does.
		var pageURL, title string
		if ti, err := (proto.TargetGetTargetInfo{TargetID: t.id}).Call(b.client(ctx, "")); err == nil {
			pageURL, title = ti.TargetInfo.URL, ti.TargetInfo.Title
		}
		res, err = capture.Read(ctx, page, o)
		if res != nil {
			b.mu.Lock()
			res.Status = t.docStatus
			b.mu.Unlock()
			if standIn(pageURL, title) || standIn(pageURL, res.Title) {
				res.Title = ""
				if res.What == capture.ReadTitle {
					res.Content, res.Raw, res.FullLength, res.Truncated = "", []byte{}, 0, false
				}
			}
			res.Title = escaped(res.Title)
		}
		return err
	})
	return res, err
}

// page returns target id (a tab or an out-of-process frame) as a rod page,
// for capture. rod makes the page once, then keeps it; making it waits for
// the renderer (Page.enable) under the browser's own context, so the wait is
// left behind when ctx ends: it ends when the page answers or the
// connection closes. The page is a session of its own, which capture only
// sends commands on: its Page domain, which rod enables, is disabled again
// once, so Chrome does not send it every page event a second time.
func (b *Browser) page(ctx context.Context, id proto.TargetTargetID) (*rod.Page, error) {
	type made struct {
		p   *rod.Page
		err error
	}
	done := make(chan made, 1)
	go func() {
		p, err := b.rb.PageFromTarget(id)
		if err == nil {
			b.mu.Lock()
			quiet := b.quiet[p.SessionID]
			b.quiet[p.SessionID] = true
			b.mu.Unlock()
			if !quiet {
				_ = proto.PageDisable{}.Call(p) // events only: capture works without them
			}
		}
		done <- made{p, err}
	}()
	select {
	case m := <-done:
		return m.p, m.err
	case <-ctx.Done():
		return nil, fmt.Errorf("driver: attach to the page: %w", ctx.Err())
	}
}

// element resolves an id of the latest snapshot, or a locator, to a rod
// element, for screenshots of one element.
func (b *Browser) element(ctx context.Context, target Target) (*rod.Element, error) {
	t, err := b.activeTab()
	if err != nil {
		return nil, err
	}
	var r ref
	if target.Locator != nil {
		lr, id, err := b.locate(ctx, t, *target.Locator)
		if err != nil {
			return nil, &ActionError{Op: "screenshot", Kind: KindLocator, Reason: b.clip(err.Error(), 1500), Err: err}
		}
		if _, lr.backend, err = b.describe(ctx, lr); err != nil {
			return nil, &StaleError{ID: strconv.Itoa(id), Reason: "left the page as it was found"}
		}
		r = lr
	} else {
		nid, err := NormalizeID(target.ID)
		if err != nil {
			return nil, err
		}
		refs, err := b.lookup(ctx, t, []string{nid}, true)
		if err != nil {
			return nil, err
		}
		r = refs[0]
	}
	tid := t.id
	if r.sess != t.sess {
		b.mu.Lock()
		for fid, sid := range b.frameSess {
			if sid == r.sess {
				tid = proto.TargetTargetID(fid)
			}
		}
		b.mu.Unlock()
	}
	p, err := b.page(ctx, tid)
	if err != nil {
		return nil, fmt.Errorf("driver: attach to the element's frame: %w", err)
	}
	return p.Context(ctx).ElementFromNode(&proto.DOMNode{BackendNodeID: r.backend})
}
