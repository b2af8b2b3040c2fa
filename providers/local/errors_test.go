package local

import (
	"errors"
	"testing"
)

func TestHasDisplay(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cases := []struct {
		goos string
		env  map[string]string
		want bool
	}{
		{"linux", nil, false},
		{"linux", map[string]string{"DISPLAY": ":99"}, true},
		{"linux", map[string]string{"WAYLAND_DISPLAY": "wayland-0"}, true},
		{"darwin", nil, true},
		{"windows", nil, true},
	}
	for _, c := range cases {
		if got := hasDisplay(c.goos, env(c.env)); got != c.want {
			t.Errorf("hasDisplay(%s, %v) = %v, want %v", c.goos, c.env, got, c.want)
		}
	}
	var err error = &NoDisplayError{}
	if !errors.Is(err, ErrNoDisplay) {
		t.Fatal("NoDisplayError does not match ErrNoDisplay")
	}
}
