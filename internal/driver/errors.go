package driver

import (
	"errors"
	"fmt"
)

// ErrNoSnapshot means an action or lookup named an id before any snapshot
// was taken in this session. Take a snapshot first.
var ErrNoSnapshot = errors.New("no snapshot yet: take a snapshot, then use its ids")

// ErrClosed means the browser connection is closed.
var ErrClosed = errors.New("browser connection closed: attach again")

// ErrNoTab means the session has no open tab left (its last one was
// closed). A call opens a new one in its place (tabNow); when even that
// fails, only a new browser helps, and the error says so.
var ErrNoTab = errors.New("the session has no open tab (its last one was closed)")

// LastTabError refuses to close the session's only open tab: with no page
// left, no call would have anything to act on.
type LastTabError struct{ Tab string }

func (e *LastTabError) Error() string {
	return fmt.Sprintf("tab %s is the session's only tab, and closing it would leave no page to act on: goto another page in it instead, or end the session with browser_release", e.Tab)
}

// StaleError refuses a whole batch before anything is sent: an id is unknown
// not in the latest snapshot, or the page navigated since the snapshot.
type StaleError struct {
	// ID is the offending id, empty when the page navigated.
	ID string
	// Reason says what made the snapshot stale.
	Reason string
}

func (e *StaleError) Error() string {
	if e.ID != "" {
		return fmt.Sprintf("stale snapshot: id [%s] %s; take a new snapshot and use its ids", e.ID, e.Reason)
	}
	return fmt.Sprintf("stale snapshot: %s; take a new snapshot and use its ids", e.Reason)
}

// Failure kinds carried by ActionError.
const (
	KindCovered    = "covered"     // another element would receive the click
	KindNotVisible = "not_visible" // zero size, hidden, or detached
	KindTimeout    = "timeout"     // the action's timeout passed
	KindInvalid    = "invalid"     // the element cannot take this action (not a select, not a checkbox...)
	KindNavigation = "navigation"  // goto/back/forward/reload failed
	KindStale      = "stale"       // the page navigated earlier in this batch, so this id is gone
	KindRefused    = "refused"     // the request gate denied the request this action was for (its navigation, a form's submission)
	KindBlocked    = "blocked"     // the reach guard stopped a navigation this action started
	KindBrowser    = "browser"     // the browser connection failed
	KindLocator    = "locator"     // a locator matched no visible element, or several
	KindTakenOver  = "fenced"      // the take-over gate refused the action before it reached the page (value kept: it may be recorded)
)

// TakenOverError is an action the take-over gate (Options.Takeover)
// refused: it never reached the page. Err is the gate's reason.
type TakenOverError struct{ Err error }

func (e *TakenOverError) Error() string { return e.Err.Error() }
func (e *TakenOverError) Unwrap() error { return e.Err }

// ActionError says which action of a batch failed and why.
type ActionError struct {
	Index  int    // zero-based index in the batch
	Op     string // the action's op
	Kind   string // one of the Kind* constants
	Reason string // what happened, naming the fix
	Cover  string // for KindCovered: a short description of the covering element
	Err    error  // underlying error, if any
	// MayHaveActed: the action's input reached the page before it failed
	// (a click whose handler then never stopped), so it may have happened.
	MayHaveActed bool
}

func (e *ActionError) Error() string {
	return fmt.Sprintf("action %d (%s) failed: %s", e.Index+1, e.Op, e.Reason)
}

func (e *ActionError) Unwrap() error { return e.Err }

// RefusedError is a side-effecting request the RequestGate denied that the
// action was for: the navigation it made (a form's submission). Requests a
// page's scripts send are listed in RunResult.Held, not errors.
type RefusedError struct {
	Method string
	Origin string
	Path   string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("request %s %s%s was refused by the approval policy; ask a person to approve it or change the action", e.Method, e.Origin, e.Path)
}

// ParseError is an invalid action batch.
type ParseError struct {
	Index  int // -1 when the whole batch is malformed
	Reason string
}

func (e *ParseError) Error() string {
	if e.Index < 0 {
		return "invalid actions: " + e.Reason
	}
	return fmt.Sprintf("invalid action %d: %s", e.Index+1, e.Reason)
}
