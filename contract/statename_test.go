package contract

import (
	"strings"
	"testing"
)

// A state name is refused with the rule it broke: "a..b" has only allowed
// characters, so the message must name the ".." rule.
func TestValidStateNameSaysTheRule(t *testing.T) {
	for _, ok := range []string{"shop-alice", "a.b", "0x_1"} {
		if err := ValidStateName(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, tc := range []struct{ name, want string }{
		{"a..b", `it holds ".."`},
		{"..", `no ".."`},
		{"-a", "starting with a letter or digit"},
		{"", "1-64 letters"},
	} {
		err := ValidStateName(tc.name)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `no ".."`) {
			t.Errorf("%q: %v, want it to say %q and the no \"..\" rule", tc.name, err, tc.want)
		}
	}
}
