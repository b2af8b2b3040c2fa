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
)

// Owner is the workflow that opened a session, as its create call saw it.
type Owner struct {
	WorkflowID   string
	WorkflowType string
	Tag          string
}

// OwnerFunc says whether a session's workflow has let go of its browser:
// the workflow ended, or (a BrowserSession) it moved on to another tag
// because it judged this worker lost. An error means "cannot tell", and the
// browser is kept.
type OwnerFunc func(ctx context.Context, o Owner) (disowned bool, err error)

// ClientOwners answers OwnerFunc from the Temporal service: a workflow that
// is not running (or no longer exists) has let go; a running BrowserSession
// whose state names another tag has moved on. A running workflow of any
// other type (an orchestrator holding an inline session) keeps its browser:
// its state is its own, and the orphan reaper covers it.
func ClientOwners(c client.Client) OwnerFunc {
	return func(ctx context.Context, o Owner) (bool, error) {
		d, err := c.DescribeWorkflowExecution(ctx, o.WorkflowID, "")
		if err != nil {
			var nf *serviceerror.NotFound
			if errors.As(err, &nf) {
				return true, nil
			}
			return false, err
		}
		if d.GetWorkflowExecutionInfo().GetStatus() != enums.WORKFLOW_EXECUTION_STATUS_RUNNING {
			return true, nil
		}
		if o.WorkflowType != contract.WorkflowBrowserSession {
			return false, nil
		}
		v, err := c.QueryWorkflow(ctx, o.WorkflowID, "", contract.QueryState)
		if err != nil {
			return false, err
		}
		var st contract.SessionState
		if err := v.Get(&st); err != nil {
			return false, fmt.Errorf("reading the session's state: %w", err)
		}
		return st.Tag != "" && st.Tag != o.Tag, nil
	}
}

// ownerOf is the workflow a create call runs for (none outside an activity).
func ownerOf(ctx context.Context, tag string) Owner {
	if !activity.IsActivity(ctx) {
		return Owner{Tag: tag}
	}
	info := activity.GetInfo(ctx)
	return Owner{WorkflowID: info.WorkflowExecution.ID, WorkflowType: info.WorkflowType.Name, Tag: tag}
}

// ReleaseDisowned releases the browsers, idle for at least idle, whose
// workflow has let go of them. The case it exists for: a busy host misses
// its schedule-to-start bound, its session is judged lost and moves to a
// browser on another worker, and the host comes back still holding the old
// browser. Without this the old Chrome would run until the orphan reaper's
// hour. Like ReleaseOrphans, it never interrupts a call or takes a browser
// handed to a person.
func (a *Activities) ReleaseDisowned(ctx context.Context, idle time.Duration) []string {
	if a.o.Owners == nil {
		return nil
	}
	var released []string
	cutoff := time.Now().Add(-idle).UnixNano()
	for _, tag := range a.Sessions() {
		a.mu.Lock()
		s := a.sessions[tag]
		a.mu.Unlock()
		if s == nil || s.owner.WorkflowID == "" || s.idleSince() > cutoff {
			continue
		}
		qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		disowned, err := a.o.Owners(qctx, s.owner)
		cancel()
		log := a.log.With().Str("session_tag", tag).Str("workflow_id", s.owner.WorkflowID).Logger()
		if err != nil {
			log.Debug().Err(err).Msg("could not ask whether the session's workflow still holds its browser; keeping it")
			continue
		}
		if !disowned {
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
