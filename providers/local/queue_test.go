//go:build unix

package local

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/durable-browser/durable-browser/providers"
)

// fakeChrome is a browser stand-in that opens a fake DevTools port: its
// /json/version answers like Chrome's, and the script writes the port
// file Chrome writes. A tag starting "hang-" never opens it; "slow-"
// opens it after the given delay; any other at once.
func fakeChrome(t *testing.T, slow time.Duration) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"webSocketDebuggerUrl":"ws://%s/devtools/browser/fake"}`, srv.Listener.Addr())
	})
	srv.Start()
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	script := filepath.Join(t.TempDir(), "fake-chrome")
	body := `#!/bin/sh
for a in "$@"; do case "$a" in --user-data-dir=*) dir="${a#--user-data-dir=}";; esac; done
case "$dir" in
*/hang-*) sleep 600;;
*/slow-*) sleep ` + strconv.FormatFloat(slow.Seconds(), 'f', 3, 64) + `;;
esac
printf '` + port + `\n/devtools/browser/fake\n' > "$dir/DevToolsActivePort"
sleep 600
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}

func queuedProvider(t *testing.T, chromePath string, launches int, startTO time.Duration) *Provider {
	t.Helper()
	p, err := New(Options{ChromePath: chromePath, ProfileRoot: t.TempDir(), BootID: "q", MaxLaunches: launches,
		StartTimeout: startTO, KillGrace: 100 * time.Millisecond, Logger: zerolog.New(zerolog.NewTestWriter(t))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		recs, _ := p.Records()
		for _, r := range recs {
			_ = p.Release(context.Background(), r.Tag)
		}
	})
	return p
}

// until polls cond (every 5 ms, for at most 20 s).
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !waitUntil(context.Background(), 20*time.Second, cond) {
		t.Fatalf("timed out waiting until %s", what)
	}
}

type created struct {
	sess *providers.Session
	err  error
	took time.Duration
}

func createAsync(ctx context.Context, p *Provider, tag string) <-chan created {
	ch := make(chan created, 1)
	go func() {
		began := time.Now()
		s, err := p.Create(ctx, providers.CreateOptions{Tag: tag})
		ch <- created{s, err, time.Since(began)}
	}()
	return ch
}

// A launch beyond MaxLaunches waits for a slot, and takes the first one
// given back.
func TestLaunchBeyondMaxWaits(t *testing.T) {
	p := queuedProvider(t, fakeChrome(t, 0), 2, time.Minute)
	ctxA, cancelA := context.WithCancel(context.Background())
	defer cancelA()
	ctxB, cancelB := context.WithCancel(context.Background())
	defer cancelB()
	a := createAsync(ctxA, p, "hang-a")
	b := createAsync(ctxB, p, "hang-b")
	until(t, "two launches are in flight", func() bool { return p.Launches().InFlight == 2 })
	c := createAsync(context.Background(), p, "c")
	until(t, "the third waits", func() bool { return p.Launches().Waiting == 1 })
	if got := p.Launches(); got.InFlight != 2 || got.Max != 2 {
		t.Fatalf("Launches = %+v, want 2 in flight of 2", got)
	}
	select {
	case r := <-c:
		t.Fatalf("the third launch did not wait: %+v", r)
	default:
	}
	cancelA()
	if r := <-a; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancelled launch: %v", r.err)
	}
	if r := <-c; r.err != nil {
		t.Fatalf("the queued launch, given a slot: %v", r.err)
	}
	if got := p.Launches(); got.Waiting != 0 || got.InFlight != 1 {
		t.Fatalf("Launches = %+v, want the one hanging launch in flight", got)
	}
	cancelB()
	<-b
}

// The start bound counts from the slot: a launch queued behind one that
// uses its whole bound still gets a whole bound of its own.
func TestStartBoundCountsFromTheSlot(t *testing.T) {
	const bound = 3 * time.Second
	p := queuedProvider(t, fakeChrome(t, bound/2), 1, bound)
	a := createAsync(context.Background(), p, "hang-a")
	until(t, "the first launch holds the slot", func() bool { return p.Launches().InFlight == 1 })
	b := createAsync(context.Background(), p, "slow-b")
	until(t, "the second is queued", func() bool { return p.Launches().Waiting == 1 })
	ra := <-a
	var se *StartError
	if !errors.As(ra.err, &se) || !se.TimedOut {
		t.Fatalf("the hanging launch: %v, want a start timeout", ra.err)
	}
	rb := <-b
	if rb.err != nil {
		t.Fatalf("the queued launch, which opens its port %s after its slot: %v", bound/2, rb.err)
	}
	if rb.took <= bound {
		t.Fatalf("the queued launch took %s, not past the first's whole bound: it did not wait", rb.took)
	}
}

// A create that gives up while queued leaves the queue (the next waiter is
// not held behind it) and leaves nothing on disk.
func TestCancelledWaiterLeavesTheQueue(t *testing.T) {
	p := queuedProvider(t, fakeChrome(t, 0), 1, time.Minute)
	ctxA, cancelA := context.WithCancel(context.Background())
	defer cancelA()
	a := createAsync(ctxA, p, "hang-a")
	until(t, "the first launch holds the slot", func() bool { return p.Launches().InFlight == 1 })
	ctxB, cancelB := context.WithCancel(context.Background())
	b := createAsync(ctxB, p, "b")
	until(t, "the second is queued", func() bool { return p.Launches().Waiting == 1 })
	cancelB()
	rb := <-b
	if !errors.Is(rb.err, context.Canceled) {
		t.Fatalf("cancelled waiter: %v, want context.Canceled", rb.err)
	}
	if got := p.Launches(); got.Waiting != 0 {
		t.Fatalf("Launches = %+v after the waiter gave up, want none waiting", got)
	}
	if rec, _ := p.readRecord("b"); rec != nil {
		t.Fatalf("the cancelled waiter left its record: %+v", rec)
	}
	if _, err := os.Stat(p.sessionDir("b")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the cancelled waiter left its session directory: %v", err)
	}
	c := createAsync(context.Background(), p, "c")
	until(t, "the third is queued", func() bool { return p.Launches().Waiting == 1 })
	cancelA()
	<-a
	if rc := <-c; rc.err != nil {
		t.Fatalf("the next waiter: %v", rc.err)
	}
}

// BenchmarkColdStartsAtOnce starts 8 browsers at once under each bound of
// launches in flight (8: unbounded for them) and reports when the last
// answered (all-ms) and each one's wait from its create to its DevTools
// port (p50-ms, max-ms, the queue included): what --max-launches'
// default is chosen by (docs/reliability.md).
func BenchmarkColdStartsAtOnce(b *testing.B) {
	const n = 8
	for _, launches := range []int{1, 2, 4, n} {
		b.Run("launches="+strconv.Itoa(launches), func(b *testing.B) {
			p, err := New(Options{ChromePath: chromePath(b), ProfileRoot: b.TempDir(), BootID: "bench", MaxLaunches: launches,
				StartTimeout: 2 * time.Minute, Logger: zerolog.Nop()})
			if err != nil {
				b.Fatal(err)
			}
			var all, each []time.Duration
			for i := 0; b.Loop(); i++ {
				began := time.Now()
				done := make(chan created, n)
				for j := range n {
					go func() {
						t0 := time.Now()
						s, err := p.Create(context.Background(), providers.CreateOptions{Tag: fmt.Sprintf("b%d-%d", i, j)})
						done <- created{s, err, time.Since(t0)}
					}()
				}
				for range n {
					r := <-done
					if r.err != nil {
						b.Fatal(r.err)
					}
					each = append(each, r.took)
				}
				all = append(all, time.Since(began))
				b.StopTimer()
				for j := range n {
					if err := p.Release(context.Background(), fmt.Sprintf("b%d-%d", i, j)); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
			}
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
			slices.Sort(all)
			slices.Sort(each)
			b.ReportMetric(ms(all[len(all)/2]), "all-ms")
			b.ReportMetric(ms(each[len(each)/2]), "p50-ms")
			b.ReportMetric(ms(each[len(each)-1]), "max-ms")
		})
	}
}
