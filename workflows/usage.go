package workflows

import (
	"encoding/json"

	"go.temporal.io/sdk/workflow"

	"github.com/durable-browser/durable-browser/contract"
)

// answer is a tool's answer: the result or failure envelope as JSON, its
// page text fenced, with its size added ("size": {"chars", "tokens"}), and
// counted in the session's usage under the tool's name. A model reads
// contract.ForModel of it, which is smaller.
func (b *Browser) answer(ctx workflow.Context, name string, v any) (json.RawMessage, error) {
	out, sz, err := contract.EncodeAnswer(fenced(b.fenceNonce(ctx), v))
	if err != nil {
		return nil, err
	}
	b.st.Usage = b.st.Usage.add(name, sz)
	return out, nil
}

// Usage sums a session's answers per tool, in the order tools were first
// used: a list, not a map, so workflow code never iterates a map.
type Usage []ToolUsage

// ToolUsage is one tool's line of Usage.
type ToolUsage struct {
	Tool string `json:"tool"`
	contract.ToolUsage
}

func (u Usage) add(name string, sz contract.Size) Usage {
	i := 0
	for i < len(u) && u[i].Tool != name {
		i++
	}
	if i == len(u) {
		u = append(u, ToolUsage{Tool: name})
	}
	u[i].Calls++
	u[i].Chars += sz.Chars
	u[i].Tokens += sz.Tokens
	return u
}
