package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/durable-browser/durable-browser/activities"
)

// GetEvidence fetches a filed body by the key a result's claim check carries
// (evidence.key), verified against its hash, for example to show a
// screenshot to a model. It runs the evidence.get activity on the shared
// queue as a read (retried with bounded backoff). A failure is returned as an
// *activities.Failure (errors.As): refused for a missing key or a body over
// activities.MaxEvidenceResult, command_failed for one that does not verify.
// The body lands in this workflow's history, so fetch only what the model
// needs; the CLI's `durable-browser evidence get` reads any size.
func GetEvidence(ctx workflow.Context, key string) ([]byte, error) {
	actx := workflow.WithActivityOptions(ctx, ActivityOptions(activities.ClassRead, activities.SharedQueue, false, Timeouts{}))
	var res activities.GetEvidenceResult
	err := workflow.ExecuteActivity(actx, activities.ActivityEvidence, activities.GetEvidenceRequest{Key: key}).Get(ctx, &res)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, failureFor(activities.ClassRead, classify(err))
	}
	return res.Body, nil
}
