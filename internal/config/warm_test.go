package config

import "testing"

// --warm-browsers -1 sizes the pool by the isolation: a context per
// --max-browsers under context isolation, within an eighth of memory;
// none under process. A number given is kept in either mode.
func TestWarmBySize(t *testing.T) {
	const gib = int64(1) << 30
	for _, c := range []struct {
		name   string
		w      Worker
		shares bool
		mem    int64
		want   int
	}{
		{"process, default", Worker{WarmBrowsers: WarmAuto, MaxBrowsers: 16}, false, 24 * gib, 0},
		{"context, default", Worker{WarmBrowsers: WarmAuto, MaxBrowsers: 16}, true, 24 * gib, 16},
		{"context, memory caps it", Worker{WarmBrowsers: WarmAuto, MaxBrowsers: 64}, true, 1 * gib, 5},
		{"context, memory unknown", Worker{WarmBrowsers: WarmAuto, MaxBrowsers: 16}, true, 0, 16},
		{"context, no bound", Worker{WarmBrowsers: WarmAuto}, true, 24 * gib, DefaultMaxBrowsers()},
		{"context, set to 0", Worker{WarmBrowsers: 0, MaxBrowsers: 16}, true, 24 * gib, 0},
		{"process, set", Worker{WarmBrowsers: 2, MaxBrowsers: 16}, false, 24 * gib, 2},
	} {
		if got := c.w.Warm(c.shares, c.mem); got != c.want {
			t.Errorf("%s: Warm = %d, want %d", c.name, got, c.want)
		}
	}
}
