package activities

import (
	"context"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/providers"
)

// rentedProvider is a fakeProvider whose browsers run at a service: they
// started an hour ago and release answers how long they ran.
type rentedProvider struct {
	*fakeProvider
	started time.Time
}

func (p rentedProvider) Create(ctx context.Context, o providers.CreateOptions) (*providers.Session, error) {
	s, err := p.fakeProvider.Create(ctx, o)
	if s != nil {
		s.StartedAt = p.started
	}
	return s, err
}

func (p rentedProvider) ReleaseMetered(ctx context.Context, tag string) (time.Duration, error) {
	return time.Since(p.started), p.fakeProvider.Release(ctx, tag)
}

func rentedHarness(t *testing.T) *harness {
	h := newHarness(t, func(o *Options) {
		o.Prices = map[string]float64{"browserbase": 0.01}
	})
	h.a.o.Providers["browserbase"] = rentedProvider{fakeProvider: h.prov, started: time.Now().Add(-time.Hour)}
	return h
}

// Results on a rented browser carry its running time; its release records
// the total and prices it.
func TestRentedSessionMinutes(t *testing.T) {
	h := rentedHarness(t)
	ref := h.create("t-1", contract.SessionOptions{Provider: "browserbase"})
	snap, err := call[contract.SnapshotResult](h, contract.ActivitySnapshot, contract.SnapshotRequest{Call: contract.Call{Session: ref}})
	if err != nil {
		t.Fatal(err)
	}
	if snap.SessionS < 3600 || snap.SessionS > 3700 {
		t.Fatalf("session_s = %d, want about an hour", snap.SessionS)
	}
	rel, err := call[contract.ReleaseResult](h, contract.ActivityRelease, contract.ReleaseRequest{Session: ref})
	if err != nil {
		t.Fatal(err)
	}
	if rel.RanS < 3600 || rel.Cost < 0.59 || rel.Cost > 0.62 {
		t.Fatalf("release record %+v, want about 3600 s at 0.01 a minute", rel)
	}

	// A local browser carries neither.
	local := h.create("t-2", contract.SessionOptions{})
	snap, err = call[contract.SnapshotResult](h, contract.ActivitySnapshot, contract.SnapshotRequest{Call: contract.Call{Session: local}})
	if err != nil || snap.SessionS != 0 {
		t.Fatalf("local snapshot: %+v %v", snap, err)
	}
}

// A stopping worker leaves rented browsers running for the session's next
// call on another worker, and releases its local ones.
func TestCloseLeavesRentedBrowsers(t *testing.T) {
	h := rentedHarness(t)
	h.create("rented-1", contract.SessionOptions{Provider: "browserbase"})
	h.create("local-1", contract.SessionOptions{})
	h.a.Close(context.Background())
	_, released := h.prov.calls()
	if len(released) != 1 || released[0] != "local-1" {
		t.Fatalf("released %v at shutdown, want only local-1", released)
	}
	if n := len(h.a.Sessions()); n != 0 {
		t.Fatalf("%d sessions still held after Close", n)
	}
}
