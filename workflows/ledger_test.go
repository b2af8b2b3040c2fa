package workflows

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/contract"
)

func TestLedger(t *testing.T) {
	args := json.RawMessage(`{"actions":[{"op":"click","id":"3"}]}`)
	var l ledger
	l = l.add("u1", contract.ToolRun, args, json.RawMessage(`{"ok":true}`))
	l = l.add("u2", contract.ToolSnapshot, nil, json.RawMessage(`{"ok":true,"text":"..."}`))
	l = l.add("", contract.ToolRun, args, json.RawMessage(`{"ok":true}`))
	tests := []struct {
		name, id, tool string
		args           json.RawMessage
		found          bool
		want           string
	}{
		{"recorded effect call", "u1", contract.ToolRun, args, true, `{"ok":true}`},
		{"same call, arguments spelled differently", "u1", contract.ToolRun, json.RawMessage(`{ "actions": [ {"id":"3","op":"click"} ] }`), true, `{"ok":true}`},
		{"reads are not kept", "u2", contract.ToolSnapshot, nil, false, ""},
		{"unknown id", "u3", contract.ToolRun, args, false, ""},
		{"no id", "", contract.ToolRun, args, false, ""},
		{"other arguments", "u1", contract.ToolRun, json.RawMessage(`{"actions":[{"op":"click","id":"4"}]}`), true, `"code":"refused"`},
		{"other tool", "u1", contract.ToolUpload, args, true, `"code":"refused"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, ok := l.find(tt.id, tt.tool, tt.args)
			if ok != tt.found || !strings.Contains(string(out), tt.want) {
				t.Fatalf("find(%q) = %s, %v; want %v containing %s", tt.id, out, ok, tt.found, tt.want)
			}
		})
	}
}

func TestLedgerBounds(t *testing.T) {
	var l ledger
	for i := range contract.MaxAnswered + 10 {
		l = l.add(fmt.Sprintf("u%d", i), contract.ToolRun, nil, json.RawMessage(`{"ok":true}`))
	}
	if len(l) != contract.MaxAnswered {
		t.Fatalf("ledger holds %d entries, want %d", len(l), contract.MaxAnswered)
	}
	if _, ok := l.find("u0", contract.ToolRun, nil); ok {
		t.Fatal("the oldest entry should have been dropped")
	}
	if _, ok := l.find(fmt.Sprintf("u%d", contract.MaxAnswered+9), contract.ToolRun, nil); !ok {
		t.Fatal("the newest entry is missing")
	}
	big := json.RawMessage(`{"ok":true,"text":"` + strings.Repeat("x", contract.MaxAnsweredBytes) + `"}`)
	l = l.add("big", contract.ToolRun, nil, big)
	out, _ := l.find("big", contract.ToolRun, nil)
	var f contract.Failure
	if err := json.Unmarshal(out, &f); err != nil || f.Code != contract.CodeRefused || f.Effect != contract.EffectPossiblyEffected || len(out) > contract.MaxAnsweredBytes {
		t.Fatalf("an oversized answer is kept as %s", out)
	}
}
