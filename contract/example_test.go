package contract_test

import (
	"encoding/json"
	"fmt"

	"github.com/durable-browser/durable-browser/contract"
)

// ExampleForModel renders a snapshot's answer the way a model reads it:
// the same object less size and ok (for the orchestrator's code).
func ExampleForModel() {
	answer := json.RawMessage(`{"ok":true,"url":"https://shop.example/","title":"Shop","text":"[1] link \"Cart\"","size":120}`)
	fmt.Println(string(contract.ForModel(contract.ToolCall{Name: contract.ToolSnapshot}, answer)))
	// Output: {"url":"https://shop.example/","title":"Shop","text":"[1] link \"Cart\""}
}
