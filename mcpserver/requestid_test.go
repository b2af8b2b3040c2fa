package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/durable-browser/durable-browser/contract"
)

func TestTagBody(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     any // the _meta request id the call carries afterwards; nil: none, message unchanged
	}{
		{"numeric id", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"snapshot"}}`, float64(7)},
		{"string id", `{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"name":"snapshot","arguments":{}}}`, "a-1"},
		{"existing meta kept", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run","_meta":{"progressToken":"p"}}}`, float64(3)},
		{"client value overwritten", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"_meta":{"io.github.durable-browser/request-id":"forged"}}}`, float64(4)},
		{"no params", `{"jsonrpc":"2.0","id":5,"method":"tools/call"}`, float64(5)},
		{"other method", `{"jsonrpc":"2.0","id":6,"method":"tools/list"}`, nil},
		{"notification", `{"jsonrpc":"2.0","method":"tools/call","params":{}}`, nil},
		{"not JSON", `{"jsonrpc":`, nil},
		{"params not an object", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":[1]}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := tagBody([]byte(tc.in))
			if tc.want == nil {
				if string(out) != tc.in {
					t.Fatalf("changed to %s", out)
				}
				return
			}
			var m struct {
				Params struct {
					Meta map[string]any `json:"_meta"`
				} `json:"params"`
			}
			if err := json.Unmarshal(out, &m); err != nil {
				t.Fatal(err)
			}
			if got := m.Params.Meta[metaRequestID]; got != tc.want {
				t.Fatalf("request id %v, want %v in %s", got, tc.want, out)
			}
			if strings.Contains(tc.in, "progressToken") && m.Params.Meta["progressToken"] != "p" {
				t.Fatalf("lost the progress token: %s", out)
			}
		})
	}
	batch := tagBody([]byte(`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}},{"jsonrpc":"2.0","id":2,"method":"ping"}]`))
	if !strings.Contains(string(batch), metaRequestID) || strings.Count(string(batch), metaRequestID) != 1 {
		t.Fatalf("batch: %s", batch)
	}
}

func TestUpdateID(t *testing.T) {
	run, _ := contract.Lookup(contract.ToolRun)
	snap, _ := contract.Lookup(contract.ToolSnapshot)
	release, _ := contract.Lookup(contract.ToolRelease)
	req := func(id any) *mcp.CallToolRequest {
		return &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Meta: mcp.Meta{metaRequestID: id}}}
	}
	a := json.RawMessage(`{"actions":[{"op":"back"}]}`)
	b := json.RawMessage(`{"actions":[{"op":"forward"}]}`)
	if got := updateID(req(float64(2)), run, a); !strings.HasPrefix(got, "mcp-2-") {
		t.Fatalf("run: %q", got)
	}
	first, resend := updateID(req(float64(2)), run, a), updateID(req(float64(2)), run, a)
	if first != resend {
		t.Fatal("a resend must keep its update id")
	}
	if updateID(req(float64(2)), run, a) == updateID(req(float64(2)), run, b) {
		t.Fatal("a reused request id for another call must be a new update")
	}
	if updateID(req(float64(2)), run, a) == updateID(req("2"), run, a) {
		t.Fatal("string and number ids must differ")
	}
	if got := updateID(req(float64(2)), snap, json.RawMessage(`{}`)); got != "" {
		t.Fatalf("a read got update id %q; reads run again", got)
	}
	if got := updateID(req(strings.Repeat("x", 500)), release, json.RawMessage(`{}`)); got == "" || len(got) > 80 {
		t.Fatalf("long id: %q", got)
	}
	if got := updateID(&mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{}}, run, a); got != "" {
		t.Fatalf("no request id: %q", got)
	}
}
