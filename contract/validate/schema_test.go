package validate

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/contract"
)

// walkSchemas calls fn for every schema object nested in s, with its path.
func walkSchemas(s any, path string, fn func(path string, m map[string]any)) {
	m, ok := s.(map[string]any)
	if !ok {
		return
	}
	fn(path, m)
	if props, ok := m["properties"].(map[string]any); ok {
		for k, v := range props {
			walkSchemas(v, path+"/properties/"+k, fn)
		}
	}
	if items, ok := m["items"]; ok {
		walkSchemas(items, path+"/items", fn)
	}
	for _, kw := range []string{"oneOf", "anyOf", "allOf"} {
		if arr, ok := m[kw].([]any); ok {
			for i, b := range arr {
				walkSchemas(b, fmt.Sprintf("%s/%s/%d", path, kw, i), fn)
			}
		}
	}
}

func TestSchemasCompile(t *testing.T) {
	for _, tool := range contract.Definitions() {
		if _, err := compileTool(tool.Name, tool.Schema); err != nil {
			t.Errorf("%s: %v", tool.Name, err)
		}
	}
}

// The messages phrase these keywords (and the annotations carry no check).
// Anything else in a schema would be enforced by the library but explained
// only generically, or, like format, not enforced at all: add it here only
// with a message for it in collect.
var phrasedKeywords = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true,
	"enum": true, "const": true, "minimum": true, "maximum": true, "minLength": true,
	"maxLength": true, "pattern": true, "minItems": true, "maxItems": true, "items": true,
	"minProperties": true, "maxProperties": true, "oneOf": true, "anyOf": true,
	"description": true, "title": true, "default": true, "examples": true,
}

func TestSchemaKeywords(t *testing.T) {
	for _, tool := range contract.Definitions() {
		var s any
		if err := json.Unmarshal(tool.Schema, &s); err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		walkSchemas(s, tool.Name, func(path string, m map[string]any) {
			for k := range m {
				if !phrasedKeywords[k] {
					t.Errorf("%s: keyword %q has no message", path, k)
				}
			}
		})
	}
}

func TestCompileRefusesBadSchemas(t *testing.T) {
	bad := []string{
		`{"type":"strin"}`,                // unknown type
		`{"type":"string","pattern":"("}`, // bad regexp
		`{"type":"array","maxItems":-1}`,  // negative bound
		`{"oneOf":[]}`,                    // empty combinator
		`[]`,                              // not a schema
		`{`,                               // not JSON
	}
	for _, s := range bad {
		if _, err := compileTool("t", json.RawMessage(s)); err == nil {
			t.Errorf("compiled %s", s)
		}
	}
}

func TestSchemasClosedAndBounded(t *testing.T) {
	for _, tool := range contract.Definitions() {
		var s any
		if err := json.Unmarshal(tool.Schema, &s); err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		top := s.(map[string]any)
		// Both OpenAI and Anthropic want an object at the top, without
		// combinators there.
		if top["type"] != "object" {
			t.Errorf("%s: top-level type is %v", tool.Name, top["type"])
		}
		for _, kw := range []string{"oneOf", "anyOf", "allOf", "not", "enum", "$ref"} {
			if _, ok := top[kw]; ok {
				t.Errorf("%s: top-level %s is not accepted by model APIs", tool.Name, kw)
			}
		}
		walkSchemas(s, tool.Name, func(path string, m map[string]any) {
			switch m["type"] {
			case "object":
				if m["additionalProperties"] != false {
					t.Errorf("%s: object without additionalProperties:false", path)
				}
				if _, ok := m["properties"]; !ok {
					t.Errorf("%s: object without properties", path)
				}
			case "string":
				_, isEnum := m["enum"]
				_, isConst := m["const"]
				if !isEnum && !isConst {
					if _, ok := m["maxLength"]; !ok {
						t.Errorf("%s: string without maxLength", path)
					}
				}
			case "integer", "number":
				if _, ok := m["minimum"]; !ok {
					t.Errorf("%s: number without minimum", path)
				}
				if _, ok := m["maximum"]; !ok {
					t.Errorf("%s: number without maximum", path)
				}
			case "array":
				if _, ok := m["maxItems"]; !ok {
					t.Errorf("%s: array without maxItems", path)
				}
			case nil:
				if _, ok := m["const"]; !ok && m["oneOf"] == nil {
					t.Errorf("%s: schema without a type", path)
				}
			}
			// Every property the model sees is explained, except the
			// self-evident clip coordinates and select values.
			if props, ok := m["properties"].(map[string]any); ok {
				for k, v := range props {
					pm := v.(map[string]any)
					if _, ok := pm["const"]; ok || strings.Contains(path, "/clip") {
						continue
					}
					if d, _ := pm["description"].(string); d == "" {
						t.Errorf("%s/properties/%s: no description", path, k)
					}
				}
			}
		})
	}
}

// The validator follows the schema it is given, so a schema change is a
// validation change. A hand-made schema exercises the keywords directly.
func TestValidatorKeywords(t *testing.T) {
	schema := `{"type":"object","additionalProperties":false,"properties":{
		"s":{"type":"string","minLength":2,"maxLength":3,"pattern":"^[a-z]+$"},
		"n":{"type":"number","minimum":0.5,"maximum":1.5},
		"a":{"type":"array","minItems":1,"maxItems":2,"items":{"type":"integer","minimum":0,"maximum":9}},
		"c":{"const":"x"},
		"any":{"anyOf":[{"type":"string","maxLength":1},{"type":"boolean"}]},
		"z":{"type":"null"}
	},"required":["s"]}`
	n, err := compileTool("t", json.RawMessage(schema))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		raw  string
		want string // "" for valid
	}{
		{`{"s":"ab"}`, ""},
		{`{"s":"ab","n":1,"a":[0,9],"c":"x","any":true,"z":null}`, ""},
		{`{"s":"ab","any":"q"}`, ""},
		{`{"s":"a"}`, "t.s: must be at least 2 characters"},
		{`{"s":"abcd"}`, "t.s: must be at most 3 characters (got 4)"},
		{`{"s":"AB"}`, "t.s: has the wrong form"},
		{`{"s":"ab","n":2}`, "t.n: must be from 0.5 to 1.5"},
		{`{"s":"ab","a":[1,2,3]}`, "t.a: must hold at most 2 items"},
		{`{"s":"ab","a":[10]}`, "t.a[0]: must be a whole number from 0 to 9"},
		{`{"s":"ab","c":"y"}`, "t.c: must be x"},
		{`{"s":"ab","any":"qq"}`, "t.any: must match one of the forms"},
		{`{"s":"ab","z":1}`, "t.z: must be null"},
		{`{}`, "t.s: missing"},
	}
	for _, c := range cases {
		var v any
		d := json.NewDecoder(strings.NewReader(c.raw))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			t.Fatal(err)
		}
		errs := n.validate(v)
		switch {
		case c.want == "" && len(errs) > 0:
			t.Errorf("%s: %v", c.raw, errs)
		case c.want != "" && (len(errs) == 0 || !strings.HasPrefix(errs[0].String(), c.want)):
			t.Errorf("%s: got %v, want %q", c.raw, errs, c.want)
		}
	}
}
