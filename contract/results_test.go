package contract

import (
	"encoding/json"
	"strings"
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

// A fetch that filed nothing (a PDF read as markdown, an empty page) has no
// evidence in its answer, rather than an empty claim check.
func TestWebFetchResultEvidenceOnlyWhenFiled(t *testing.T) {
	none, _ := json.Marshal(WebFetchResult{OK: true, IsPDF: true})
	filed, _ := json.Marshal(WebFetchResult{OK: true, Evidence: ClaimCheck{Key: "wf/t/1-web_fetch-0123.md"}})
	if strings.Contains(string(none), `"evidence"`) || !strings.Contains(string(filed), `"evidence":{"key":"wf/t/1-web_fetch-0123.md"`) {
		t.Fatalf("nothing filed: %s\nfiled: %s", none, filed)
	}
}
