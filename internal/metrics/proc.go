package metrics

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

// groupsRSS sums the resident memory of every process in the process groups
// led by pids (a local browser leads its own group: its renderers, GPU and
// utility processes are in it), from /proc. Where there is no /proc it
// reports nothing.
func groupsRSS(pids []int) (bytes int64, procs int) {
	if len(pids) == 0 {
		return 0, 0
	}
	groups := make(map[int]bool, len(pids))
	for _, p := range pids {
		if p > 0 {
			groups[p] = true
		}
	}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	page := int64(os.Getpagesize())
	for _, f := range stats {
		pgrp, rss, ok := readStat(f)
		if ok && groups[pgrp] {
			bytes += rss * page
			procs++
		}
	}
	return bytes, procs
}

// readStat reads a /proc/<pid>/stat line's process group and resident set
// size (pages). The command name may hold spaces and parentheses, so fields
// are counted from its closing parenthesis.
func readStat(path string) (pgrp int, rssPages int64, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, false
	}
	return parseStat(b)
}

func parseStat(b []byte) (pgrp int, rssPages int64, ok bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state): pgrp is field 5, rss field 24.
	if len(f) < 22 {
		return 0, 0, false
	}
	g, err1 := strconv.Atoi(string(f[2]))
	r, err2 := strconv.ParseInt(string(f[21]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return g, r, true
}
