package admission

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/worker"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time      { return c.t }
func (c *clock) add(d time.Duration) { c.t = c.t.Add(d) }
func record(g *Gate, n int, d time.Duration, c *clock) {
	for i := 0; i < n; i++ {
		c.add(100 * time.Millisecond)
		g.Record(d)
	}
}

// At --max-browsers the gate closes, and opens once a browser is given back.
func TestClosedAtMaxBrowsers(t *testing.T) {
	var held atomic.Int64
	held.Store(2)
	g := New(Options{Held: func() int { return int(held.Load()) }, MaxBrowsers: 2})
	if st := g.Status(); st.Open || !strings.Contains(st.Why, "--max-browsers") {
		t.Fatalf("holding 2 of 2: want closed naming --max-browsers, got %+v", st)
	}
	if g.TryReserveSlot(nil) != nil {
		t.Fatal("a closed gate handed out a slot: the worker would poll for a new session")
	}
	held.Store(1)
	if p := g.TryReserveSlot(nil); p == nil {
		t.Fatal("holding 1 of 2: want a slot")
	}
}

// The gate closes once the recent p95 is past LatencyBound times the
// unloaded one, and opens when it falls back or the calls stop.
func TestClosedPastLatencyBound(t *testing.T) {
	c := &clock{t: time.Unix(0, 0)}
	var held atomic.Int64
	held.Store(1)
	g := New(Options{Held: func() int { return int(held.Load()) }, LatencyBound: 2, Now: c.now})

	record(g, MinSamples-1, 200*time.Millisecond, c)
	if st := g.Status(); !st.Open || st.P95 != 0 {
		t.Fatalf("too few calls to judge: want open, no p95: %+v", st)
	}
	record(g, 1, 200*time.Millisecond, c)
	if st := g.Status(); !st.Open || st.Baseline != 200*time.Millisecond {
		t.Fatalf("unloaded: want open with baseline 200ms: %+v", st)
	}
	// Load: the calls of the last minute take 350 ms, under 2 x 200 ms.
	c.add(Window)
	record(g, MinSamples, 350*time.Millisecond, c)
	if st := g.Status(); !st.Open || st.Baseline != 200*time.Millisecond {
		t.Fatalf("p95 1.75x the baseline: want open, baseline kept: %+v", st)
	}
	// More load: 450 ms is past 2 x 200 ms.
	record(g, MinSamples*3, 450*time.Millisecond, c)
	st := g.Status()
	if st.Open || !strings.Contains(st.Why, "--latency-bound") || st.P95 != 450*time.Millisecond {
		t.Fatalf("p95 2.25x the baseline: want closed naming --latency-bound: %+v", st)
	}
	// Holding no session, its latency is not its sessions': open.
	held.Store(0)
	if st := g.Status(); !st.Open {
		t.Fatalf("holding nothing: want open: %+v", st)
	}
	held.Store(1)
	// The calls stop: after a window without them there is nothing to judge.
	c.add(Window + time.Second)
	if st := g.Status(); !st.Open {
		t.Fatalf("no calls in the window: want open: %+v", st)
	}
	// Calls fast again: open.
	record(g, MinSamples, 150*time.Millisecond, c)
	if st := g.Status(); !st.Open || st.Baseline != 150*time.Millisecond {
		t.Fatalf("fast again: want open, the baseline the new lowest: %+v", st)
	}
}

// A baseline of a few milliseconds counts as MinBaseline, so the gate does
// not close at a p95 that is only a few milliseconds more.
func TestBaselineFloor(t *testing.T) {
	c := &clock{t: time.Unix(0, 0)}
	g := New(Options{Held: func() int { return 1 }, LatencyBound: 2, Now: c.now})
	record(g, MinSamples, 10*time.Millisecond, c)
	c.add(Window)
	record(g, MinSamples, 150*time.Millisecond, c)
	if st := g.Status(); !st.Open {
		t.Fatalf("150 ms against a 10 ms baseline is under 2 x MinBaseline: want open: %+v", st)
	}
	record(g, MinSamples*3, 250*time.Millisecond, c)
	if st := g.Status(); st.Open {
		t.Fatalf("250 ms is past 2 x MinBaseline: want closed: %+v", st)
	}
}

// Latency off (LatencyBound 0): only --max-browsers closes the gate.
func TestLatencyBoundOff(t *testing.T) {
	c := &clock{t: time.Unix(0, 0)}
	g := New(Options{Held: func() int { return 1 }, Now: c.now})
	record(g, MinSamples, 100*time.Millisecond, c)
	record(g, MinSamples*5, 10*time.Second, c)
	if st := g.Status(); !st.Open {
		t.Fatalf("no latency bound: want open: %+v", st)
	}
}

// ReserveSlot (the poller's wait before it polls) hands out nothing while
// the gate is closed, and a slot once it opens; OnChange hears both.
func TestReserveSlotWaitsForTheGate(t *testing.T) {
	var held atomic.Int64
	held.Store(1)
	g := New(Options{Held: func() int { return int(held.Load()) }, MaxBrowsers: 1})
	changes := make(chan bool, 4)
	g.OnChange(func(open bool, why string) { changes <- open })

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if p, err := g.ReserveSlot(ctx, nil); p != nil || err == nil {
		t.Fatalf("closed gate, cancelled wait: want no slot and the context's error, got %v %v", p, err)
	}
	if open := <-changes; open {
		t.Fatal("want a change to closed first")
	}
	got := make(chan error, 1)
	go func() {
		p, err := g.ReserveSlot(context.Background(), nil)
		if p == nil && err == nil {
			err = context.Canceled
		}
		got <- err
	}()
	held.Store(0) // a session ended; the gate looks again on its own
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if open := <-changes; !open {
		t.Fatal("want a change to open")
	}
}

// slotInfo is what the SDK hands MarkSlotUsed and ReleaseSlot: only the
// permit is read.
type slotInfo struct {
	worker.SlotReleaseInfo
	p *worker.SlotPermit
}

func (i slotInfo) Permit() *worker.SlotPermit { return i.p }

type markInfo struct {
	worker.SlotMarkUsedInfo
	p *worker.SlotPermit
}

func (i markInfo) Permit() *worker.SlotPermit { return i.p }

// One poll is out at a time, and Slots bounds the creates running, without
// reporting the gate closed.
func TestSlots(t *testing.T) {
	g := New(Options{Slots: 2})
	var changed atomic.Int64
	g.OnChange(func(bool, string) { changed.Add(1) })
	p1 := g.TryReserveSlot(nil)
	if p1 == nil {
		t.Fatal("want a slot")
	}
	if g.TryReserveSlot(nil) != nil {
		t.Fatal("a second poll while one is out: a closing gate would have two creates coming")
	}
	g.MarkSlotUsed(markInfo{p: p1}) // the poll brought a create
	p2 := g.TryReserveSlot(nil)
	if p2 == nil {
		t.Fatal("want the next poll once the first brought a create")
	}
	g.MarkSlotUsed(markInfo{p: p2})
	if g.TryReserveSlot(nil) != nil {
		t.Fatal("two creates running of Slots 2: want no poll")
	}
	g.ReleaseSlot(slotInfo{p: p1})
	p3 := g.TryReserveSlot(nil)
	if p3 == nil {
		t.Fatal("want a slot once a create is done")
	}
	g.ReleaseSlot(slotInfo{p: p3}) // a poll that brought nothing
	if g.TryReserveSlot(nil) == nil {
		t.Fatal("want a slot once the empty poll is back")
	}
	if n := changed.Load(); n != 0 {
		t.Fatalf("busy slots are not a bound: %d changes reported", n)
	}
}

// Under --max-browsers a poll out and the creates running count as
// browsers: the worker never has a create coming past its bound.
func TestPollsCountAgainstMaxBrowsers(t *testing.T) {
	var held atomic.Int64
	g := New(Options{Held: func() int { return int(held.Load()) }, MaxBrowsers: 2})
	p1 := g.TryReserveSlot(nil)
	g.MarkSlotUsed(markInfo{p: p1}) // a create runs: 1 of 2
	p2 := g.TryReserveSlot(nil)
	if p2 == nil {
		t.Fatal("one create running of 2: want a poll")
	}
	g.MarkSlotUsed(markInfo{p: p2})
	if st := g.Status(); st.Open {
		t.Fatalf("two creates running of 2: want closed: %+v", st)
	}
	held.Store(1) // the first create done: its session held
	g.ReleaseSlot(slotInfo{p: p1})
	if g.TryReserveSlot(nil) != nil {
		t.Fatal("1 held and 1 create running of 2: want no poll")
	}
	held.Store(2)
	g.ReleaseSlot(slotInfo{p: p2})
	if g.TryReserveSlot(nil) != nil {
		t.Fatal("2 held of 2: want no poll")
	}
	held.Store(1)
	if g.TryReserveSlot(nil) == nil {
		t.Fatal("1 held of 2: want a poll")
	}
}

// PastLatency names the bound only when the worker is past it.
func TestPastLatency(t *testing.T) {
	c := &clock{t: time.Unix(0, 0)}
	g := New(Options{Held: func() int { return 1 }, LatencyBound: 2, Now: c.now})
	record(g, MinSamples, 200*time.Millisecond, c)
	if why := g.PastLatency(); why != "" {
		t.Fatalf("unloaded: %q", why)
	}
	record(g, MinSamples*3, time.Second, c)
	if why := g.PastLatency(); !strings.Contains(why, "--latency-bound") {
		t.Fatalf("past the bound: %q", why)
	}
}
