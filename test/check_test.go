package test

import (
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/workflows"
)

// TestCheckTool checks pages of the demo site with browser_check: a step
// that worked passes with its evidence, one that did not fails naming the
// check and what was found, errors nobody asked about are warnings, and a
// check that expects nothing is refused.
func TestCheckTool(t *testing.T) {
	env.StartWorker(t, harnessDefaults())
	s := newSession(t, workflows.SessionConfig{})
	var run contract.RunResult
	s.must("run", actions(
		map[string]any{"op": "goto", "url": env.Demo.URL() + "/form.html"},
		map[string]any{"op": "fill", "locator": map[string]any{"label": "Email"}, "value": "ada@example.com"},
		map[string]any{"op": "check", "locator": map[string]any{"label": "I agree"}},
		map[string]any{"op": "click", "locator": map[string]any{"role": "button", "name": "Create account"}},
		map[string]any{"op": "wait", "text": "Submission received"},
	), &run)

	var ok contract.CheckResult
	s.must("browser_check", map[string]any{
		"url": "*/submit", "expect_text": "Submission received", "expect_locator": map[string]any{"role": "heading", "name": "Thanks"},
		"no_console_errors": true, "no_failed_requests": true,
	}, &ok)
	if !ok.Passed || len(ok.Failed) != 0 || len(ok.Checks) != 5 {
		t.Fatalf("a step that worked did not pass: %+v", ok)
	}
	for _, c := range ok.Checks {
		if !c.Passed || c.Found == "" {
			t.Errorf("check %s: %+v", c.Check, c)
		}
	}
	if txt := ok.Checks[1].Found; !strings.Contains(txt, "Submission received") || !strings.HasPrefix(txt, "<<page ") {
		t.Errorf("text evidence is not the fenced excerpt: %q", txt)
	}
	if ok.Evidence.Key == "" || ok.Evidence.SHA256 == "" || ok.Evidence.ContentType != "application/json" {
		t.Errorf("verdict not filed: %+v", ok.Evidence)
	}

	// An expectation that does not hold fails, saying what was there instead.
	var snap contract.SnapshotResult
	s.must("snapshot", map[string]any{}, &snap)
	heading := refFor(t, snap.Text, `heading "Thanks"`)
	var bad contract.CheckResult
	s.must("browser_check", map[string]any{"expect_text": "Welcome back", "expect_id": heading, "url": "*/form.html"}, &bad)
	if bad.Passed || strings.Join(bad.Failed, ",") != "url,expect_text" {
		t.Fatalf("failed checks: %+v", bad)
	}
	if !strings.Contains(bad.Checks[0].Found, "/submit") || bad.Checks[1].Found != "" || !bad.Checks[2].Passed || !strings.Contains(bad.Checks[2].Found, `heading "Thanks"`) {
		t.Fatalf("evidence: %+v", bad.Checks)
	}

	// A page whose widget broke: the text is there, the errors are not hidden.
	s.must("run", actions(
		map[string]any{"op": "goto", "url": env.Demo.URL() + "/broken.html"},
		map[string]any{"op": "wait", "text": "Widget unavailable"},
	), &run)
	var broken contract.CheckResult
	s.must("browser_check", map[string]any{"expect_text": "Dashboard", "no_console_errors": true}, &broken)
	if broken.Passed || strings.Join(broken.Failed, ",") != "no_console_errors" {
		t.Fatalf("broken page: %+v", broken)
	}
	if !strings.Contains(broken.Checks[1].Found, "widget failed: widget data answered 404") {
		t.Errorf("console evidence: %q", broken.Checks[1].Found)
	}
	if len(broken.Warnings) != 1 || !strings.Contains(broken.Warnings[0], "1 failed requests (not checked): 404 GET") {
		t.Errorf("warnings: %q", broken.Warnings)
	}
	var one contract.CheckResult
	s.must("browser_check", map[string]any{"expect_locator": map[string]any{"text": "Nowhere to be seen"}}, &one)
	if one.Passed || !strings.Contains(one.Checks[0].Found, "0 visible elements match") {
		t.Fatalf("locator matching nothing: %+v", one)
	}

	// A look alone is no verdict.
	for _, args := range []map[string]any{{}, {"no_console_errors": false}} {
		if f := s.failure("browser_check", args); f.Code != contract.CodeRefused || !strings.Contains(f.Message, "nothing to check") {
			t.Errorf("check of %v: %+v", args, f)
		}
	}
}
