//go:build unix

package activities

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/netguard"
	"github.com/durable-browser/durable-browser/providers"
	"github.com/durable-browser/durable-browser/providers/local"
)

// BenchmarkCreate measures browser.create of a plain session on a real
// local Chrome, driven and behind its egress proxy, as a worker runs it:
// cold (the browser starts for the create) and warm (--warm-browsers 1:
// the create takes a browser started before). Each create is timed alone
// (the release after it, and the pool's refill, are outside the timer);
// p50-ms is the median.
func BenchmarkCreate(b *testing.B) {
	for _, warm := range []int{0, 1} {
		b.Run(map[int]string{0: "cold", 1: "warm"}[warm], func(b *testing.B) {
			lp, err := local.New(local.Options{ProfileRoot: b.TempDir(), BootID: "bench", Logger: zerolog.Nop()})
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
			b.Cleanup(func() { a.Close(context.Background()) })
			ctx := context.Background()
			ready := func() {
				for warm > 0 && a.Stats().Warm < warm {
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
