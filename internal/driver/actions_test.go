package driver

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseActions(t *testing.T) {
	for _, tc := range []struct {
		in      string
		wantErr string // substring; "" means valid
	}{
		{`[{"op":"click","id":"[5]"}]`, ""},
		{`[{"op":"click","id":"5","button":"right","count":2}]`, ""},
		{`[{"op":"fill","id":"2","value":""}]`, ""},
		{`[{"op":"type","id":"2","text":"abc","delay_ms":20}]`, ""},
		{`[{"op":"press","key":"Control+A"},{"op":"press","key":"Enter"}]`, ""},
		{`[{"op":"select","id":"3","values":["Pro"]}]`, ""},
		{`[{"op":"scroll","dy":800},{"op":"scroll","id":"9"}]`, ""},
		{`[{"op":"goto","url":"https://example.com/x"},{"op":"back"},{"op":"forward"},{"op":"reload"}]`, ""},
		{`[{"op":"wait","text":"Saved"},{"op":"wait","ms":100},{"op":"wait","load":true},{"op":"wait","url":"*/done*"}]`, ""},
		{`{}`, "JSON array"},
		{`[]`, "empty batch"},
		{`[{"op":"smash","id":"1"}]`, "unknown op"},
		{`[{"op":"click"}]`, "needs \"id\""},
		{`[{"op":"click","id":"x"}]`, "not a snapshot id"},
		{`[{"op":"click","id":"1","value":"a"}]`, "does not take \"value\""},
		{`[{"op":"click","id":"1","bogus":1}]`, "unknown field"},
		{`[{"op":"back","id":"1"}]`, "takes no fields"},
		{`[{"op":"fill","id":"1"}]`, "needs \"value\""},
		{`[{"op":"press","key":"Hyper+A"}]`, "not a modifier"},
		{`[{"op":"press","key":"Launch"}]`, "unknown key"},
		{`[{"op":"goto","url":"file:///etc/passwd"}]`, "http(s)"},
		{`[{"op":"wait","ms":20000}]`, "1 to 10000"},
		{`[{"op":"wait","text":"a","ms":5}]`, "exactly one"},
		{`[{"op":"scroll","id":"1","dy":5}]`, "not both"},
		{`[{"op":"click","id":"1","count":9}]`, "count"},
	} {
		acts, err := ParseActions(json.RawMessage(tc.in))
		if tc.wantErr == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.in, err)
			}
			continue
		}
		var pe *ParseError
		if err == nil || !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: got %v (%v), want error containing %q", tc.in, err, acts, tc.wantErr)
		}
	}
	acts, _ := ParseActions(json.RawMessage(`[{"op":"click","id":" [07] "}]`))
	if acts[0].ID != "7" {
		t.Errorf("id normalised to %q", acts[0].ID)
	}
}

func FuzzParseActions(f *testing.F) {
	for _, s := range []string{
		`[{"op":"click","id":"5"}]`, `[{"op":"press","key":"Control+Shift+Tab"}]`, `[{"op":"wait","url":"*x*"}]`,
		`[{"op":"select","id":"[3]","values":["a","b"]}]`, `[{"op":"press","key":"+"}]`, `[null]`, `[1,2]`, `"x"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		acts, err := ParseActions(json.RawMessage(data))
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error not a *ParseError: %v", err)
			}
			return
		}
		for _, a := range acts {
			if _, ok := opFields[a.Op]; !ok {
				t.Fatalf("accepted op %q", a.Op)
			}
			if a.ID != "" {
				if _, err := NormalizeID(a.ID); err != nil {
					t.Fatalf("accepted id %q", a.ID)
				}
			}
		}
	})
}

func TestURLMatches(t *testing.T) {
	for _, tc := range []struct {
		p, u string
		want bool
	}{
		{"/done", "http://a/done?x", true},
		{"*/done", "http://a/done", true},
		{"*/done", "http://a/done/x", false},
		{"http://a/*", "http://a/b/c", true}, // * crosses slashes
		{"http://a/*/c", "http://a/b/c", true},
	} {
		if got := urlMatches(tc.p, tc.u); got != tc.want {
			t.Errorf("urlMatches(%q, %q) = %v", tc.p, tc.u, got)
		}
	}
}
