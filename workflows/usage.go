package workflows

import (
	"bytes"
	"encoding/json"
	"strconv"

	"go.temporal.io/sdk/workflow"

	"github.com/durable-browser/durable-browser/contract"
)

// answer is a tool's answer: the result or failure envelope as JSON, its
// page text fenced, with its size added ("size": {"chars", "tokens"}), and
// counted in the session's usage under the tool's name. A model reads
// contract.ForModel of it, which is smaller.
func (b *Browser) answer(ctx workflow.Context, name string, v any) (json.RawMessage, error) {
	// Without HTML escaping: "->" and fences would cost "\u003e" each.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(fenced(b.fenceNonce(ctx), v)); err != nil {
		return nil, err
	}
	raw := json.RawMessage(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	out, sz := withSize(raw)
	b.st.Usage = b.st.Usage.add(name, sz)
	return out, nil
}

// withSize adds the size of a JSON object to it, as its last field. The
// size counts the object as it was, without the field itself.
func withSize(raw json.RawMessage) (json.RawMessage, contract.Size) {
	sz := contract.SizeOf(raw)
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) < 2 || trimmed[0] != '{' || trimmed[len(trimmed)-1] != '}' {
		return raw, sz
	}
	field := `"size":{"chars":` + strconv.Itoa(sz.Chars) + `,"tokens":` + strconv.Itoa(sz.Tokens) + `}}`
	body := trimmed[:len(trimmed)-1]
	out := make([]byte, 0, len(trimmed)+len(field)+1)
	out = append(out, body...)
	if len(bytes.TrimSpace(body)) > 1 {
		out = append(out, ',')
	}
	return append(out, field...), sz
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
