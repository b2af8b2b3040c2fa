package jsengine

import (
	"sync"
	"time"
)

// Starting a cell's process costs far more than a small cell does, so a
// few are started ahead, each used for one cell only (no state passes from
// one cell to the next). A spare unused for maxIdle is killed; one whose
// worker dies reads the end of its input and exits.
const (
	spares  = 2
	maxIdle = 2 * time.Minute
)

var warm struct {
	mu       sync.Mutex
	idle     []*proc
	starting int
}

// takeProc hands out a started process, a spare when there is one, and
// starts spares for the cells after it.
func takeProc() (*proc, error) {
	warm.mu.Lock()
	var p *proc
	if n := len(warm.idle); n > 0 {
		p, warm.idle = warm.idle[n-1], warm.idle[:n-1]
	}
	for len(warm.idle)+warm.starting < spares {
		warm.starting++
		go startSpare()
	}
	warm.mu.Unlock()
	if p != nil {
		return p, nil
	}
	return startProc()
}

func startSpare() {
	p, err := startProc()
	warm.mu.Lock()
	defer warm.mu.Unlock()
	warm.starting--
	if err != nil {
		return
	}
	warm.idle = append(warm.idle, p)
	time.AfterFunc(maxIdle, func() {
		warm.mu.Lock()
		for i, q := range warm.idle {
			if q == p {
				warm.idle = append(warm.idle[:i], warm.idle[i+1:]...)
				warm.mu.Unlock()
				p.stop()
				return
			}
		}
		warm.mu.Unlock()
	})
}
