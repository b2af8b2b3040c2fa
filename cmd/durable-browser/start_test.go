package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkStart runs the built binary's client verbs that need no server
// (version, tools) as a person would, and reports what a start costs: wall
// time per run (ns/op and p50-ms) and the process's peak resident memory
// (max-MiB). The target is under 10 ms and 20 MiB.
//
// The peak memory is read through /usr/bin/time (GNU time, %M), not from this
// process's wait: os/exec starts children with vfork, and Linux then counts
// the parent's (this test binary's) resident memory in the child's peak.
//
// It measures $DURABLE_BROWSER_BIN when set (make bench-cli sets it to
// bin/durable-browser), else a binary it builds as make build does.
func BenchmarkStart(b *testing.B) {
	bin := os.Getenv("DURABLE_BROWSER_BIN")
	if bin == "" {
		bin = filepath.Join(b.TempDir(), "durable-browser")
		build := exec.Command("go", "build", "-o", bin, ".")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			b.Fatalf("go build: %v\n%s", err, out)
		}
	}
	for _, args := range [][]string{{"version"}, {"tools"}} {
		b.Run(args[0], func(b *testing.B) {
			times := make([]time.Duration, 0, b.N)
			for b.Loop() {
				start := time.Now()
				if err := exec.Command(bin, args...).Run(); err != nil {
					b.Fatalf("%s %v: %v", bin, args, err)
				}
				times = append(times, time.Since(start))
			}
			b.ReportMetric(float64(median(times))/1e6, "p50-ms")
			b.StopTimer()
			if kib, err := peakKiB(bin, args); err == nil {
				b.ReportMetric(float64(kib)/1024, "max-MiB")
			} else {
				b.Logf("peak memory not measured: %v", err)
			}
		})
	}
}

// peakKiB is the largest peak resident set of five runs, through GNU time.
func peakKiB(bin string, args []string) (int, error) {
	peak := 0
	for range 5 {
		var stderr bytes.Buffer
		cmd := exec.Command("/usr/bin/time", append([]string{"-f", "%M", bin}, args...)...)
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return 0, fmt.Errorf("/usr/bin/time: %v %s", err, stderr.Bytes())
		}
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		kib, err := strconv.Atoi(lines[len(lines)-1])
		if err != nil {
			return 0, fmt.Errorf("reading /usr/bin/time's %%M: %v", err)
		}
		peak = max(peak, kib)
	}
	return peak, nil
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
