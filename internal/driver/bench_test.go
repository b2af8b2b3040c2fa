package driver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/providers"
	"github.com/durable-browser/durable-browser/providers/local"
)

// BenchmarkSnapshotBig snapshots a demo page of well over 2,000 elements.
func BenchmarkSnapshotBig(b *testing.B) {
	br := attach(b, Options{})
	gotoPage(b, br, siteURL+"/big.html")
	s := snap(b, br, SnapshotOptions{})
	b.ReportMetric(float64(s.Elements), "elements")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := br.Snapshot(ctxT(b), SnapshotOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFillClick runs a fill then a click on a loopback page.
func BenchmarkFillClick(b *testing.B) {
	br := attach(b, Options{})
	gotoPage(b, br, siteURL+"/shadow.html")
	s := snap(b, br, SnapshotOptions{})
	field, btn := idOf(b, s.Text, `textbox "Shadow field"`), idOf(b, s.Text, `button "Shadow button"`)
	acts, err := ParseActions(json.RawMessage(fmt.Sprintf(`[{"op":"fill","id":"%s","value":"hello"},{"op":"click","id":"%s"}]`, field, btn)))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := br.Run(ctxT(b), acts, RunOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func localProvider(b *testing.B) *local.Provider {
	p, err := local.New(local.Options{ChromePath: chromePath(), ProfileRoot: b.TempDir(), BootID: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkColdStart measures a new local Chromium to the first snapshot of
// a loopback page: create, attach, goto, snapshot. Release is not timed.
func BenchmarkColdStart(b *testing.B) {
	p := localProvider(b)
	for i := 0; i < b.N; i++ {
		tag := fmt.Sprintf("cold-%d", i)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		sess, err := p.Create(ctx, providers.CreateOptions{Tag: tag})
		if err != nil {
			cancel()
			b.Fatal(err)
		}
		br, err := Attach(ctx, Options{CDPURL: sess.CDPURL})
		if err == nil {
			acts, _ := ParseActions(json.RawMessage(fmt.Sprintf(`[{"op":"goto","url":%q},{"op":"wait","load":true}]`, siteURL+"/form.html")))
			if _, err = br.Run(ctx, acts, RunOptions{}); err == nil {
				_, err = br.Snapshot(ctx, SnapshotOptions{})
			}
			_ = br.Close()
		}
		b.StopTimer()
		if rerr := p.Release(context.WithoutCancel(ctx), tag); rerr != nil {
			b.Error(rerr)
		}
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkIdleSessionMemory reports the resident memory of one idle
// session's whole Chrome process tree (its process group), on about:blank
// and on the demo sign-up page.
func BenchmarkIdleSessionMemory(b *testing.B) {
	for _, tc := range []struct{ name, path string }{{"blank", ""}, {"demo", "/index.html"}} {
		b.Run(tc.name, func(b *testing.B) {
			p := localProvider(b)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			sess, err := p.Create(ctx, providers.CreateOptions{Tag: "mem-" + tc.name})
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = p.Release(context.WithoutCancel(ctx), "mem-"+tc.name) }()
			br, err := Attach(ctx, Options{CDPURL: sess.CDPURL})
			if err != nil {
				b.Fatal(err)
			}
			defer br.Close()
			if tc.path != "" {
				gotoPage(b, br, siteURL+tc.path)
			}
			if _, err := br.Snapshot(ctx, SnapshotOptions{}); err != nil {
				b.Fatal(err)
			}
			if sess.PID == 0 {
				b.Skip("provider did not report a pid")
			}
			b.ResetTimer()
			var sum, pss float64
			for i := 0; i < b.N; i++ {
				kib, pkib, n := groupRSS(sess.PID)
				if n == 0 {
					b.Fatalf("no processes in group %d", sess.PID)
				}
				sum += float64(kib) / 1024
				pss += float64(pkib) / 1024
			}
			// VmRSS counts pages shared between Chrome's processes once per
			// process; PSS splits them, so it is the fairer per-session cost.
			b.ReportMetric(sum/float64(b.N), "MiB/session")
			b.ReportMetric(pss/float64(b.N), "MiB-PSS/session")
		})
	}
}

// groupRSS sums VmRSS and PSS (KiB) over the processes of process group pgid.
func groupRSS(pgid int) (kib, pss int64, procs int) {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		stat, err := os.ReadFile(filepath.Join(d, "stat"))
		if err != nil {
			continue
		}
		// Fields after the parenthesised command: state ppid pgrp ...
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 3 || f[2] != strconv.Itoa(pgid) {
			continue
		}
		fh, err := os.Open(filepath.Join(d, "status"))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
				if n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64); err == nil {
					kib += n
					procs++
				}
			}
		}
		fh.Close()
		if roll, err := os.ReadFile(filepath.Join(d, "smaps_rollup")); err == nil {
			for _, l := range strings.Split(string(roll), "\n") {
				if rest, ok := strings.CutPrefix(l, "Pss:"); ok {
					if n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64); err == nil {
						pss += n
					}
					break
				}
			}
		}
	}
	return kib, pss, procs
}

// BenchmarkClickNavigate clicks a link to another loopback page with
// observe (the answer shows the new page), as a model's "click and look"
// does: from the click's dispatch to the answer with the new page's
// listing. The page it leaves is loaded again between iterations, not timed.
func BenchmarkClickNavigate(b *testing.B) {
	br := attach(b, Options{})
	acts, err := ParseActions(json.RawMessage(`[{"op":"click","locator":{"role":"link","name":"About"}}]`))
	if err != nil {
		b.Fatal(err)
	}
	var times []time.Duration
	for b.Loop() {
		b.StopTimer()
		gotoPage(b, br, siteURL+"/index.html")
		b.StartTimer()
		t0 := time.Now()
		res, err := br.Run(ctxT(b), acts, RunOptions{Observe: "interactive"})
		if err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(t0))
		if !strings.HasSuffix(res.URL, "/about.html") || res.Observed == nil || !strings.Contains(res.Observed.Text, `link "Back home"`) {
			b.Fatalf("the answer does not show the new page: %s %+v", res.URL, res.Observed)
		}
	}
	reportPercentiles(b, times)
}

// reportPercentiles reports p50 and p95 of per-call times beside Go's mean.
func reportPercentiles(b *testing.B, times []time.Duration) {
	if len(times) == 0 {
		return
	}
	s := slices.Clone(times)
	slices.Sort(s)
	b.ReportMetric(float64(s[len(s)/2])/1e6, "p50-ms")
	b.ReportMetric(float64(s[len(s)*95/100])/1e6, "p95-ms")
}
