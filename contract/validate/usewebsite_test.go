package validate

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/contract"
)

func TestUseWebsite(t *testing.T) {
	grants := []contract.SiteGrant{{Site: "shop.example", Workflow: "ShopAgent"}, {Site: "docs.example", Workflow: "DocsAgent"}}
	for raw, want := range map[string]string{
		`{"site":"shop.example","task":"find the price","request_id":"r-1"}`: "",
		`{"site":"evil.example","task":"x","request_id":"r-1"}`:              "docs.example, shop.example",
		`{"site":"shop.example","task":"","request_id":"r-1"}`:               "task",
		`{"site":"shop.example","task":"x","request_id":"../x"}`:             "request_id",
		`{"site":"shop.example","task":"x"}`:                                 "request_id",
		`{"site":"shop.example","task":"x","request_id":"r","extra":1}`:      "extra",
		`[]`: "JSON object",
	} {
		a, f := UseWebsite(json.RawMessage(raw), grants)
		switch {
		case want == "" && (f != nil || a.Site != "shop.example" || a.RequestID != "r-1"):
			t.Errorf("%s: %+v %v", raw, a, f)
		case want != "" && (f == nil || f.Code != contract.CodeRefused || !strings.Contains(f.Message, want)):
			t.Errorf("%s: got %v, want refused naming %q", raw, f, want)
		}
	}
	if _, f := UseWebsite(json.RawMessage(`{"site":"shop.example","task":"x","request_id":"r"}`), nil); f == nil || !strings.Contains(f.Message, "unknown tool") {
		t.Errorf("without grants: %v", f)
	}
	defs := contract.DefinitionsFor(grants)
	if len(defs) != len(contract.Definitions())+1 || defs[len(defs)-1].Name != contract.ToolUseWebsite || !strings.Contains(string(defs[len(defs)-1].Schema), "docs.example") {
		t.Errorf("DefinitionsFor: %+v", defs[len(defs)-1])
	}
}
