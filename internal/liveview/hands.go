package liveview

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// DriveWindow is how long after a person's last input the agent is kept
// out: a person who paused for a moment has not given the browser back.
const DriveWindow = 3 * time.Second

// ErrPersonDriving refuses an agent call or action while a person has the
// browser. Callers answer it as refused, reason person_driving, retryable.
var ErrPersonDriving = errors.New("a person is driving this browser through the live view")

// DrivingError says why the agent is kept out, for its failure message.
type DrivingError struct {
	// TakenOver: the person holds the browser (Take over, or a handoff);
	// else they gave input within DriveWindow.
	TakenOver bool
	// Stale: an action prepared before the person took the browser.
	Stale bool
}

func (e *DrivingError) Error() string {
	switch {
	case e.Stale:
		return "a person took over this browser after the call began, so its remaining actions were not sent; wait, then take a snapshot: the page may have changed"
	case e.TakenOver:
		return "a person has taken over this browser in the live view; wait until they give it back, then take a snapshot: the page may have changed"
	}
	return fmt.Sprintf("a person is driving this browser in the live view (input within the last %s); wait a few seconds, then take a snapshot: the page may have changed", DriveWindow)
}

func (e *DrivingError) Unwrap() error { return ErrPersonDriving }

// hold says how a person holds the browser.
type hold int

const (
	holdNone    hold = iota
	holdPressed      // pressed Take over: until they give it back
	holdHandoff      // granted by a handoff: until the agent's next call after it
)

// Hands says who drives one session's browser, the agent or a person. Each
// change of hands moves the epoch. The agent's actions and the person's
// input reach the page under one lock, and an agent action carries the
// epoch its call began in: one prepared before a person took the browser
// finds the epoch moved and is never sent.
type Hands struct {
	now func() time.Time

	mu     sync.Mutex
	epoch  int64
	person bool // the person had the browser last
	hold   hold
	last   time.Time // the person's last input
	// drove: the person sent input to the page (a click, key, wheel,
	// paste, address, Back, Reload, or a pointer move while they had the
	// browser) since the agent's last call; its next call is told and its
	// element ids are dropped. Holding the browser (Take over, a
	// handoff's grant) without input is not driving: the page is as the
	// agent left it.
	drove bool
}

// NewHands starts with the agent holding the browser. now defaults to time.Now.
func NewHands(now func() time.Time) *Hands {
	if now == nil {
		now = time.Now
	}
	return &Hands{now: now}
}

type epochKey struct{}

// WithEpoch marks ctx as an agent call that began in epoch e.
func WithEpoch(ctx context.Context, e int64) context.Context {
	return context.WithValue(ctx, epochKey{}, e)
}

// keptOut says whether a person keeps the agent out now. Under h.mu.
func (h *Hands) keptOut() *DrivingError {
	if h.hold == holdPressed {
		return &DrivingError{TakenOver: true}
	}
	if !h.last.IsZero() && h.now().Sub(h.last) < DriveWindow {
		return &DrivingError{TakenOver: h.hold != holdNone}
	}
	return nil
}

// Agent begins an agent call: it is refused while a person drives (input
// within DriveWindow, or Take over pressed). Otherwise the agent has the
// browser from now on; drove says a person sent input to the page since
// the agent's last call (once: the call after is not told again), not
// merely held it. A hold granted by a handoff ends here: the call came
// after the handoff did.
func (h *Hands) Agent() (epoch int64, drove bool, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if d := h.keptOut(); d != nil {
		return 0, false, d
	}
	h.hold = holdNone
	if h.person {
		h.person = false
		h.epoch++
	}
	drove, h.drove = h.drove, false
	return h.epoch, drove, nil
}

// Dispatch sends one agent action to the page under the lock the person's
// input takes, if the hands have not changed since ctx's call began (a ctx
// without an epoch: if no person keeps the agent out now).
func (h *Hands) Dispatch(ctx context.Context, send func() error) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if e, ok := ctx.Value(epochKey{}).(int64); ok {
		if e != h.epoch || h.person {
			return &DrivingError{Stale: true}
		}
	} else if d := h.keptOut(); d != nil || h.person {
		if d == nil {
			d = &DrivingError{}
		}
		return d
	}
	return send()
}

// Check is Dispatch for an action that sends nothing to the page (a wait):
// it only says whether the call still has the browser.
func (h *Hands) Check(ctx context.Context) error {
	return h.Dispatch(ctx, func() error { return nil })
}

// takeLocked moves the browser to the person: an agent action prepared
// before is never sent. Under h.mu.
func (h *Hands) takeLocked() {
	if !h.person {
		h.person = true
		h.epoch++
	}
}

// Person sends a person's input to the page: the person has the browser
// from now on, for at least DriveWindow, and drove it.
func (h *Hands) Person(send func() error) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.takeLocked()
	h.last = h.now()
	h.drove = true
	return send()
}

// TakeOver keeps the agent out until GiveBack.
func (h *Hands) TakeOver() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.takeLocked()
	h.hold = holdPressed
}

// Grant is a handoff's take-over: the person holds the browser until the
// agent's next call, which comes only once the handoff has ended. Like
// TakeOver, it is not driving: only input the person sends is.
func (h *Hands) Grant() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.takeLocked()
	if h.hold == holdNone {
		h.hold = holdHandoff
	}
}

// GiveBack ends a Take over (or a handoff's grant). The DriveWindow after
// the person's last input still applies.
func (h *Hands) GiveBack() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.hold = holdNone
}

// State is who has the browser, for the viewer.
type State struct {
	Epoch     int64 `json:"epoch"`
	Person    bool  `json:"person"`
	TakenOver bool  `json:"taken_over"`
}

// State reports the hands now.
func (h *Hands) State() State {
	h.mu.Lock()
	defer h.mu.Unlock()
	return State{Epoch: h.epoch, Person: h.person, TakenOver: h.hold != holdNone}
}

// Move sends a plain pointer move only while the person has the browser
// (taken over, or input within DriveWindow); otherwise it is dropped, and
// sent says so.
func (h *Hands) Move(send func() error) (sent bool, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.person || (h.hold == holdNone && h.now().Sub(h.last) >= DriveWindow) {
		return false, nil
	}
	h.last = h.now()
	h.drove = true // a hover may open a menu: the page may have changed
	return true, send()
}
