package activities

import (
	"bytes"
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/evidence"
	"github.com/durable-browser/durable-browser/internal/handoff"
)

// beats counts the heartbeats an activity records.
type beats struct{ n atomic.Int32 }

// waitFor blocks until at least n heartbeats were recorded, or fails after a
// bound: a slow dependency that sees no heartbeat while it works would leave
// its call to be judged lost under the heartbeat timeout.
func (b *beats) waitFor(ctx context.Context, n int32) error {
	deadline := time.After(5 * time.Second)
	for b.n.Load() < n {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline:
			return errors.New("no heartbeat while the call waited")
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

type slowNotifier struct{ b *beats }

func (s slowNotifier) Notify(ctx context.Context, _ handoff.Notice) error { return s.b.waitFor(ctx, 1) }

type slowStore struct {
	*evidence.Memory
	b *beats
}

func (s slowStore) Get(ctx context.Context, key string) ([]byte, evidence.Meta, error) {
	if err := s.b.waitFor(ctx, 1); err != nil {
		return nil, evidence.Meta{}, err
	}
	return s.Memory.Get(ctx, key)
}

// listen counts the heartbeats that reach the (test) server. The test
// environment sends the first at once and throttles the rest, so one beat
// during the wait shows the call heartbeats while it works.
func listen(h *harness, b *beats) {
	h.env.SetOnActivityHeartbeatListener(func(*activity.Info, converter.EncodedValues) { b.n.Add(1) })
}

// Notify (a webhook) and GetEvidence (a read from S3) may take longer than
// the heartbeat timeout; both heartbeat while they wait, so a slow port or
// store is not mistaken for a lost worker.
func TestSlowCallsHeartbeat(t *testing.T) {
	t.Run("notify", func(t *testing.T) {
		b := &beats{}
		h := newHarness(t, func(o *Options) { o.Notifier = slowNotifier{b}; o.Heartbeat = 10 * time.Millisecond })
		listen(h, b)
		ref := h.create("t-1", contract.SessionOptions{})
		if _, err := call[contract.ReleaseResult](h, contract.ActivityNotify, contract.NotifyRequest{Session: ref, WorkflowID: "wf", RequestID: "r1"}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("get evidence", func(t *testing.T) {
		b := &beats{}
		store := slowStore{Memory: evidence.NewMemory(), b: b}
		h := newHarness(t, func(o *Options) { o.Evidence = &evidence.Filer{Store: store}; o.Heartbeat = 10 * time.Millisecond })
		listen(h, b)
		body := []byte("filed")
		key := evidence.BodyKey("", "wf", "wf-1", "call", "browser_read", evidence.SHA256Hex(body), "md")
		if _, err := store.Put(context.Background(), key, body, "text/markdown"); err != nil {
			t.Fatal(err)
		}
		res, err := call[contract.GetEvidenceResult](h, contract.ActivityEvidence, contract.GetEvidenceRequest{Key: key})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(res.Body, body) {
			t.Fatalf("body = %q", res.Body)
		}
	})
}
