package workflows

import (
	"encoding/json"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/durable-browser/durable-browser/contract"
)

func TestWithSize(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"ok":true}`, `{"ok":true,"size":{"chars":11,"tokens":3}}`},
		{`{}`, `{"size":{"chars":2,"tokens":1}}`},
		{`{"t":"é"}`, `{"t":"é","size":{"chars":9,"tokens":3}}`},
		{`[1]`, `[1]`},
	} {
		out, _ := withSize(json.RawMessage(tc.in))
		if string(out) != tc.want {
			t.Errorf("withSize(%s) = %s, want %s", tc.in, out, tc.want)
		}
	}
}

func TestEveryAnswerCarriesItsSizeAndStateSumsThem(t *testing.T) {
	h := newHarness(t)
	var st contract.SessionState
	h.call(time.Second, "s1", contract.ToolSnapshot, `{}`)
	h.call(2*time.Second, "s2", contract.ToolSnapshot, `{"mode":"interactive"}`)
	h.f.behave[contract.ActivityRead] = func(int, json.RawMessage) (any, error) { return nil, fail(contract.CodeNotContent) }
	h.call(3*time.Second, "bad", contract.ToolRead, `{}`) // a failure envelope has a size too
	h.query(4*time.Second, contract.QueryState, &st)
	h.run(SessionConfig{})
	var total contract.ToolUsage
	for _, id := range []string{"s1", "s2", "bad"} {
		m := h.results[id]
		size, ok := m["size"].(map[string]any)
		if !ok {
			t.Fatalf("%s carries no size: %v", id, m)
		}
		delete(m, "size")
		raw, _ := json.Marshal(m)
		chars, tokens := int(size["chars"].(float64)), int(size["tokens"].(float64))
		// Re-encoded field order differs, not the length.
		if chars != utf8.RuneCount(raw) || tokens != (chars+3)/4 {
			t.Errorf("%s: size %v for %d characters", id, size, utf8.RuneCount(raw))
		}
		total.Calls++
		total.Chars += chars
		total.Tokens += tokens
	}
	snap, read := st.Usage[contract.ToolSnapshot], st.Usage[contract.ToolRead]
	if h.code("bad") != string(contract.CodeNotContent) || snap.Calls != 2 || read.Calls != 1 || snap.Chars+read.Chars != total.Chars || st.Total != total {
		t.Fatalf("state usage %+v total %+v, want total %+v", st.Usage, st.Total, total)
	}
}
