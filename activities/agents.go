package activities

import (
	"context"
	"encoding/json"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/durable-browser/durable-browser/contract"
)

// AgentResult answers agent.result: the result of a use_website agent
// workflow that an earlier call started, waiting for it if it still runs.
// A run that failed answers a non-retryable AgentFailed error (the session
// then says to ask again, which runs it again).
func (a *Activities) AgentResult(ctx context.Context, req contract.AgentResultRequest) (json.RawMessage, error) {
	if a.o.Client == nil {
		return nil, temporal.NewNonRetryableApplicationError("this worker has no Temporal client to read agent results with", "AgentFailed", nil)
	}
	done := make(chan struct{})
	defer close(done)
	if activity.IsActivity(ctx) {
		go func() {
			t := time.NewTicker(10 * time.Second)
			defer t.Stop()
			for {
				select {
				case <-done:
					return
				case <-t.C:
					activity.RecordHeartbeat(ctx)
				}
			}
		}()
	}
	var out json.RawMessage
	if err := a.o.Client.GetWorkflow(ctx, req.WorkflowID, "").Get(ctx, &out); err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, temporal.NewNonRetryableApplicationError("the agent's run did not succeed: "+err.Error(), "AgentFailed", nil)
	}
	return out, nil
}
