// Package admission decides whether a worker takes new sessions: it stops
// when it already holds its --max-browsers, or when the p95 of its recent
// calls is past --latency-bound times its unloaded p95, so that new
// sessions go to another worker instead of slowing every running one.
//
// The worker polls the create queue only through a Gate (a Temporal slot
// supplier): while the gate is closed it does not poll, so the server hands
// creates to the workers that do. The calls of the sessions a worker holds
// come on its host queue, which the gate never touches.
package admission

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.temporal.io/sdk/worker"
)

const (
	// Window is how far back the recent p95 looks.
	Window = time.Minute
	// MinSamples is how many calls a window needs before its p95 counts,
	// for the baseline or against it.
	MinSamples = 20
	// MinBaseline is the lowest unloaded p95 the bound is taken from, so
	// that calls of a few milliseconds growing to a few more do not count
	// as a collapse.
	MinBaseline = 100 * time.Millisecond
	// recheck is how often a closed gate looks again (sessions end
	// without telling it).
	recheck = 500 * time.Millisecond
)

// Options configure a Gate.
type Options struct {
	// Held is how many sessions' browsers the worker holds (the creates it
	// runs from the create queue are counted by the gate itself).
	Held func() int
	// MaxBrowsers is the worker's --max-browsers (0: no bound).
	MaxBrowsers int
	// LatencyBound is the worker's --latency-bound: the factor over the
	// unloaded p95 past which it stops (0: latency never stops it).
	LatencyBound int
	// Slots bounds the creates running at once (0: no bound).
	Slots int
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
}

// Gate records the worker's call latencies and admits new sessions.
type Gate struct {
	o Options

	mu       sync.Mutex
	samples  []sample // oldest first, within Window
	baseline time.Duration
	// inUse are the creates running (permits used); outstanding are the
	// polls out (permits reserved, no task yet): at most one, so that a
	// gate that closes has at most one create still coming to it.
	inUse, outstanding int
	wake               chan struct{} // closed and replaced when something changed
	closed             bool          // the last decision, for the log
	onChange           func(open bool, why string)
}

type sample struct {
	at time.Time
	d  time.Duration
}

// New returns a gate.
func New(o Options) *Gate {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Held == nil {
		o.Held = func() int { return 0 }
	}
	return &Gate{o: o, wake: make(chan struct{})}
}

// OnChange is called (outside the gate's lock) when the gate closes or
// opens, with the reason it is closed.
func (g *Gate) OnChange(f func(open bool, why string)) {
	g.mu.Lock()
	g.onChange = f
	g.mu.Unlock()
}

// Record adds one call's latency (a call on the host queue: a session the
// worker holds).
func (g *Gate) Record(d time.Duration) {
	g.mu.Lock()
	now := g.o.Now()
	g.samples = append(g.samples, sample{now, d})
	g.prune(now)
	if p, ok := g.p95(); ok && (g.baseline == 0 || p < g.baseline) {
		g.baseline = p
	}
	g.signal()
	g.mu.Unlock()
}

// prune drops samples older than Window.
func (g *Gate) prune(now time.Time) {
	i := 0
	for i < len(g.samples) && now.Sub(g.samples[i].at) > Window {
		i++
	}
	g.samples = g.samples[i:]
}

// p95 is the recent window's p95, when it holds enough calls.
func (g *Gate) p95() (time.Duration, bool) {
	if len(g.samples) < MinSamples {
		return 0, false
	}
	ds := make([]time.Duration, len(g.samples))
	for i, s := range g.samples {
		ds[i] = s.d
	}
	slices.Sort(ds)
	return ds[(len(ds)*95+99)/100-1], true
}

func (g *Gate) signal() {
	close(g.wake)
	g.wake = make(chan struct{})
}

// Status is what the gate decided and why.
type Status struct {
	Open bool
	// Why names the bound a closed gate is at.
	Why string
	// P95 and Baseline are the recent and the unloaded p95 (0: too few
	// calls yet).
	P95, Baseline time.Duration
}

// Status decides now.
func (g *Gate) Status() Status {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.status()
}

func (g *Gate) status() Status {
	g.prune(g.o.Now())
	p, enough := g.p95()
	st := Status{Open: true, Baseline: g.baseline}
	if enough {
		st.P95 = p
	}
	held := g.o.Held() + g.inUse
	if max := g.o.MaxBrowsers; max > 0 && held >= max {
		st.Open, st.Why = false, fmt.Sprintf("holds %d browsers, its --max-browsers", held)
		return st
	}
	if why := g.latency(p, enough, held); why != "" {
		st.Open, st.Why = false, why
	}
	return st
}

// latency names the latency bound when the recent p95 is past it.
func (g *Gate) latency(p time.Duration, enough bool, held int) string {
	f := g.o.LatencyBound
	if f <= 0 || !enough || held <= 0 {
		return ""
	}
	base := max(g.baseline, MinBaseline)
	if p <= time.Duration(f)*base {
		return ""
	}
	return fmt.Sprintf("p95 of its calls over the last %s is %s, over %d x its unloaded p95 %s (--latency-bound)",
		Window, p.Round(time.Millisecond), f, base.Round(time.Millisecond))
}

// PastLatency names the latency bound when the worker is past it ("": not
// past it). A create the gate's one poll out brought just as it closed
// asks it, and is refused, so that its retry goes to another worker.
func (g *Gate) PastLatency() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.prune(g.o.Now())
	p, enough := g.p95()
	return g.latency(p, enough, g.o.Held())
}

// Tuner is the create queue worker's tuner: its activity slots come from
// the gate.
func (g *Gate) Tuner() (worker.WorkerTuner, error) {
	return worker.NewCompositeTuner(worker.CompositeTunerOptions{
		WorkflowSlotSupplier:        fixed(1),
		ActivitySlotSupplier:        g,
		LocalActivitySlotSupplier:   fixed(1),
		NexusSlotSupplier:           fixed(1),
		SessionActivitySlotSupplier: fixed(1),
	})
}

func fixed(n int) worker.SlotSupplier {
	s, err := worker.NewFixedSizeSlotSupplier(n)
	if err != nil {
		panic(err) // only for n < 1
	}
	return s
}

// ReserveSlot blocks until the gate admits a new session: only then does
// the worker poll the create queue.
func (g *Gate) ReserveSlot(ctx context.Context, _ worker.SlotReservationInfo) (*worker.SlotPermit, error) {
	t := time.NewTicker(recheck)
	defer t.Stop()
	for {
		if p := g.TryReserveSlot(nil); p != nil {
			return p, nil
		}
		g.mu.Lock()
		wake := g.wake
		g.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-wake:
		case <-t.C:
		}
	}
}

// TryReserveSlot admits a new session now, or answers nil.
func (g *Gate) TryReserveSlot(worker.SlotReservationInfo) *worker.SlotPermit {
	g.mu.Lock()
	st := g.status()
	busy := g.outstanding > 0 || // one poll out at a time
		(g.o.Slots > 0 && g.inUse >= g.o.Slots) ||
		// A poll out is a create that may come: it counts as a browser.
		(g.o.MaxBrowsers > 0 && g.o.Held()+g.inUse+1 > g.o.MaxBrowsers)
	if st.Open && busy {
		st.Open = false // busy, not past a bound: no change to report
	} else if st.Open == g.closed {
		g.closed = !st.Open
		if f := g.onChange; f != nil {
			defer f(st.Open, st.Why)
		}
	}
	var p *worker.SlotPermit
	if st.Open {
		g.outstanding++
		p = &worker.SlotPermit{}
	}
	g.mu.Unlock()
	return p
}

// used marks a permit whose poll brought a create.
type used struct{}

// MarkSlotUsed counts a poll that brought a create as a running create.
func (g *Gate) MarkSlotUsed(info worker.SlotMarkUsedInfo) {
	g.mu.Lock()
	info.Permit().UserData = used{}
	g.outstanding--
	g.inUse++
	g.signal()
	g.mu.Unlock()
}

// ReleaseSlot frees a slot: a create done, or a poll that brought none.
func (g *Gate) ReleaseSlot(info worker.SlotReleaseInfo) {
	g.mu.Lock()
	if _, ok := info.Permit().UserData.(used); ok {
		g.inUse--
	} else {
		g.outstanding--
	}
	g.signal()
	g.mu.Unlock()
}

// MaxSlots is the bound on creates at once (0: none).
func (g *Gate) MaxSlots() int { return g.o.Slots }
