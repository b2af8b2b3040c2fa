// Package envelope carries the failure envelope (contract.Failure) through
// Temporal: an activity or update handler returns it as an ApplicationError
// whose type is the failure code, and a caller recovers it from the error.
// It is used by workflow code and by clients, so it stays deterministic and
// imports only the contract and the Temporal SDK's error types.
package envelope

import (
	"errors"

	"go.temporal.io/sdk/temporal"

	"github.com/durable-browser/durable-browser/contract"
)

// Error wraps f for Temporal: the error type is the code (so retry policies
// can stop on it), retries stop when f is not retryable, the envelope rides
// as the error's details, and a code no operator need act on is benign.
func Error(f *contract.Failure) error {
	o := temporal.ApplicationErrorOptions{NonRetryable: !f.Retryable, Details: []any{f}}
	if !f.Code.OperatorMustAct() {
		// A failure the model's call caused: the SDK logs it at debug, not
		// as an error an operator must act on.
		o.Category = temporal.ApplicationErrorCategoryBenign
	}
	return temporal.NewApplicationErrorWithOptions(f.Message, string(f.Code), o)
}

// From recovers the envelope from an error returned by an activity, an
// update or a workflow, if it carries one.
func From(err error) (*contract.Failure, bool) {
	var f *contract.Failure
	if errors.As(err, &f) {
		return f, true
	}
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) && appErr.HasDetails() {
		// A pointer reads both spellings of the details: the *Failure an
		// error made in this process holds, and a decoded payload.
		var out *contract.Failure
		if appErr.Details(&out) == nil && out != nil && out.Code != "" {
			return out, true
		}
	}
	return nil, false
}
