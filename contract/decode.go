package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Decode turns raw arguments into the tool's typed value without checking
// them against the schema. It is for workflow code replaying a call whose
// verdict Validate already gave and history recorded: unknown fields are
// ignored, so a field removed from the contract later does not change how an
// old call replays. Everything else must call Validate.
func Decode(name string, raw json.RawMessage) (any, error) {
	ptr, ok := newArgs(name)
	if !ok {
		return nil, fmt.Errorf("unknown tool %q", clipName(name))
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	if err := json.Unmarshal(raw, ptr); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return derefArgs(name, ptr), nil
}
