package envelope

import (
	"fmt"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/durable-browser/durable-browser/contract"
)

// From reads the envelope from an error as an activity returns it (before
// it is sent: the SDK's interceptors see it so) and as a caller receives it.
func TestFrom(t *testing.T) {
	f := contract.Fail(contract.CodeStaleSnapshot, "take a new snapshot")
	local := Error(f)
	fc := temporal.GetDefaultFailureConverter()
	received := fc.FailureToError(fc.ErrorToFailure(local))
	for name, err := range map[string]error{
		"local":    local,
		"wrapped":  fmt.Errorf("calling: %w", local),
		"received": received,
		"failure":  f,
	} {
		t.Run(name, func(t *testing.T) {
			got, ok := From(err)
			if !ok || got.Code != contract.CodeStaleSnapshot || got.Message != f.Message {
				t.Fatalf("From = %+v, %v", got, ok)
			}
		})
	}
	for name, err := range map[string]error{
		"plain":      fmt.Errorf("boom"),
		"no details": temporal.NewApplicationError("boom", "x"),
		"other":      temporal.NewApplicationError("boom", "x", map[string]int{"a": 1}),
	} {
		if got, ok := From(err); ok {
			t.Errorf("%s: From = %+v, want none", name, got)
		}
	}
}
