package driver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-rod/rod/lib/proto"
)

// While a tab's main frame navigates, Chrome holds every command meant for
// the page's renderer (Runtime, DOM, Page.getFrameTree, Page.enable...) for
// every DevTools session, and sends them only once the navigation commits or
// fails: the new document may live in another process. A form submitted to a
// server that does not answer therefore leaves those commands unanswered for
// as long as the server keeps quiet. Commands the browser process answers
// itself (Target.*, Page.captureScreenshot, Page.getNavigationHistory) still
// answer. pageCtx turns that wait into a quick *PendingError.

// pendingGrace is how long a renderer command may wait on a navigation the
// page has started before the caller is told the page is waiting on a
// server: a server that answers within it gets its page snapshotted.
const pendingGrace = 2 * time.Second

// PendingError means the active tab's renderer could not answer because
// the page is waiting for a server to answer its navigation (a form
// submission, typically). Nothing was done; wait, or call again.
type PendingError struct {
	Method string // the navigation's request method
	Origin string
	Path   string
	For    time.Duration // how long the page had waited when the call gave up
	// Held: the request gate is deciding a request (this one, most
	// likely), so the request may not have left the browser yet.
	Held bool
}

func (e *PendingError) Error() string {
	what := "a form submission (" + e.Method + " " + e.Path + ")"
	if safeMethod(e.Method) {
		what = "a page load (" + e.Method + " " + e.Path + ")"
	}
	if e.Held {
		return fmt.Sprintf("the page is waiting on %s to %s, held by the approval policy until it is decided (for %s so far); until then the browser cannot read or act on the page: wait for the decision, then snapshot again",
			what, e.Origin, e.For.Round(100*time.Millisecond))
	}
	return fmt.Sprintf("the page is waiting for %s to answer %s (for %s so far); until it answers the browser cannot read or act on the page: wait, or snapshot again",
		e.Origin, what, e.For.Round(100*time.Millisecond))
}

// ErrPending matches any *PendingError with errors.Is.
var ErrPending = errors.New("the page is waiting for a server to answer its navigation")

func (e *PendingError) Is(target error) bool { return target == ErrPending }

// navPending is a main-frame navigation request Chrome sent and that has not
// been answered yet.
type navPending struct {
	id     proto.NetworkRequestID
	method string
	url    string
	since  time.Time
}

// navStarted records a main-frame document request of tab t.
func (b *Browser) navStarted(sid proto.TargetSessionID, e *proto.NetworkRequestWillBeSent) {
	if e.Type != proto.NetworkResourceTypeDocument || string(e.RequestID) != string(e.LoaderID) {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.sessions[sid]
	if t == nil || t.sess != sid || string(e.FrameID) != string(t.id) {
		return
	}
	since := time.Now()
	if t.pend != nil && t.pend.id == e.RequestID {
		since = t.pend.since // a redirect of the same navigation
	}
	t.pend = &navPending{id: e.RequestID, method: e.Request.Method, url: e.Request.URL, since: since}
	t.docMethod = e.Request.Method
	t.navChanged()
}

// navEnded clears tab t's pending navigation when it is answered (id is its
// request) or committed (id empty).
func (b *Browser) navEnded(sid proto.TargetSessionID, id proto.NetworkRequestID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.sessions[sid]
	if t == nil || t.sess != sid || t.pend == nil || (id != "" && t.pend.id != id) {
		return
	}
	t.pend = nil
	t.navChanged()
}

// navChanged wakes whoever waits on t's navigation state (its pending
// request, a commit, loading starting or stopping); b.mu is held.
func (t *tab) navChanged() {
	if t.navCh != nil {
		close(t.navCh)
	}
	t.navCh = make(chan struct{})
}

// pageCtx bounds ctx for commands to tab t's renderer: once the tab's
// navigation has been pending for pendingGrace, the context is cancelled
// with a *PendingError as its cause (see pendingErr); once it has run for
// the action timeout while the page's own script holds the renderer, that
// script is stopped and the cause is a *BusyError.
func (b *Browser) pageCtx(ctx context.Context, t *tab) (context.Context, context.CancelFunc) {
	return b.pageCtxBound(ctx, t, b.o.ActionTimeout)
}

// heavyBound is how long a call whose own page work grows with the page
// (reading a huge page's text or HTML) may go unanswered before its page
// is taken for busy: the renderer runs the call's own evaluation then, and
// a probe waits behind it just as behind a page script that never yields.
func (b *Browser) heavyBound() time.Duration { return 4 * b.o.ActionTimeout }

// pageCtxBound is pageCtx whose busy watch waits bound (not the action
// timeout) without an answer before it probes the page.
func (b *Browser) pageCtxBound(ctx context.Context, t *tab, bound time.Duration) (context.Context, context.CancelFunc) {
	pctx, cancel := context.WithCancelCause(ctx)
	go func() {
		busy := time.NewTimer(bound)
		defer busy.Stop()
		for {
			b.mu.Lock()
			if t.navCh == nil {
				t.navCh = make(chan struct{})
			}
			p, ch := t.pend, t.navCh
			b.mu.Unlock()
			var fire <-chan time.Time
			timer := time.NewTimer(time.Hour)
			if p != nil {
				timer.Reset(time.Until(p.since.Add(pendingGrace)))
				fire = timer.C
			}
			select {
			case <-pctx.Done():
				timer.Stop()
				return
			case <-ch:
				timer.Stop()
			case <-busy.C:
				timer.Stop()
				ended, again := b.busyWatch(pctx, cancel, t, bound)
				if ended || pctx.Err() != nil {
					return
				}
				busy.Reset(again)
			case <-fire:
				// The events that end a navigation are many (an answer,
				// a failure, a commit, a 204, a download); if one was
				// missed the renderer answers, and the wait is forgotten.
				if b.rendererAnswers(pctx, t) {
					b.mu.Lock()
					if t.pend == p {
						t.pend = nil
						t.navChanged()
					}
					b.mu.Unlock()
					continue
				}
				if pctx.Err() != nil {
					return
				}
				if pe := b.pendingNow(t); pe != nil {
					cancel(pe)
					return
				}
			}
		}
	}()
	return pctx, func() { cancel(context.Canceled) }
}

// pageCtxCause is the *PendingError or *BusyError that cut ctx (from
// pageCtx) short, once any stop of a busy page is done; nil if none did.
func pageCtxCause(ctx context.Context) error {
	if ctx.Err() == nil {
		return nil
	}
	if err := pendingErr(ctx, ctx.Err()); err != ctx.Err() {
		return err
	}
	return nil
}

// pendingErr is the *PendingError or *BusyError that cut ctx (from
// pageCtx) short, or err.
func pendingErr(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var pe *PendingError
	if errors.As(context.Cause(ctx), &pe) {
		return pe
	}
	var bc *busyCause
	if errors.As(context.Cause(ctx), &bc) {
		<-bc.done
		return bc.err
	}
	return err
}

// rendererProbe bounds the check that t's renderer takes commands.
const rendererProbe = 500 * time.Millisecond

// rendererAnswers reports whether t's renderer answers a trivial command
// within rendererProbe (Chrome holds it while a navigation is pending).
func (b *Browser) rendererAnswers(ctx context.Context, t *tab) bool {
	ctx, cancel := context.WithTimeout(ctx, rendererProbe)
	defer cancel()
	_, err := proto.RuntimeEvaluate{Expression: "0"}.Call(b.client(ctx, t.sess))
	return err == nil
}

// pendingNow is tab t's unanswered navigation as a *PendingError, nil if
// there is none.
func (b *Browser) pendingNow(t *tab) *PendingError {
	b.mu.Lock()
	p, held := t.pend, b.gating > 0
	b.mu.Unlock()
	if p == nil {
		return nil
	}
	o, path := b.originPath(p.url)
	return &PendingError{Method: p.method, Origin: o, Path: path, For: time.Since(p.since), Held: held}
}
