package driver

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// ParseActions checks only what the run schema cannot say; the schema's own
// checks are tested in package contract.
func TestParseActions(t *testing.T) {
	for _, tc := range []struct {
		in      string
		wantErr string // substring; "" means valid
	}{
		{`[{"op":"click","id":"[5]"}]`, ""},
		{`[{"op":"click","id":"5","button":"right","count":2}]`, ""},
		{`[{"op":"fill","id":"2","value":""}]`, ""},
		{`[{"op":"type","id":"2","text":"abc","delay_ms":20}]`, ""},
		{`[{"op":"press","key":"Control+A"},{"op":"press","key":"Enter","id":"[3]"}]`, ""},
		{`[{"op":"select","id":"3","values":["Pro"]}]`, ""},
		{`[{"op":"scroll","dy":800},{"op":"scroll","id":"9"}]`, ""},
		{`[{"op":"goto","url":"https://example.com/x"},{"op":"back"},{"op":"forward"},{"op":"reload"}]`, ""},
		{`[{"op":"wait","text":"Saved"},{"op":"wait","ms":100},{"op":"wait","load":true},{"op":"wait","url":"*/done*"}]`, ""},
		{`[{"op":"switch_tab","tab":"t2"}]`, ""},
		{`{}`, "JSON array"},
		{`[{"op":"click","id":"x"}]`, "not a snapshot id"},
		{`[{"op":"press","key":"Enter","id":"x"}]`, "not a snapshot id"},
		{`[{"op":"click","id":"1","bogus":1}]`, "unknown field"},
		{`[{"op":"click","id":"1","count":"2"}]`, "check field names and types"},
		{`[{"op":"press","key":"Hyper+A"}]`, "not a modifier"},
		{`[{"op":"press","key":"Launch"}]`, "unknown key"},
		{`[{"op":"goto","url":"file:///etc/passwd"}]`, "http(s)"},
		{`[{"op":"goto","url":"https://"}]`, "with a host"},
		{`[{"op":"scroll","id":"1","dy":5}]`, "not both"},
		{`[{"op":"scroll","dy":0}]`, "non-zero"},
		{`[{"op":"close_tab"},{"op":"back"}]`, "last action"},
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
		for i, a := range acts {
			if a.ID != "" {
				if id, err := NormalizeID(a.ID); err != nil || id != a.ID {
					t.Fatalf("accepted id %q", a.ID)
				}
			}
			if (a.Op == "switch_tab" || a.Op == "close_tab") && i != len(acts)-1 {
				t.Fatalf("%s accepted before the end of the batch", a.Op)
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
