package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/recorder"
)

// Owner is the workflow that opened a session, as its create call saw it,
// and the host queue of the worker holding the browser.
type Owner struct {
	WorkflowID   string
	WorkflowType string
	Tag          string
	HostQueue    string
}

// Ownership is what a session's workflow says of a browser this worker holds.
type Ownership int

const (
	// Holds: the workflow still uses this worker's browser (or cannot say).
	Holds Ownership = iota
	// Ended: the workflow is no longer running; nobody will release the browser.
	Ended
	// MovedTag: the session let go of this tag and runs on another browser.
	MovedTag
	// MovedHost: the session keeps the tag but another worker drives it
	// (a rented or attached browser taken over after this worker was
	// judged lost). The browser is theirs now: this worker only lets go.
	MovedHost
)

// OwnerFunc says what a session's workflow holds. An error means "cannot
// tell", and the browser is kept.
type OwnerFunc func(ctx context.Context, o Owner) (Ownership, error)

// ClientOwners answers OwnerFunc from the Temporal service: a workflow that
// is not running (or no longer exists) has Ended; a running BrowserSession
// whose state names another tag has MovedTag, the same tag on another host
// queue MovedHost. A running workflow of any other type (an orchestrator
// holding an inline session) Holds: its state is its own, and the orphan
// reaper covers it.
func ClientOwners(c client.Client) OwnerFunc {
	return func(ctx context.Context, o Owner) (Ownership, error) {
		d, err := c.DescribeWorkflowExecution(ctx, o.WorkflowID, "")
		if err != nil {
			var nf *serviceerror.NotFound
			if errors.As(err, &nf) {
				return Ended, nil
			}
			return Holds, err
		}
		if d.GetWorkflowExecutionInfo().GetStatus() != enums.WORKFLOW_EXECUTION_STATUS_RUNNING {
			return Ended, nil
		}
		if o.WorkflowType != contract.WorkflowBrowserSession {
			return Holds, nil
		}
		v, err := c.QueryWorkflow(ctx, o.WorkflowID, "", contract.QueryState)
		if err != nil {
			return Holds, err
		}
		var st contract.SessionState
		if err := v.Get(&st); err != nil {
			return Holds, fmt.Errorf("reading the session's state: %w", err)
		}
		switch {
		case st.Tag == "":
			return Holds, nil
		case st.Tag != o.Tag:
			return MovedTag, nil
		case st.HostQueue != "" && o.HostQueue != "" && st.HostQueue != o.HostQueue:
			return MovedHost, nil
		}
		return Holds, nil
	}
}

// ownerOf is the workflow a create call runs for (none outside an activity).
func ownerOf(ctx context.Context, tag, hostQueue string) Owner {
	if !activity.IsActivity(ctx) {
		return Owner{Tag: tag, HostQueue: hostQueue}
	}
	info := activity.GetInfo(ctx)
	return Owner{WorkflowID: info.WorkflowExecution.ID, WorkflowType: info.WorkflowType.Name, Tag: tag, HostQueue: hostQueue}
}

// ReleaseDisowned lets go of the browsers, idle for at least idle, whose
// workflow has let go of them. The case it exists for: a busy host misses
// its schedule-to-start bound and its session is judged lost. A local
// session moves to a new browser and tag on another worker; a rented or
// attached one is taken over, same tag, by another worker. When the host
// comes back it still holds the old browser: the first it releases (else
// that Chrome would run until the orphan bound), the second it only
// detaches from, since the browser is the other worker's now. A workflow
// that ended gets its browser released too. Like ReleaseOrphans, it never
// interrupts a call or takes a browser handed to a person.
func (a *Activities) ReleaseDisowned(ctx context.Context, idle time.Duration) []string {
	if a.o.Owners == nil {
		return nil
	}
	var released []string
	for tag, s := range a.idleFor(idle) {
		if s.owner.WorkflowID == "" {
			continue
		}
		verdict, err := a.ownership(ctx, s)
		log := a.log.With().Str("session_tag", tag).Str("workflow_id", s.owner.WorkflowID).Logger()
		if err != nil {
			log.Debug().Err(err).Msg("could not ask whether the session's workflow still holds its browser; keeping it")
			continue
		}
		switch verdict {
		case Holds:
			continue
		case MovedHost:
			if a.detachIdle(tag, s) {
				log.Info().Msg("let go of a browser another worker took over (this worker was judged lost); the browser runs on")
				released = append(released, tag)
			}
			continue
		}
		ok, err := a.releaseIdle(ctx, tag, s)
		if err != nil {
			log.Error().Err(err).Msg("releasing a browser its workflow let go of")
			continue
		}
		if ok {
			log.Warn().Msg("released a browser its workflow let go of (the workflow ended, or judged this worker lost and moved on)")
			released = append(released, tag)
		}
	}
	return released
}

// ownership asks the session's workflow, under a bound.
func (a *Activities) ownership(ctx context.Context, s *liveSession) (Ownership, error) {
	if a.o.Owners == nil || s.owner.WorkflowID == "" {
		return Holds, nil
	}
	qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return a.o.Owners(qctx, s.owner)
}

// detachIdle lets go of s without releasing its browser, unless a call
// holds it (then false).
func (a *Activities) detachIdle(tag string, s *liveSession) bool {
	select {
	case s.calls <- struct{}{}:
	default:
		return false
	}
	a.mu.Lock()
	if a.sessions[tag] == s {
		delete(a.sessions, tag)
	}
	a.mu.Unlock()
	s.stopRecording(recorder.GapReleased)
	if s.saver != nil {
		// The worker that took the browser over keeps its state and lease.
		s.saver.halt()
	}
	a.closeBrowser(s)
	<-s.calls
	s.closeEgress()
	return true
}
