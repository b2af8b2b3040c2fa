package local

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
)

// DefaultMaxLaunches is Options.MaxLaunches' default: one launch per two
// cores, at least one. A cold Chrome start is CPU-bound for about a second
// on an idle core; eight started at once on two cores starve each other
// past any fair start bound (docs/reliability.md, issue 26), while in turn
// each takes its second.
func DefaultMaxLaunches() int { return max(1, runtime.NumCPU()/2) }

// launchQueue bounds the browsers starting at once: a launch takes a slot
// before its process starts and gives it back once its DevTools port
// answers or it failed. Waiters take slots in the order they asked (a
// buffered channel queues its blocked senders in order).
type launchQueue struct {
	slots    chan struct{}
	inFlight atomic.Int32
	waiting  atomic.Int32
}

func newLaunchQueue(n int) *launchQueue {
	return &launchQueue{slots: make(chan struct{}, n)}
}

// acquire waits for a slot until ctx ends; queued says it had to wait.
// release gives the slot back (call it once).
func (q *launchQueue) acquire(ctx context.Context, queued func(inFlight, waiting int)) (release func(), waited time.Duration, err error) {
	select {
	case q.slots <- struct{}{}:
		q.inFlight.Add(1)
		return q.release, 0, nil
	default:
	}
	began := time.Now()
	w := q.waiting.Add(1)
	if queued != nil {
		queued(int(q.inFlight.Load()), int(w))
	}
	defer q.waiting.Add(-1)
	select {
	case q.slots <- struct{}{}:
		q.inFlight.Add(1)
		return q.release, time.Since(began), nil
	case <-ctx.Done():
		return nil, time.Since(began), fmt.Errorf("waiting %s for one of %d browser launch slots (--max-launches): %w",
			time.Since(began).Round(time.Millisecond), cap(q.slots), ctx.Err())
	}
}

func (q *launchQueue) release() {
	q.inFlight.Add(-1)
	<-q.slots
}

// Launches is what the launch queue holds now.
type Launches struct {
	// Max is Options.MaxLaunches.
	Max int
	// InFlight counts browsers started and not yet answering on their
	// DevTools port; Waiting counts creates queued for a slot.
	InFlight, Waiting int
}

// Launches says how many browsers are starting and how many wait to.
func (p *Provider) Launches() Launches {
	return Launches{Max: cap(p.launches.slots), InFlight: int(p.launches.inFlight.Load()), Waiting: int(p.launches.waiting.Load())}
}
