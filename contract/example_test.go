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

// ExampleValidate holds a model's call to the schema it was shown: a bad
// call is a refused failure naming the field and the fix.
func ExampleValidate() {
	_, f := contract.Validate(contract.ToolScreenshot, json.RawMessage(`{"quality":"high"}`))
	fmt.Println(f.Code)
	args, _ := contract.Validate(contract.ToolSnapshot, json.RawMessage(`{"mode":"interactive"}`))
	fmt.Printf("%T %s\n", args, args.(contract.SnapshotArgs).Mode)
	// Output:
	// refused
	// contract.SnapshotArgs interactive
}
