package activities

import (
	"context"
	"errors"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/liveview"
	"github.com/durable-browser/durable-browser/providers"
)

// openView starts the live view of a session whose browser this worker
// reaches over DevTools (local and cdp; a rented provider hands over its
// own view). The view follows the active tab of ls.browser once attached.
func (a *Activities) openView(tag string, p providers.Provider, sess *providers.Session, ls *liveSession) {
	if a.o.LiveView == nil || rented(p) || sess.CDPURL == "" {
		return
	}
	ls.hands = a.o.LiveView.Open(tag, liveview.Page{CDPURL: sess.CDPURL, Active: func(ctx context.Context) (string, error) {
		if ls.browser == nil {
			return "", errors.New("the browser is not attached yet")
		}
		target, err := ls.browser.ActiveTarget()
		if err != nil || target == "" {
			return "", errors.New("the session has no active tab")
		}
		return target, nil
	}})
}

// closeBrowser disconnects from a session's browser, ending its live view
// with it: the token, stream and socket end with the session.
func (a *Activities) closeBrowser(s *liveSession) {
	a.endView(s.ref.Tag, s)
	_ = s.browser.Close()
}

// takeoverGate is the driver's take-over gate for one session: each action
// is sent under the hands' lock, in the epoch its call began in.
type takeoverGate struct{ s *liveSession }

func (f takeoverGate) Dispatch(ctx context.Context, send func() error) error {
	return f.s.hands.Dispatch(liveview.WithEpoch(ctx, f.s.epoch.Load()), send)
}

func (f takeoverGate) Check(ctx context.Context) error {
	return f.s.hands.Check(liveview.WithEpoch(ctx, f.s.epoch.Load()))
}

// agentTurn lets a call begin unless a person drives the browser. After a
// person had it, the snapshot's ids are dropped and the call's result says
// so.
func (s *liveSession) agentTurn() *contract.Failure {
	if s.hands == nil {
		return nil
	}
	epoch, drove, err := s.hands.Agent()
	if err != nil {
		return personDriving(err)
	}
	s.epoch.Store(epoch)
	if drove {
		s.browser.Forget()
		s.drove.Store(true)
	}
	return nil
}

// personDriving is the refusal of a call or action while a person drives.
func personDriving(err error) *contract.Failure {
	f := contract.Fail(contract.CodeRefused, "%v", err)
	f.Reason = contract.ReasonPersonDriving
	f.Retryable = true
	return f
}

// stamp fills what every page result carries: the session's metered time,
// and, once after a person had the browser, a note saying so.
func (s *liveSession) stamp(p *contract.Page) {
	p.SessionS = s.runningS()
	if s.drove.Swap(false) {
		p.PersonDrove = contract.PersonDroveNote
	}
}

// endView ends the live view of tag if it is ls's (a create that lost a
// race to another leaves the winner's view alone).
func (a *Activities) endView(tag string, ls *liveSession) {
	if ls.hands != nil && a.o.LiveView.Hands(tag) == ls.hands {
		a.o.LiveView.End(tag)
	}
}
