package browserbase

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/providers"
)

// TestBrowserbaseContract runs against the real Browserbase only when
// BROWSERBASE_API_KEY (and BROWSERBASE_PROJECT_ID) are set: it creates a
// session, finds it by tag, attaches, releases it and confirms it ended.
func TestBrowserbaseContract(t *testing.T) {
	o, err := FromEnv(Options{Lifetime: 5 * time.Minute}, os.Getenv)
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
	if pages(t, ctx, s.CDPURL) == 0 {
		t.Fatal("the session shows no page")
	}
	found, err := p.Find(ctx, tag)
	if err != nil || found.RemoteID != s.RemoteID {
		t.Fatalf("find by tag: %+v %v", found, err)
	}
	if err := p.Release(ctx, tag); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Find(ctx, tag); !errors.Is(err, providers.ErrNotFound) {
		t.Fatalf("found after release: %v", err)
	}
}
