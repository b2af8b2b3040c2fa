package demo

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/contract"
)

// An answer over the bound whose model form fits reaches the model whole;
// a larger one reaches it as its model form, cut.
func TestCutByWhatTheModelReads(t *testing.T) {
	call := Call{Name: contract.ToolRun, Args: json.RawMessage(`{"actions":[{"op":"click","id":"1"}],"observe":true}`)}
	answer := func(text string, sent int) json.RawMessage {
		r := contract.RunResult{OK: true, Page: contract.Page{URL: "http://shop.test/", Title: "Shop"}, Completed: 1, Total: 1,
			Observed: &contract.Observation{Text: text, Epoch: 2, Changes: &contract.Changes{Changed: 1}}}
		for i := 0; i < sent; i++ {
			r.Sent = append(r.Sent, contract.SentRequest{Method: "POST", Origin: "http://shop.test", Path: "/track"})
		}
		b, _ := json.Marshal(r)
		return b
	}
	// Sent requests to the page's own origin shrink in the model's form.
	fits := answer("~ [1] button", 300)
	if len(fits) <= keepBytes || len(contract.ForModel(contract.ToolCall{Name: call.Name, Args: call.Args}, fits)) > keepBytes {
		t.Fatalf("the case is wrong: %d bytes", len(fits))
	}
	if got := cut(call, fits); string(got) != string(fits) {
		t.Fatalf("an answer whose model form fits was cut: %.200s", got)
	}
	big := answer(strings.Repeat("~ [1] button\n", 2000), 0)
	var s string
	if err := json.Unmarshal(cut(call, big), &s); err != nil || !strings.HasPrefix(s, "(answer of ") ||
		strings.Contains(s, `"completed"`) || len(s) > keepBytes+100 {
		t.Fatalf("a big answer: %v %.200s", err, s)
	}
}
