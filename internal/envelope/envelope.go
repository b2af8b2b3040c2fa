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
		if out := details(appErr); out != nil && out.Code != "" {
			return out, true
		}
	}
	return nil, false
}

// details reads a *Failure from the error's details. An error received over
// the wire decodes them; one not yet sent (as an activity returns it, seen by
// the worker's interceptors) holds the values it was made with, which the
// SDK assigns by reflection and panics on when their type differs: such an
// error carries no envelope.
func details(appErr *temporal.ApplicationError) (out *contract.Failure) {
	defer func() {
		if recover() != nil {
			out = nil
		}
	}()
	if appErr.Details(&out) != nil {
		return nil
	}
	return out
}
