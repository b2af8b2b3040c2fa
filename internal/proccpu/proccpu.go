// Package proccpu reads processes' CPU time and process groups from /proc,
// for the benchmarks that split a call's cost between the processes that
// serve it (docs/benchmarks.md, "A call's cost by process"). On a system
// without /proc every reading is empty.
package proccpu

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Tick is the kernel's USER_HZ, the unit of /proc/<pid>/stat's times: no
// reading is finer than it.
const Tick = 10 * time.Millisecond

// stat is /proc/<pid>/stat's fields after the command name: f[0] is field 3
// (state).
func stat(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}

// Of is a process's own CPU time (user + system) and that of its children
// it has waited for.
func Of(pid int) (own, reaped time.Duration, ok bool) {
	f := stat(pid) // utime is field 14
	if len(f) < 15 {
		return 0, 0, false
	}
	n := func(k int) time.Duration { v, _ := strconv.ParseInt(f[k], 10, 64); return time.Duration(v) * Tick }
	return n(11) + n(12), n(13) + n(14), true
}

// Group is pid's process group, -1 when it cannot be read or pid is a
// zombie.
func Group(pid int) int {
	f := stat(pid) // state ppid pgrp ...
	if len(f) < 3 || f[0] == "Z" {
		return -1
	}
	n, err := strconv.Atoi(f[2])
	if err != nil {
		return -1
	}
	return n
}

// Parent is pid's parent process, -1 when it cannot be read.
func Parent(pid int) int {
	f := stat(pid) // state ppid ...
	if len(f) < 2 {
		return -1
	}
	n, err := strconv.Atoi(f[1])
	if err != nil {
		return -1
	}
	return n
}

// Groups sums the CPU of the process groups led by leaders (a browser
// started in a group of its own): each live member's own time and that of
// the children it has reaped (a browser's renderers are the zygote's
// children, and a renderer that exited counts only there).
func Groups(leaders map[int]bool) time.Duration {
	var sum time.Duration
	for _, d := range GroupsBy(leaders, func(int) string { return "" }) {
		sum += d
	}
	return sum
}

// GroupsBy is Groups split by key(pid) of each member, such as its
// Chrome process type (Type).
func GroupsBy(leaders map[int]bool, key func(pid int) string) map[string]time.Duration {
	out := map[string]time.Duration{}
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range procs {
		pid, _ := strconv.Atoi(filepath.Base(d))
		if !leaders[Group(pid)] {
			continue
		}
		own, reaped, ok := Of(pid)
		if !ok {
			continue
		}
		out[key(pid)] += own + reaped
	}
	return out
}

// Type is a Chrome process's --type= (renderer, gpu-process, utility,
// zygote), "browser" for the one without, "" if its command line cannot
// be read.
func Type(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return ""
	}
	// Chrome sets its processes' titles: the arguments may come joined by
	// spaces rather than NULs.
	for _, a := range strings.FieldsFunc(string(b), func(r rune) bool { return r == 0 || r == ' ' }) {
		if t, ok := strings.CutPrefix(a, "--type="); ok {
			return t
		}
	}
	return "browser"
}
