package client

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/contract"
)

func TestWithLocators(t *testing.T) {
	elems := map[string]contract.Locator{}
	learn(elems, "<<page abc>>\n[1] heading \"Sign up\" level=1\n  [2] textbox \"Email \\\"work\\\"\" required\n~ [3] button \"Go\"\n- [4] link \"Gone\"\n[5] checkbox checked=false\n<<end abc>>")
	if elems["2"].Name != `Email "work"` || elems["3"] != (contract.Locator{Role: "button", Name: "Go"}) || elems["5"] != (contract.Locator{Role: "checkbox"}) {
		t.Fatalf("learned %+v", elems)
	}
	if _, ok := elems["4"]; ok {
		t.Fatal("a removed line names no element")
	}
	learnCandidates(elems, `action 1 (click): locator {text="Act"} matches 2 visible elements: [12] button "Act 1", [13] link "Act 2"; act on one by its id`)
	if elems["12"] != (contract.Locator{Role: "button", Name: "Act 1"}) || elems["13"] != (contract.Locator{Role: "link", Name: "Act 2"}) {
		t.Fatalf("candidates learned: %+v", elems)
	}
	out, err := withLocators(contract.ToolRun, json.RawMessage(`{"observe":true,"actions":[{"op":"click","id":"[3]"},{"op":"goto","url":"http://a.example/"}]}`), elems)
	if err != nil || string(out) != `{"actions":[{"locator":{"role":"button","name":"Go"},"op":"click"},{"op":"goto","url":"http://a.example/"}]}` {
		t.Fatalf("%s %v", out, err)
	}
	if _, err := withLocators(contract.ToolCheck, json.RawMessage(`{"expect_id":"9"}`), elems); err == nil || !strings.Contains(err.Error(), "[9]") {
		t.Fatalf("an unknown id: %v", err)
	}
	if out, _ := withLocators(contract.ToolCheck, json.RawMessage(`{"expect_id":"2"}`), elems); !strings.Contains(string(out), `"expect_locator":{"role":"textbox"`) {
		t.Fatalf("%s", out)
	}
}
