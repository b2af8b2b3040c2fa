package driver

import (
	"context"
	"errors"
	"fmt"
	"time"

	rodcdp "github.com/go-rod/rod/lib/cdp"
	"github.com/go-rod/rod/lib/proto"
)

// A page whose own script never yields (an endless loop in a handler or a
// timer) holds its renderer's main thread, and every command meant for the
// page waits behind it for as long as the caller waits: a call would wait
// out its whole deadline, and the next one too. Chrome runs
// Runtime.terminateExecution as an interrupt of the running script, so the
// driver stops such a script once a command has waited the action timeout
// and a trivial probe gets no answer either, and says so (*BusyError).

// BusyError means the page's own script kept its main thread for longer
// than the action timeout, so the page answered nothing. Stopped says the
// driver stopped that script and the page answers again.
type BusyError struct {
	For     time.Duration
	Stopped bool
}

func (e *BusyError) Error() string {
	if e.Stopped {
		return fmt.Sprintf("the page's own script ran for over %s without a pause (an endless loop, or a task that long), so the page answered nothing; the browser stopped that script, and the page may not work as it should: snapshot to see it, or browser_relaunch for a fresh browser", e.For.Round(time.Second))
	}
	return fmt.Sprintf("the page's own script has run for over %s without a pause (an endless loop, or a task that long), so the page answers nothing, and it could not be stopped: browser_relaunch replaces the browser", e.For.Round(time.Second))
}

// ErrBusy matches any *BusyError with errors.Is.
var ErrBusy = errors.New("the page's script does not yield")

func (e *BusyError) Is(target error) bool { return target == ErrBusy }

// stopBusy is called when a command to tab t's renderer went unanswered for
// waited. When no navigation holds the page (that is a *PendingError) and a
// trivial probe goes unanswered too, the page's own script holds it: stop
// that script and report it. Nil when the renderer answers after all.
func (b *Browser) stopBusy(ctx context.Context, t *tab, waited time.Duration) *BusyError {
	// One at a time: a second stop sent once the script has ended would
	// stand for the next script the page runs (Chrome terminates the
	// current or the next execution), so a stop after another finds the
	// page answering and sends nothing.
	b.busyMu.Lock()
	defer b.busyMu.Unlock()
	// Not bound to the caller's context: it has usually just run out.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
	defer cancel()
	if b.pendingNow(t) != nil || b.rendererAnswers(ctx, t) {
		return nil
	}
	tctx, tcancel := context.WithTimeout(ctx, time.Second)
	err := proto.RuntimeTerminateExecution{}.Call(b.client(tctx, t.sess))
	tcancel()
	// Probe whatever the stop answered: a stop that found nothing running
	// stays armed for the next script, and this probe is that script.
	stopped := b.answersAfterStop(ctx, t)
	b.log.Warn().Err(err).Bool("stopped", stopped).Dur("waited", waited).Msg("driver: the page's script held its main thread; stopping it")
	return &BusyError{For: waited, Stopped: stopped}
}

// inputOps are the actions that send the page input its own script answers
// (event handlers run): one that met a busy page may have acted.
var inputOps = map[string]bool{"click": true, "hover": true, "fill": true, "type": true, "press": true, "select": true, "check": true, "uncheck": true}

// answersAfterStop reports whether t's renderer answers a trivial command
// after a stop, within a second and a half; an answer that it was
// terminated counts (it took up a stop left armed).
func (b *Browser) answersAfterStop(ctx context.Context, t *tab) bool {
	ctx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer cancel()
	_, err := proto.RuntimeEvaluate{Expression: "0"}.Call(b.client(ctx, t.sess))
	return err == nil || isCDPError(err)
}

// isCDPError says Chrome answered the command, with an error.
func isCDPError(err error) bool {
	var ce *rodcdp.Error
	return errors.As(err, &ce)
}

// quietFor is how long Chrome has answered no command of this connection.
func (b *Browser) quietFor() time.Duration {
	return time.Since(time.Unix(0, b.answeredAt.Load()))
}

// busyCause cuts a pageCtx short when the page's script holds the page: the
// context ends at once, so the waiting call returns, and err is the outcome
// of stopping the script, ready when done is closed.
type busyCause struct {
	err  *BusyError
	done chan struct{}
}

func (c *busyCause) Error() string { return "the page's script does not yield" }

// busyWatch decides, once a pageCtx has run the action timeout, whether
// the page's own script holds it: Chrome has answered nothing for that
// long (a walk of many frames answers command after command) and a trivial
// probe goes unanswered too. If so it ends pctx (cancel) and stops the
// script. It reports whether it ended pctx, or else how long to wait
// before asking again.
func (b *Browser) busyWatch(pctx context.Context, cancel context.CancelCauseFunc, t *tab, bound time.Duration) (ended bool, again time.Duration) {
	if quiet := b.quietFor(); quiet < bound {
		return false, bound - quiet
	}
	if pctx.Err() != nil || b.pendingNow(t) != nil || b.rendererAnswers(pctx, t) || pctx.Err() != nil {
		return false, bound
	}
	bc := &busyCause{done: make(chan struct{})}
	cancel(bc)
	if context.Cause(pctx) != bc {
		// The call ended meanwhile: nobody waits on the page.
		close(bc.done)
		return true, 0
	}
	waited := b.quietFor()
	bc.err = b.stopBusy(pctx, t, waited)
	if bc.err == nil {
		// It ended on its own between the two probes.
		bc.err = &BusyError{For: waited, Stopped: true}
	}
	close(bc.done)
	return true, 0
}
