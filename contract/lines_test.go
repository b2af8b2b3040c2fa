package contract

import (
	"slices"
	"testing"
)

func TestLineIDs(t *testing.T) {
	text := "- heading \"Shop\"\n[e4] textbox \"Email\"\n[e7] link \"Order #1\"\n  [e9] link \"Order #2\"\nlink \"Order #3\" (no id)"
	cases := []struct {
		needle string
		want   []string
	}{
		{`textbox "Email"`, []string{"e4"}},
		{`link "Order #`, []string{"e7", "e9"}},
		{`button "Pay"`, nil},
		{`heading "Shop"`, nil},
	}
	for _, c := range cases {
		if got := LineIDs(text, c.needle); !slices.Equal(got, c.want) {
			t.Errorf("LineIDs(%q) = %q, want %q", c.needle, got, c.want)
		}
	}
}
