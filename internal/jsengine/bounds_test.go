//go:build linux

package jsengine

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/internal/proccpu"
)

// A cell looping or allocating inside a builtin, where the engine's
// interrupt does not reach, still stops at its deadline: within 1 s of it
// the worker (this process, and every process it started) is idle, and
// neither the worker's memory nor the cell's passes the bound.
func TestCellBuiltinBounded(t *testing.T) {
	const deadline = time.Second
	cases := []struct {
		name, src string
		kinds     []Kind
	}{
		{"indexOf over a huge sparse length", `const a = []; a.length = 4294967295; return a.indexOf(1)`, []Kind{KindTimeout}},
		{"lastIndexOf", `const a = []; a.length = 4294967295; return a.lastIndexOf(1)`, []Kind{KindTimeout}},
		{"includes", `const a = []; a.length = 4294967295; return a.includes(1)`, []Kind{KindTimeout}},
		{"JSON.stringify of a huge array", `const a = []; a.length = 3e8; return JSON.stringify(a).length`, []Kind{KindTimeout, KindLimit}},
		{"toLocaleString", `const a = []; a.length = 3e8; return a.toLocaleString().length`, []Kind{KindTimeout, KindLimit}},
		{"regex backtracking", `return /^(a+)+(?!x)$/.test("a".repeat(40) + "b")`, []Kind{KindTimeout}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rssBefore := selfRSS(t)
			start := time.Now()
			res, err := Run(context.Background(), Options{Source: c.src, Page: &fakePage{}, Deadline: deadline})
			returned := time.Since(start)
			t.Logf("answered after %s: %v", returned.Round(time.Millisecond), err)
			ce, _ := err.(*Error)
			if res == nil || ce == nil || !hasKind(c.kinds, ce.Kind) {
				t.Fatalf("got %v, want one of %v", err, c.kinds)
			}
			if returned > deadline+time.Second {
				t.Errorf("answered %s after the start, over 1 s past the %s deadline", returned.Round(time.Millisecond), deadline)
			}
			// Idle within 1 s of the deadline: from then, half a second of
			// wall time costs this process and its children next to no CPU.
			time.Sleep(time.Until(start.Add(deadline + time.Second)))
			cpu0 := treeCPU(t)
			time.Sleep(500 * time.Millisecond)
			if used := treeCPU(t) - cpu0; used > 50*time.Millisecond {
				t.Errorf("the worker used %s of CPU in the half second from 1 s after the deadline; want it idle", used)
			}
			checkMemory(t, rssBefore)
		})
	}
}

// A cell that builds a huge value inside one builtin, given time, grows
// only its own process, and that no further than the bound: the worker's
// memory does not grow. It answers the memory limit, or the deadline when
// the machine is too slow to reach the bound by then.
func TestCellMemoryBounded(t *testing.T) {
	rssBefore := selfRSS(t)
	res, err := Run(context.Background(), Options{Source: `const a = []; a.length = 3e8; return JSON.stringify(a).length`, Page: &fakePage{}, Deadline: 10 * time.Second})
	t.Logf("answered: %v", err)
	ce, _ := err.(*Error)
	if res == nil || ce == nil || !(ce.Kind == KindLimit && strings.Contains(ce.Message, "memory") || ce.Kind == KindTimeout) {
		t.Fatalf("got %v, want the memory limit or the deadline", err)
	}
	checkMemory(t, rssBefore)
}

// checkMemory: the worker's RSS grew at most 64 MiB since before, and no
// cell process passed the bound.
func checkMemory(t *testing.T, before int64) {
	t.Helper()
	if grown := selfRSS(t) - before; grown > 64<<20 {
		t.Errorf("the worker's RSS grew %d MiB", grown>>20)
	}
	if peak := childrenPeakRSS(); peak > MaxMemory+64<<20 {
		t.Errorf("a cell's process peaked at %d MiB, over the %d MiB bound", peak>>20, MaxMemory>>20)
	}
}

func hasKind(list []Kind, k Kind) bool {
	for _, l := range list {
		if l == k {
			return true
		}
	}
	return false
}

// treeCPU is the CPU time of this process, its reaped children and its
// live children.
func treeCPU(t *testing.T) time.Duration {
	t.Helper()
	var self, kids syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	total := time.Duration(self.Utime.Nano() + self.Stime.Nano() + kids.Utime.Nano() + kids.Stime.Nano())
	for _, pid := range liveChildren(t) {
		if own, _, ok := proccpu.Of(pid); ok {
			total += own
		}
	}
	return total
}

// liveChildren are the processes whose parent is this one.
func liveChildren(t *testing.T) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	me := os.Getpid()
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if proccpu.Parent(pid) == me {
			out = append(out, pid)
		}
	}
	return out
}

func selfRSS(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b))
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

func childrenPeakRSS() uint64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru)
	return uint64(ru.Maxrss) << 10
}
