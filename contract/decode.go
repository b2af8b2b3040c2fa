package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
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

// DecodeStrict turns arguments the schema accepted (validate.Call) into the
// tool's typed value, refusing a field the type lacks: there the schema and
// the type disagree.
func DecodeStrict(name string, raw json.RawMessage) (any, error) {
	ptr, ok := newArgs(name)
	if !ok {
		return nil, fmt.Errorf("unknown tool %q", clipName(name))
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(ptr); err != nil {
		return nil, err
	}
	return derefArgs(name, ptr), nil
}

// UnknownTool is the refusal of a call to a tool that does not exist.
func UnknownTool(name string) *Failure {
	return Fail(CodeRefused, "unknown tool %q: use one of %s", clipName(name), strings.Join(ToolNames(), ", "))
}

// ArgsNotJSON is the refusal of arguments that do not parse as JSON.
func ArgsNotJSON(name string, err error) *Failure {
	return Fail(CodeRefused, "%s: arguments are not valid JSON (%s); send one JSON object such as {}", clipName(name), err)
}
