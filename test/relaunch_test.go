package test

import (
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/test/harness"
	"github.com/durable-browser/durable-browser/workflows"
)

// A session that runs on a saved profile itself can be relaunched: the
// relaunch lets the old browser go first, so the session never locks itself
// out of its own profile. A headed relaunch where the worker has no display
// is refused, saying so, and the session keeps its browser.
func TestRelaunchOnSavingProfile(t *testing.T) {
	t.Setenv("DISPLAY", "")
	t.Setenv("WAYLAND_DISPLAY", "")
	env.StartWorker(t, harness.WorkerOptions{ProfileGrants: "shop:save"})
	s := newSession(t, workflows.SessionConfig{Session: contract.SessionOptions{Profile: &contract.Profile{Name: "shop", Save: true}}})
	s.must("run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/about.html"}), nil)

	var rel contract.RelaunchResult
	s.must("browser_relaunch", map[string]any{"stealth": true}, &rel)
	if rel.Session.Tag != workflows.SessionTag(s.id, 2) || rel.Previous != workflows.SessionTag(s.id, 1) {
		t.Fatalf("relaunch on the saving profile: %+v", rel)
	}
	var snap contract.SnapshotResult
	s.must("snapshot", map[string]any{}, &snap)

	f := s.failure("browser_relaunch", map[string]any{"headed": true})
	if f.Code != contract.CodeRefused || f.Retryable || !strings.Contains(f.Message, "no display was found") {
		t.Fatalf("headed relaunch without a display: %+v", f)
	}
	s.must("snapshot", map[string]any{}, &snap)
	s.must("browser_release", map[string]any{}, nil)
}
