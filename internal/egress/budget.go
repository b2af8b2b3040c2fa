package egress

import (
	"context"
	"time"

	"golang.org/x/sync/semaphore"
)

// ScanBudget bounds the bytes all proxies of this process hold at once to
// search for secrets (request bodies, WebSocket frames; each up to MaxScan,
// held only while a typed secret is not bound to the destination). A
// request or frame that finds no room waits up to budgetWait for it, then
// is refused as one that could not be checked: a page opening many
// connections cannot grow the worker's memory past this.
const ScanBudget = 64 << 20

// budgetWait is how long a body or frame waits for room in the budget.
var budgetWait = 10 * time.Second

var budget = semaphore.NewWeighted(ScanBudget)

// reserve takes n bytes of the budget, waiting up to budgetWait; release
// gives them back. n over the whole budget never fits.
func reserve(n int64) (release func(), ok bool) {
	ctx, cancel := context.WithTimeout(context.Background(), budgetWait)
	defer cancel()
	if err := budget.Acquire(ctx, n); err != nil {
		return func() {}, false
	}
	return func() { budget.Release(n) }, true
}
