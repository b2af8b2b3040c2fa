//go:build unix

package local

import (
	"errors"
	"os"
	"testing"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/providers"
)

// A warm browser handed to a session's tag is that tag's from then on:
// found by it (with the options it was handed with), not by its first tag,
// kept by Reap with the directory it still runs in, and released by it
// without a trace. A hand-over to a tag that has a browser, or of a tag
// that has none, changes nothing.
func TestRetagHandsTheBrowserOver(t *testing.T) {
	ctx := testCtx(t)
	root := t.TempDir()
	p := newProvider(t, root, "boot-r")
	warm, err := p.Create(ctx, providers.CreateOptions{Tag: "_warm-x-1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Create(ctx, providers.CreateOptions{Tag: "taken"}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Retag(ctx, "_warm-x-1", "taken", nil); !errors.Is(err, ErrNotRetaggable) {
		t.Fatalf("retag onto a tag with a browser: %v", err)
	}
	if _, err := p.Retag(ctx, "nothing", "s-1", nil); !errors.Is(err, ErrNotRetaggable) {
		t.Fatalf("retag of a tag without a browser: %v", err)
	}

	made := &contract.SessionOptions{Provider: Name, ActionPolicy: contract.PolicyAllow}
	s, err := p.Retag(ctx, "_warm-x-1", "s-1", made)
	if err != nil {
		t.Fatal(err)
	}
	if s.Tag != "s-1" || s.PID != warm.PID || s.CDPURL != warm.CDPURL || s.Found {
		t.Fatalf("handed over %+v, want the warm browser %d under s-1", s, warm.PID)
	}
	if _, err := p.Find(ctx, "_warm-x-1"); !errors.Is(err, providers.ErrNotFound) {
		t.Fatalf("the warm tag still finds the browser: %v", err)
	}
	f, err := p.Find(ctx, "s-1")
	if err != nil || f.PID != warm.PID || f.Made == nil || f.Made.ActionPolicy != contract.PolicyAllow {
		t.Fatalf("Find(s-1) = %+v, %v", f, err)
	}
	if released, err := p.Reap(ctx, nil); err != nil || len(released) != 0 {
		t.Fatalf("Reap released %v (%v); the handed-over browser and its directory are held", released, err)
	}
	dir := p.sessionDir("_warm-x-1")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the browser's directory: %v", err)
	}
	if !pidAlive(warm.PID) {
		t.Fatal("the handed-over browser died")
	}
	if err := p.Release(ctx, "s-1"); err != nil {
		t.Fatal(err)
	}
	processGone(t, warm.PID)
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("its directory outlived the release: %v", err)
	}
}
