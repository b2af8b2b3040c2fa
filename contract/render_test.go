package contract

import (
	"encoding/json"
	"testing"
)

func TestOpenAITools(t *testing.T) {
	defs := Definitions()
	raw := OpenAITools(defs)
	if !json.Valid(raw) {
		t.Fatalf("invalid JSON: %s", raw)
	}
	var list []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != len(defs) {
		t.Fatalf("%d entries, want %d", len(list), len(defs))
	}
	for i, e := range list {
		if len(e) != 2 || string(e["type"]) != `"function"` {
			t.Fatalf("entry %d: want exactly type and function, got %s", i, raw)
		}
		var fn map[string]json.RawMessage
		if err := json.Unmarshal(e["function"], &fn); err != nil {
			t.Fatal(err)
		}
		if len(fn) != 3 {
			t.Fatalf("entry %d: function has %d keys, want name, description, parameters", i, len(fn))
		}
		var name, desc string
		_ = json.Unmarshal(fn["name"], &name)
		_ = json.Unmarshal(fn["description"], &desc)
		if name != defs[i].Name || desc != defs[i].Description {
			t.Fatalf("entry %d: name/description %q/%q", i, name, desc)
		}
		if !jsonSame(t, fn["parameters"], defs[i].Schema) {
			t.Fatalf("entry %d: parameters differ from the schema", i)
		}
	}
}

func TestAnthropicTools(t *testing.T) {
	defs := Definitions()
	raw := AnthropicTools(defs)
	var list []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != len(defs) {
		t.Fatalf("%d entries, want %d", len(list), len(defs))
	}
	for i, e := range list {
		if len(e) != 3 {
			t.Fatalf("entry %d: want name, description, input_schema; got %d keys", i, len(e))
		}
		var name string
		_ = json.Unmarshal(e["name"], &name)
		if name != defs[i].Name {
			t.Fatalf("entry %d: name %q", i, name)
		}
		if !jsonSame(t, e["input_schema"], defs[i].Schema) {
			t.Fatalf("entry %d: input_schema differs from the schema", i)
		}
	}
}

func TestRenderEdgeCases(t *testing.T) {
	if string(OpenAITools(nil)) != "[]" || string(AnthropicTools(nil)) != "[]" {
		t.Fatal("no tools should render as []")
	}
	broken := []Tool{{Name: "x", Description: "d", Schema: json.RawMessage(`{`)}}
	for _, raw := range []json.RawMessage{OpenAITools(broken), AnthropicTools(broken)} {
		if !json.Valid(raw) {
			t.Fatalf("a malformed schema made invalid JSON: %s", raw)
		}
	}
}

func jsonSame(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}
