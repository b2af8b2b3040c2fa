//go:build linux

package metrics

import "testing"

// This test process leads no group of its own, but its group's leader runs:
// the group's memory is at least this process's.
func TestGroupsRSS(t *testing.T) {
	g, _, ok := readStat("/proc/self/stat")
	if !ok {
		t.Fatal("cannot read /proc/self/stat")
	}
	bytes, procs := groupsRSS([]int{g})
	if bytes <= 0 || procs < 1 {
		t.Fatalf("group %d: %d bytes in %d processes", g, bytes, procs)
	}
	if b, n := groupsRSS(nil); b != 0 || n != 0 {
		t.Fatalf("no groups: %d bytes in %d processes", b, n)
	}
}
