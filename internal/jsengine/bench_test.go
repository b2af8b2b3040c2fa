//go:build unix

package jsengine

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// The cost of one small cell, start to answer. The cell runs in a process
// of its own, taken from the spares started ahead; as between a model's
// turns, each iteration starts once a spare is ready (that wait is not
// timed). child-cpu-ms/op is what the cell's processes cost the machine
// per cell, their start included. Rerun with
//
//	go test -run '^$' -bench BenchmarkCell -benchtime 50x ./internal/jsengine/
func BenchmarkCellSmall(b *testing.B) {
	for _, c := range []struct{ name, src string }{
		{"return", `return 1`},
		{"three page calls", `const u = await page.url(); const s = await page.snapshot(); return [u, s.text.length, await page.text("3")]`},
	} {
		b.Run(c.name, func(b *testing.B) {
			before := childCPU()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				waitSpare(b)
				b.StartTimer()
				if _, err := Run(context.Background(), Options{Source: c.src, Page: &fakePage{}}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			waitSpare(b)
			b.ReportMetric(float64(childCPU()-before)/float64(time.Millisecond)/float64(b.N), "child-cpu-ms/op")
		})
	}
}

// waitSpare waits until a spare process is ready (the first cell starts
// them).
func waitSpare(tb testing.TB) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		warm.mu.Lock()
		n, starting := len(warm.idle), warm.starting
		warm.mu.Unlock()
		if n > 0 || n+starting == 0 {
			return
		}
		time.Sleep(time.Millisecond)
	}
	tb.Fatal("no spare cell process within 30 s")
}

// childCPU is the CPU time of this process's reaped children.
func childCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
