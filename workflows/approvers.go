package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/durable-browser/durable-browser/contract"
)

// SessionWorkflow is BrowserSession for a worker configured with approvers:
// register it under contract.WorkflowBrowserSession. A session it runs acts
// only on approval and handoff decisions signed by one of them (unless its
// SessionConfig names its own). The list is read once per run and recorded
// in history, so changing it affects the next run, never a replay. With no
// approvers it is BrowserSession.
func SessionWorkflow(approvers contract.Approvers) func(workflow.Context, SessionConfig) (*contract.SessionResult, error) {
	approvers = append(contract.Approvers(nil), approvers...)
	return func(ctx workflow.Context, cfg SessionConfig) (*contract.SessionResult, error) {
		return browserSession(ctx, cfg, approvers)
	}
}
