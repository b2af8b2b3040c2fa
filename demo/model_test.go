package demo

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/contract"
)

func step(name string, args, out any) Step {
	a, _ := json.Marshal(args)
	o, _ := json.Marshal(out)
	return Step{Call: Call{Name: name, Args: a}, Output: o}
}

func snapStep(url, text string) Step {
	return step(contract.ToolSnapshot, map[string]any{"mode": "full"}, contract.SnapshotResult{OK: true, Page: contract.Page{URL: url}, Observation: contract.Observation{Text: text}})
}

// After a run that may have placed the order (effect_unknown), the stand-in
// looks again, comes back to the shop in the new browser, signs in, and opens
// the order the account already has instead of buying again. Without the
// doubt, the same page leads to the cart as before.
func TestScriptedAfterEffectUnknown(t *testing.T) {
	const site = "http://127.0.0.1:8380"
	placeOrder := step(contract.ToolRun, map[string]any{"actions": []any{map[string]any{"op": "click", "id": "e9"}}},
		contract.Failure{Code: contract.CodeEffectUnknown, Message: "the worker was lost mid-run"})
	replaced := step(contract.ToolSnapshot, map[string]any{"mode": "full"}, contract.Failure{Code: contract.CodeSessionReplaced})
	search := `- heading "Search" [level=1]
- paragraph: Signed in as agent@example.com. In your cart: 0.
- [e3] link "Check out"
- [e4] searchbox "Search"
- [e5] button "Search"
- heading "Your orders" [level=2]
- [e6] link "Order #1001"
- [e7] link "Order #1002"`
	checkout := snapStep(site+"/shop/checkout", `- [e9] button "Place order"`)

	for _, tc := range []struct {
		name  string
		steps []Step
		want  string // in the next call's JSON, or the final text
	}{
		{"a failure: look again", []Step{checkout, placeOrder}, `"name":"snapshot"`},
		{"session replaced: look again", []Step{checkout, placeOrder, replaced}, `"name":"snapshot"`},
		{"a blank new browser: back to the shop", []Step{checkout, placeOrder, replaced, snapStep("about:blank", "")}, `"url":"` + site + `/shop/"`},
		{"signed in again, in doubt: open the newest order", []Step{checkout, placeOrder, replaced, snapStep("about:blank", ""),
			snapStep(site+"/shop/search", search)}, `"id":"e7"`},
		{"no doubt: search as usual", []Step{snapStep(site+"/shop/search", search)}, `"value":"lamp"`},
		{"in doubt, no order listed: buy", []Step{checkout, placeOrder, snapStep(site+"/shop/search",
			strings.Split(search, "\n- heading \"Your orders\"")[0])}, `"value":"lamp"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			turn := scripted(ModelInput{Site: site, Kind: KindShop, Steps: tc.steps})
			got, _ := json.Marshal(turn)
			if !strings.Contains(string(got), tc.want) {
				t.Fatalf("next turn %s, want it to hold %s", got, tc.want)
			}
		})
	}
}
