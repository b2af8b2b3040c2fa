package kernel

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/providers"
)

// TestKernelContract runs against the real Kernel only when KERNEL_API_KEY
// is set: create, find by tag, attach, release, confirm gone.
func TestKernelContract(t *testing.T) {
	o, err := FromEnv(Options{IdleTimeout: time.Minute, Headless: true}, os.Getenv)
	if err != nil {
		t.Skipf("contract test against the real service skipped: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	tag := fmt.Sprintf("contract-%d", time.Now().UnixNano())
	t.Cleanup(func() { _ = p.Release(context.Background(), tag) })
	s, err := p.Create(ctx, providers.CreateOptions{Tag: tag})
	if err != nil {
		t.Fatal(err)
	}
	reachable(t, ctx, s.CDPURL)
	if found, err := p.Find(ctx, tag); err != nil || found.RemoteID != s.RemoteID {
		t.Fatalf("find by tag: %+v %v", found, err)
	}
	if err := p.Release(ctx, tag); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Find(ctx, tag); !errors.Is(err, providers.ErrNotFound) {
		t.Fatalf("found after release: %v", err)
	}
}
