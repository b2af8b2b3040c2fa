// Package validate checks a model's tool call against the tool's JSON
// Schema (contract.Definitions) before anything runs, and turns what is
// wrong into a refusal a model can act on.
//
// It is apart from package contract because the schema library
// (santhosh-tekuri/jsonschema) compiles its meta-schemas in its package
// initialisation: every program that links it pays that at every start. The
// session workflow, the activities and the MCP server validate; a client
// that only sends calls (the durable-browser CLI, package client) does not
// link it, and the session's own check answers an invalid call.
package validate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/durable-browser/durable-browser/contract"
)

// compiled holds each tool's compiled schema, built once from Definitions()
// so the schemas a model is shown are exactly the ones its calls are held to.
var compiled = sync.OnceValues(func() (map[string]*toolSchema, error) {
	out := map[string]*toolSchema{}
	for _, t := range contract.Definitions() {
		n, err := compileTool(t.Name, t.Schema)
		if err != nil {
			return nil, fmt.Errorf("tool %s: %w", t.Name, err)
		}
		out[t.Name] = n
	}
	return out, nil
})

// Call checks a model's call against the tool's schema before any
// activity runs and returns the typed arguments as a value (SnapshotArgs,
// RunArgs, ...). Empty raw arguments count as {}. Any problem is a refused
// Failure whose message names the field and the fix; values are never quoted,
// since arguments may carry secrets.
func Call(name string, raw json.RawMessage) (any, *contract.Failure) {
	schemas, err := compiled()
	if err != nil {
		// A broken built-in schema is a bug; the tests keep it from shipping.
		return nil, contract.Fail(contract.CodeRefused, "tool schemas failed to load (%v); this is a bug in durable-browser, report it", err)
	}
	schema, ok := schemas[name]
	if !ok {
		return nil, contract.UnknownTool(name)
	}
	if len(raw) > contract.MaxArgsBytes {
		return nil, contract.Fail(contract.CodeRefused, "%s: arguments are %d bytes, over the %d-byte limit; send less per call", name, len(raw), contract.MaxArgsBytes)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	v, err := decodeArgs(raw)
	if err != nil {
		return nil, contract.ArgsNotJSON(name, err)
	}
	if _, isObj := v.(map[string]any); !isObj {
		return nil, contract.Fail(contract.CodeRefused, "%s: arguments must be a JSON object such as {}, not %s", name, jsonKind(v))
	}
	if errs := schema.validate(v); len(errs) > 0 {
		parts := make([]string, len(errs))
		for i, e := range errs {
			parts[i] = e.String()
		}
		return nil, contract.Fail(contract.CodeRefused, "%s. Fix the arguments and call %s again.", strings.Join(parts, "; "), name)
	}
	if f := checkTargets(name, v); f != nil {
		return nil, f
	}
	args, err := contract.DecodeStrict(name, raw)
	if err != nil {
		// The schema passed, so this is a mismatch between schema and type.
		return nil, contract.Fail(contract.CodeRefused, "%s: arguments do not fit the tool's type (%s); this is a bug in durable-browser, report it", name, err)
	}
	if ra, ok := args.(contract.RunArgs); ok {
		if f := ra.Check(); f != nil {
			return nil, f
		}
		if len(ra.Code) > contract.MaxCodeBytes {
			return nil, contract.Fail(contract.CodeRefused, "run.code: %d bytes, over the %d-byte (64 KiB) source limit of a code cell; do less in one cell", len(ra.Code), contract.MaxCodeBytes)
		}
	}
	if sa, ok := args.(contract.ScreenshotArgs); ok {
		if f := sa.Check(); f != nil {
			return nil, f
		}
	}
	return args, nil
}

// UseWebsite checks a use_website call against the sites granted.
func UseWebsite(raw json.RawMessage, grants []contract.SiteGrant) (contract.UseWebsiteArgs, *contract.Failure) {
	if len(grants) == 0 {
		return contract.UseWebsiteArgs{}, contract.UnknownTool(contract.ToolUseWebsite)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	sites := contract.GrantedSites(grants)
	n, err := compileTool(contract.ToolUseWebsite, contract.UseWebsiteTool(sites).Schema)
	if err != nil {
		return contract.UseWebsiteArgs{}, contract.Fail(contract.CodeRefused, "use_website's schema failed to load (%v); this is a bug in durable-browser, report it", err)
	}
	v, err := decodeArgs(raw)
	if err != nil || len(raw) > contract.MaxArgsBytes {
		return contract.UseWebsiteArgs{}, contract.Fail(contract.CodeRefused, "use_website: arguments are not one JSON object within %d bytes; send {\"site\":..., \"task\":..., \"request_id\":...}", contract.MaxArgsBytes)
	}
	if _, isObj := v.(map[string]any); !isObj {
		return contract.UseWebsiteArgs{}, contract.Fail(contract.CodeRefused, "use_website: arguments must be a JSON object, not %s", jsonKind(v))
	}
	if errs := n.validate(v); len(errs) > 0 {
		parts := make([]string, len(errs))
		for i, e := range errs {
			parts[i] = e.String()
		}
		return contract.UseWebsiteArgs{}, contract.Fail(contract.CodeRefused, "%s. The sites granted are %s. Fix the arguments and call use_website again.", strings.Join(parts, "; "), strings.Join(sites, ", "))
	}
	var a contract.UseWebsiteArgs
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(&a); err != nil {
		return contract.UseWebsiteArgs{}, contract.Fail(contract.CodeRefused, "use_website: arguments do not fit the tool's type (%s); this is a bug in durable-browser, report it", err)
	}
	return a, nil
}

// checkTargets holds what the schemas leave to prose: an action that acts
// on one element names it by id or by locator, exactly one of them (press
// and scroll: at most one), and so does browser_upload.
func checkTargets(name string, v any) *contract.Failure {
	one := func(path string, m map[string]any, required bool) *contract.Failure {
		_, hasID := m["id"]
		_, hasLoc := m["locator"]
		switch {
		case hasID && hasLoc:
			return contract.Fail(contract.CodeRefused, "%s: give id or locator, not both. Fix the arguments and call %s again.", path, name)
		case required && !hasID && !hasLoc:
			return contract.Fail(contract.CodeRefused, "%s: missing the element: give id (from the latest snapshot) or locator (e.g. {\"role\":\"button\",\"name\":\"Save\"}). Fix the arguments and call %s again.", path, name)
		}
		return nil
	}
	top, _ := v.(map[string]any)
	switch name {
	case contract.ToolSnapshot:
		_, since := top["since"]
		_, scope := top["scope"]
		_, offset := top["offset"]
		_, find := top["find"]
		_, role := top["role"]
		if since && (scope || offset || find || role) {
			return contract.Fail(contract.CodeRefused, "%s: since compares whole pages: leave out scope, offset, find and role. Fix the arguments and call %s again.", name, name)
		}
	case contract.ToolUpload:
		return one(name, top, true)
	case contract.ToolCheck:
		_, hasID := top["expect_id"]
		_, hasLoc := top["expect_locator"]
		if hasID && hasLoc {
			return contract.Fail(contract.CodeRefused, "%s: give expect_id or expect_locator, not both. Fix the arguments and call %s again.", name, name)
		}
		expects := hasID || hasLoc
		for _, k := range []string{"url", "expect_text"} {
			_, has := top[k]
			expects = expects || has
		}
		for _, k := range []string{"no_console_errors", "no_failed_requests"} {
			v, _ := top[k].(bool)
			expects = expects || v
		}
		if !expects {
			return contract.Fail(contract.CodeRefused, "%s: nothing to check: a look at the page proves nothing. Give at least one of url, expect_text, "+
				"expect_id, expect_locator, no_console_errors: true, no_failed_requests: true, and call %s again.", name, name)
		}
	case contract.ToolScreenshot:
		return one(name, top, false)
	case contract.ToolRun:
		acts, _ := top["actions"].([]any)
		for i, a := range acts {
			m, _ := a.(map[string]any)
			op, _ := m["op"].(string)
			path := fmt.Sprintf("%s.actions[%d]", name, i)
			required := false
			for _, o := range contract.LocatorOps {
				required = required || o == op
			}
			if f := one(path, m, required); f != nil {
				return f
			}
		}
	}
	return nil
}

// maxArgsDepth bounds how deeply a call's arguments may nest; the schemas
// need four levels.
const maxArgsDepth = 32

// decodeArgs reads exactly one JSON value, numbers kept as json.Number, and
// refuses an object that names a field twice: the schema and the typed decode
// would each see only the last, and a reader of the history might see the first.
func decodeArgs(raw []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	v, err := readValue(d, 0)
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("extra data after the JSON value")
	}
	return v, nil
}

func readValue(d *json.Decoder, depth int) (any, error) {
	if depth > maxArgsDepth {
		return nil, fmt.Errorf("nested more than %d levels deep", maxArgsDepth)
	}
	t, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t {
	case json.Delim('{'):
		m := map[string]any{}
		for d.More() {
			kt, err := d.Token()
			if err != nil {
				return nil, err
			}
			k, ok := kt.(string)
			if !ok {
				return nil, errors.New("object key is not a string")
			}
			if _, dup := m[k]; dup {
				return nil, fmt.Errorf("the field %q appears twice in one object", clip(k))
			}
			if m[k], err = readValue(d, depth+1); err != nil {
				return nil, err
			}
		}
		if _, err := d.Token(); err != nil {
			return nil, err
		}
		return m, nil
	case json.Delim('['):
		a := []any{}
		for d.More() {
			v, err := readValue(d, depth+1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		if _, err := d.Token(); err != nil {
			return nil, err
		}
		return a, nil
	}
	return t, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	}
	return "a value"
}

// clip keeps a model-made field name short in a message.
func clip(s string) string {
	const limit = 64
	if len(s) > limit {
		return s[:limit] + "..."
	}
	return s
}
