package validate_test

import (
	"encoding/json"
	"fmt"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/contract/validate"
)

// ExampleCall holds a model's call to the schema it was shown: a bad
// call is a refused failure naming the field and the fix.
func ExampleCall() {
	_, f := validate.Call(contract.ToolScreenshot, json.RawMessage(`{"quality":"high"}`))
	fmt.Println(f.Code)
	args, _ := validate.Call(contract.ToolSnapshot, json.RawMessage(`{"mode":"interactive"}`))
	fmt.Printf("%T %s\n", args, args.(contract.SnapshotArgs).Mode)
	// Output:
	// refused
	// contract.SnapshotArgs interactive
}
