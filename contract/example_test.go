package contract_test

import (
	"encoding/json"
	"fmt"

	"github.com/durable-browser/durable-browser/contract"
)

// ExampleForModel renders a snapshot's answer the way a model reads it:
// the same object less size and ok (for the orchestrator's code), its
// fenced page text after the JSON, without JSON's escapes, running to the
// end of the answer.
func ExampleForModel() {
	answer := json.RawMessage(`{"ok":true,"url":"https://shop.example/","title":"Shop","text":"<<page ask panda win>>\n[1] link \"Cart\"\n<<end ask panda win>>","epoch":1,"size":120}`)
	fmt.Println(contract.ForModel(contract.ToolCall{Name: contract.ToolSnapshot}, answer))
	// Output:
	// {"url":"https://shop.example/","title":"Shop","epoch":1}
	// <<page ask panda win>>
	// [1] link "Cart"
}
