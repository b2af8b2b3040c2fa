package contract

import (
	"encoding/json"
	"testing"
)

func TestWithSize(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"ok":true}`, `{"ok":true,"size":{"chars":11,"tokens":3}}`},
		{`{}`, `{"size":{"chars":2,"tokens":1}}`},
		{`{"t":"é"}`, `{"t":"é","size":{"chars":9,"tokens":3}}`},
		{`[1]`, `[1]`},
	} {
		out, _ := WithSize(json.RawMessage(tc.in))
		if string(out) != tc.want {
			t.Errorf("WithSize(%s) = %s, want %s", tc.in, out, tc.want)
		}
	}
}
