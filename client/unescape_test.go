package client

import (
	"encoding/json"
	"testing"
)

func TestUnescapeHTML(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a":"x"}`, `{"a":"x"}`},
		{`{"t":"\u003c\u003cpage n\u003e\u003e\nlink -\u003e /a?b=1\u0026c=2"}`, `{"t":"<<page n>>\nlink -> /a?b=1&c=2"}`},
		{`{"t":"a\\u003cb"}`, `{"t":"a\\u003cb"}`},                 // an escaped backslash, then text
		{`{"t":"a\\\u003cb"}`, `{"t":"a\\<b"}`},                    // an escaped backslash, then <
		{`{"t":"\u00e9\u2028\"q\""}`, `{"t":"\u00e9\u2028\"q\""}`}, // other escapes kept
		{`{"t":"end\u003`, `{"t":"end\u003`},                       // cut short: kept
	} {
		if got := string(unescapeHTML([]byte(tc.in))); got != tc.want {
			t.Errorf("unescapeHTML(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
	// Round trip: what encoding/json escaped decodes the same after.
	for _, s := range []string{"<<page 1>>", `a\u003cb`, `\<`, "x&y", "\u2028"} {
		raw, _ := json.Marshal(s)
		var back string
		if err := json.Unmarshal(unescapeHTML(raw), &back); err != nil || back != s {
			t.Errorf("%q: got %q, %v", s, back, err)
		}
	}
}
