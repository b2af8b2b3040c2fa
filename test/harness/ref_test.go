package harness

import "testing"

func TestRef(t *testing.T) {
	snap := "[1] heading \"Sign in\"\n[3] textbox \"User\"\n[4] \"Password\"\n[5] \"API token\"\n[7] button \"Sign in\"\n[8] \"Cancel\""
	for _, c := range []struct{ want, id string }{
		{`textbox "User"`, "3"},
		{`textbox "Password"`, "4"},
		{`textbox "API token"`, "5"},
		{`"API token"`, "5"},
		{`button "Cancel"`, "8"},
		{`heading "Sign in"`, "1"},
		{`button "Sign in"`, "7"},
	} {
		if got, ok := Ref(snap, c.want); !ok || got != c.id {
			t.Errorf("Ref(%s) = %q %v, want %q", c.want, got, ok, c.id)
		}
	}
	if _, ok := Ref(snap, `button "Password"`); ok {
		t.Errorf("a textbox's name matched as a button's")
	}
}
