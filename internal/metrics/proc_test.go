package metrics

import (
	"testing"
)

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		pgrp       int
		rss        int64
		ok         bool
	}{
		{"chrome", "4242 (chrome) S 1 4242 4242 0 -1 4194560 1 0 0 0 3 1 0 0 20 0 12 0 100 400000000 2560 18446744073709551615", 4242, 2560, true},
		{"name with spaces and parens", "77 (Web Content (x)) S 4242 4242 4242 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 1000 33 0", 4242, 33, true},
		{"short", "1 (init) S 0 1", 0, 0, false},
		{"no name", "garbage", 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, r, ok := parseStat([]byte(tc.line))
			if g != tc.pgrp || r != tc.rss || ok != tc.ok {
				t.Fatalf("parseStat = %d %d %v, want %d %d %v", g, r, ok, tc.pgrp, tc.rss, tc.ok)
			}
		})
	}
}
