package workflows

import (
	"encoding/json"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/contract/validate"
)

// AgentTimeout bounds one use_website request (its agent's whole run).
const AgentTimeout = 30 * time.Minute

// agentWorkflowID is the agent's workflow id for a request: derived from the
// session, the site and the request id, so asking again finds the same run.
func agentWorkflowID(parent, site, requestID string) string {
	return parent + "/use_website/" + site + "/" + requestID
}

// validateUseWebsite checks a use_website call against the sites the host
// granted, recording the verdict as validateCall does.
func (b *Browser) validateUseWebsite(ctx workflow.Context, raw json.RawMessage) (any, *contract.Failure) {
	var verdict struct {
		Args    contract.UseWebsiteArgs `json:"args"`
		Failure *contract.Failure       `json:"failure,omitempty"`
	}
	err := workflow.SideEffect(ctx, func(workflow.Context) any {
		a, f := validate.UseWebsite(raw, b.cfg.Sites)
		verdict.Args, verdict.Failure = a, f
		return verdict
	}).Get(&verdict)
	if err != nil {
		return nil, contract.Fail(contract.CodeRefused, "use_website: the recorded validation could not be read (%v); this is a bug in durable-browser, report it", err)
	}
	if verdict.Failure != nil && verdict.Failure.Code != "" {
		return nil, verdict.Failure
	}
	return verdict.Args, nil
}

// useWebsite starts the host's agent workflow for the site as a child with
// a browser session of its own and waits for its report. The child's id
// derives from the request id and may be reused only after a failure: a
// request that finished answers its result (read by agent.result) without
// running again; one that failed runs again. The child outlives the
// session that started it (abandoned), so its result stays to be asked for.
func (b *Browser) useWebsite(ctx workflow.Context, a contract.UseWebsiteArgs) (any, *contract.Failure, error) {
	g, ok := contract.Grant(b.cfg.Sites, a.Site)
	if !ok {
		return nil, contract.Fail(contract.CodeRefused, "use_website: site %q is not granted; the sites granted are %v", a.Site, contract.GrantedSites(b.cfg.Sites)), nil
	}
	if workflow.GetVersion(ctx, changeUseWebsite, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return nil, contract.Fail(contract.CodeRefused, "use_website is not available in a session started before it existed; start a new session"), nil
	}
	parent := workflow.GetInfo(ctx).WorkflowExecution.ID
	id := agentWorkflowID(parent, a.Site, a.RequestID)
	res := &contract.UseWebsiteResult{OK: true, Site: a.Site, RequestID: a.RequestID, WorkflowID: id}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:               id,
		TaskQueue:                g.TaskQueue,
		WorkflowExecutionTimeout: AgentTimeout,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY,
		ParentClosePolicy:        enumspb.PARENT_CLOSE_POLICY_ABANDON,
	})
	task := contract.AgentTask{Site: a.Site, Task: a.Task, RequestID: a.RequestID, Parent: parent}
	err := workflow.ExecuteChildWorkflow(cctx, g.Workflow, task).Get(ctx, &res.Report)
	switch {
	case err == nil:
		return res, nil, nil
	case ctx.Err() != nil:
		return nil, nil, ctx.Err()
	case temporal.IsWorkflowExecutionAlreadyStartedError(err):
		// Finished (or still running, started by an earlier call): its
		// result, without a second run.
		actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			TaskQueue: contract.SharedQueue, StartToCloseTimeout: AgentTimeout, HeartbeatTimeout: time.Minute,
			ScheduleToStartTimeout: b.t.SharedScheduleToStart,
			RetryPolicy:            &temporal.RetryPolicy{MaximumAttempts: 3, NonRetryableErrorTypes: []string{"AgentFailed"}},
		})
		if err := workflow.ExecuteActivity(actx, contract.ActivityAgentResult, contract.AgentResultRequest{WorkflowID: id}).Get(ctx, &res.Report); err != nil {
			return nil, contract.Fail(contract.CodeCommandFailed, "use_website: request %s ran before, but its result could not be read: %s; "+
				"call use_website again with the same request_id", a.RequestID, clipErr(err)), nil
		}
		res.Reused = true
		return res, nil, nil
	}
	return nil, contract.Fail(contract.CodeCommandFailed, "use_website: the agent for %s failed: %s; call use_website again with the same "+
		"request_id to run it again, or do the task yourself", a.Site, clipErr(err)), nil
}

func clipErr(err error) string {
	s := err.Error()
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}
