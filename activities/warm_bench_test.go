//go:build unix

package activities

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/netguard"
	"github.com/durable-browser/durable-browser/internal/proccpu"
	"github.com/durable-browser/durable-browser/providers"
	"github.com/durable-browser/durable-browser/providers/local"
)

// BenchmarkCreate measures browser.create of a plain session on a real
// local Chrome, driven and behind its egress proxy, as a worker runs it,
// under each isolation: process/cold (the browser starts for the create),
// process/warm (--warm-browsers 1: the create takes a browser started
// before), context/cold (no other session: the shared browser starts for
// the create, and ends at its release), context/running (another session
// keeps the shared browser running: the create opens a context in it) and
// context/warm (a context opened ahead). Each create is timed alone (the
// release after it, and the pool's refill, are outside the timer); p50-ms
// is the median.
func BenchmarkCreate(b *testing.B) {
	for _, c := range []struct {
		iso         local.Isolation
		name        string
		warm        int
		keepAnother bool
	}{
		{local.IsolationProcess, "cold", 0, false},
		{local.IsolationProcess, "warm", 1, false},
		{local.IsolationContext, "cold", 0, false},
		{local.IsolationContext, "running", 0, true},
		{local.IsolationContext, "warm", 1, false},
	} {
		b.Run(string(c.iso)+"/"+c.name, func(b *testing.B) {
			a := benchActivities(b, c.iso, c.warm)
			ctx := context.Background()
			if c.keepAnother {
				if _, err := a.Create(ctx, contract.CreateRequest{Tag: "bench-keep"}); err != nil {
					b.Fatal(err)
				}
			}
			ready := func() {
				for c.warm > 0 && a.Stats().Warm < c.warm {
					time.Sleep(10 * time.Millisecond)
				}
			}
			var took []time.Duration
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				ready()
				tag := fmt.Sprintf("bench-%d", i)
				b.StartTimer()
				began := time.Now()
				if _, err := a.Create(ctx, contract.CreateRequest{Tag: tag}); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(began))
				b.StopTimer()
				if _, err := a.Release(ctx, contract.ReleaseRequest{Session: contract.SessionRef{Tag: tag, Provider: local.Name}}); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
		})
	}
}

func benchActivities(b *testing.B, iso local.Isolation, warm int) *Activities {
	lp, err := local.New(local.Options{ProfileRoot: b.TempDir(), BootID: "bench", Isolation: iso, HeadlessShell: os.Getenv("DURABLE_BROWSER_HEADLESS_SHELL"), ExtraFlags: strings.Fields(os.Getenv("DURABLE_BROWSER_BENCH_FLAGS")), Logger: zerolog.Nop()})
	if err != nil {
		b.Fatal(err)
	}
	a := New(Options{
		HostQueue:    "bench",
		Providers:    map[string]providers.Provider{local.Name: lp},
		Reach:        &netguard.Policy{AllowPrivate: true, Listeners: &netguard.Listeners{}},
		WarmBrowsers: warm,
		Logger:       zerolog.Nop(),
	})
	a.StartWarm()
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		a.Close(ctx)
		lp.Close(ctx)
	})
	return a
}

// BenchmarkIdleSessionPss opens 8, then 16 plain sessions (each on a
// small page, then idle) under each isolation and reports the proportional
// set size (Pss, /proc/<pid>/smaps_rollup) of every process of their
// browsers (each browser's process group), divided per session. -v logs
// the sum by process type (utility processes by service), each split into
// anonymous, file-backed and shared memory. DURABLE_BROWSER_BENCH_FLAGS
// (space-separated) are added to every browser's flags
// (local.Options.ExtraFlags), to measure a flag before it is taken;
// DURABLE_BROWSER_HEADLESS_SHELL=off measures the full browser instead of
// the headless shell (local.Options.HeadlessShell).
func BenchmarkIdleSessionPss(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!doctype html><title>idle</title><h1>idle</h1><p>"+strings.Repeat("text ", 200))
	}))
	b.Cleanup(srv.Close)
	page := srv.URL + "/"
	for _, c := range []struct {
		iso local.Isolation
		n   int
	}{{local.IsolationProcess, 8}, {local.IsolationContext, 8}, {local.IsolationProcess, 16}, {local.IsolationContext, 16}} {
		iso, n := c.iso, c.n
		b.Run(fmt.Sprintf("%s/%d", iso, n), func(b *testing.B) {
			var perSession float64
			for i := 0; b.Loop(); i++ {
				a := benchActivities(b, iso, 0)
				ctx := context.Background()
				for j := 0; j < n; j++ {
					tag := fmt.Sprintf("idle-%d-%d", i, j)
					if _, err := a.Create(ctx, contract.CreateRequest{Tag: tag, Options: contract.SessionOptions{StartURL: page}}); err != nil {
						b.Fatal(err)
					}
				}
				time.Sleep(2 * time.Second) // idle: let the pages settle
				groups := map[int]bool{}
				for _, pid := range a.Stats().ChromePIDs {
					groups[pid] = true
				}
				total, byType := groupsPss(b, groups)
				perSession = float64(total) / 1024 / float64(n)
				for typ, kb := range byType {
					if n, ok := byType[typ+" count"]; ok {
						mib := func(k string) float64 { return float64(byType[typ+" "+k]) / 1024 }
						b.Logf("%s: %d %s processes: %.1f MiB in all (anonymous %.1f, file %.1f, shared memory %.1f)",
							iso, n, typ, float64(kb)/1024, mib("anon"), mib("file"), mib("shmem"))
					}
				}
				a.Close(ctx)
			}
			b.ReportMetric(perSession, "pss-MiB/session")
		})
	}
}

// groupsPss sums the Pss (KiB) of every process in the process groups,
// in all and by Chrome process type (--type=renderer, ...; browser for
// the main one).
func groupsPss(b *testing.B, groups map[int]bool) (int, map[string]int) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		b.Skip("no /proc: Pss is measured on Linux")
	}
	total, byType := 0, map[string]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if !groups[proccpu.Group(pid)] {
			continue
		}
		roll, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
		if err != nil {
			continue
		}
		typ := "browser"
		if cl, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); err == nil {
			// Chrome rewrites its command line into one space-separated string.
			for _, a := range strings.Fields(strings.ReplaceAll(string(cl), "\x00", " ")) {
				if t, ok := strings.CutPrefix(a, "--type="); ok && typ == "browser" {
					typ = t
				}
				if t, ok := strings.CutPrefix(a, "--utility-sub-type="); ok {
					typ = "utility " + t
				}
			}
		}
		for _, l := range strings.Split(string(roll), "\n") {
			name, v, ok := strings.Cut(l, ":")
			if !ok || !strings.HasPrefix(name, "Pss") {
				continue
			}
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			switch name {
			case "Pss":
				total += kb
				byType[typ] += kb
				byType[typ+" count"]++
			case "Pss_Anon", "Pss_File", "Pss_Shmem":
				byType[typ+" "+strings.ToLower(strings.TrimPrefix(name, "Pss_"))] += kb
			}
		}
	}
	return total, byType
}
