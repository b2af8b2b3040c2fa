package test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/devstack"
	"github.com/durable-browser/durable-browser/test/harness"
	"github.com/durable-browser/durable-browser/workflows"
)

// scrape reads the worker's /metrics.
func scrape(t *testing.T, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("scraping %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scraping %s: %d %v", url, resp.StatusCode, err)
	}
	return string(b)
}

// metricValue is the value of the sample whose name and labels start the
// line as given (labels in the exposition's order), or -1 when absent.
func metricValue(text, series string) float64 {
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + `(?:\{[^}]*\})? ([0-9.e+-]+)$`)
	m := re.FindStringSubmatch(text)
	if m == nil {
		return -1
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// A worker run with --metrics serves the SDK's and our metrics: calls by
// tool and code with latencies, the browser it holds and Chrome's memory, a
// request held for approval and a handoff waiting for a person while they wait.
func TestWorkerMetrics(t *testing.T) {
	port, err := devstack.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	env.StartWorkerProcess(t, harness.ProcessOptions{Env: []string{fmt.Sprintf("DURABLE_BROWSER_METRICS=127.0.0.1:%d", port)}})
	s := newSession(t, workflows.SessionConfig{Session: contract.SessionOptions{ActionPolicy: contract.PolicyAsk}})
	var run contract.RunResult
	s.must("run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/form.html"}), &run)
	var snap contract.SnapshotResult
	s.must("snapshot", map[string]any{"mode": "interactive"}, &snap)
	bad := s.failure("run", actions(map[string]any{"op": "click", "id": "999"}))

	text := scrape(t, url)
	for series, atLeast := range map[string]float64{
		`durable_browser_tool_calls_total{code="ok",tool="snapshot"}`:                   1,
		`durable_browser_tool_calls_total{code="ok",tool="run"}`:                        1,
		fmt.Sprintf(`durable_browser_tool_calls_total{code="%s",tool="run"}`, bad.Code): 1,
		`durable_browser_tool_calls_total{code="ok",tool="browser.create"}`:             1,
		`durable_browser_tool_duration_seconds_count{tool="snapshot"}`:                  1,
		`durable_browser_tool_duration_seconds_bucket{tool="snapshot",le="+Inf"}`:       1,
		`durable_browser_sessions_live`:                                                 1,
		`durable_browser_browsers{provider="local"}`:                                    1,
		`durable_browser_chrome_memory_bytes`:                                           1 << 20,
		`durable_browser_chrome_processes`:                                              2,
		`durable_browser_max_browsers`:                                                  1,
		`durable_browser_held_requests`:                                                 0,
		`durable_browser_pending_handoffs`:                                              0,
		`durable_browser_not_taking_sessions`:                                           0, // served (1 of its 4: taking)
		`temporal_activity_execution_latency_seconds_count`:                             1,
		`temporal_request_attempt_total`:                                                1,
	} {
		if v := metricValue(text, series); v < atLeast {
			t.Errorf("%s = %v, want at least %v", series, v, atLeast)
		}
	}
	// The SDK's timers are in seconds: its histograms need second buckets.
	if !regexp.MustCompile(`(?m)^temporal_activity_execution_latency_seconds_bucket\{[^}]*le="0.25"\} [1-9]`).MatchString(text) {
		t.Error("the SDK's latencies are not in second buckets")
	}
	if t.Failed() {
		t.Fatalf("metrics:\n%s", text)
	}

	// A held post shows while it waits, and leaves when denied.
	call := s.callAsync("run", actions(
		map[string]any{"op": "fill", "id": refFor(t, snap.Text, `textbox "Email"`), "value": "metrics-" + uuid.NewString()[:8] + "@example.com"},
		map[string]any{"op": "click", "id": refFor(t, snap.Text, `button "Create account"`)},
	))
	var hold contract.Hold
	harness.Eventually(t, 60*time.Second, func() bool {
		for _, h := range state(t, s.id).Holds {
			if h.Decision == "" {
				hold = h
				return true
			}
		}
		return false
	}, "no hold appeared")
	if v := metricValue(scrape(t, url), "durable_browser_held_requests"); v != 1 {
		t.Fatalf("held_requests = %v while a post is held, want 1", v)
	}
	signal(t, s.id, contract.SignalApproval, contract.ApprovalSignal{HoldID: hold.HoldID, Decision: contract.DecisionDeny, By: "metrics"})
	receive(t, call)
	if v := metricValue(scrape(t, url), "durable_browser_held_requests"); v != 0 {
		t.Fatalf("held_requests = %v after the decision, want 0", v)
	}

	// A handoff shows until it is answered.
	handoff := s.callAsync("browser_request_handoff", map[string]any{"instruction": "Look at the form", "completion_condition": map[string]any{"text": "Sign up"}})
	harness.Eventually(t, 60*time.Second, func() bool {
		return metricValue(scrape(t, url), "durable_browser_pending_handoffs") == 1
	}, "pending_handoffs never reached 1")
	p := pending(t, s.id)
	signal(t, s.id, contract.SignalHandoff, contract.HandoffSignal{RequestID: p.RequestID, Outcome: contract.OutcomeCancelled, By: "metrics"})
	receive(t, handoff)
	s.must("snapshot", map[string]any{}, &snap) // the next call clears the person's hold
	if v := metricValue(scrape(t, url), "durable_browser_pending_handoffs"); v != 0 {
		t.Fatalf("pending_handoffs = %v after the handoff, want 0", v)
	}
	if strings.Contains(scrape(t, url), "hunter2") {
		t.Fatal("a page value reached the metrics")
	}
}
