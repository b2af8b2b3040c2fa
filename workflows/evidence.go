package workflows

import (
	"errors"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/envelope"
	"go.temporal.io/sdk/workflow"
)

// GetEvidence fetches a filed body by the key a result's claim check carries
// (evidence.key), verified against its hash, for example to show a
// screenshot to a model. It runs the evidence.get activity on the shared
// queue as a read (retried with bounded backoff). A failure is returned as an
// *contract.Failure (errors.As): refused for a missing key or a body over
// contract.MaxEvidenceResult, command_failed for one that does not verify.
// The body lands in this workflow's history, so fetch only what the model
// needs; the CLI's `durable-browser evidence get` reads any size.
func GetEvidence(ctx workflow.Context, key string) ([]byte, error) {
	actx := workflow.WithActivityOptions(ctx, ActivityOptions(contract.ClassRead, contract.SharedQueue, false, Timeouts{}))
	var res contract.GetEvidenceResult
	err := workflow.ExecuteActivity(actx, contract.ActivityEvidence, contract.GetEvidenceRequest{Key: key}).Get(ctx, &res)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, failureFor(contract.ClassRead, classify(err))
	}
	return res.Body, nil
}

// EvidenceWorkflow is GetEvidence as a workflow of its own
// (contract.WorkflowEvidence), for a client outside workflow code that has no
// S3 access: the MCP server fetches a screenshot too large to ride inline.
// A failure is the envelope as an application error.
func EvidenceWorkflow(ctx workflow.Context, req contract.GetEvidenceRequest) (*contract.GetEvidenceResult, error) {
	body, err := GetEvidence(ctx, req.Key)
	if err != nil {
		var f *contract.Failure
		if errors.As(err, &f) {
			return nil, envelope.Error(f)
		}
		return nil, err
	}
	return &contract.GetEvidenceResult{OK: true, Body: body}, nil
}
