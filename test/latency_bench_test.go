package test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
)

// A call's own latency (docs/benchmarks.md, "A call's own latency"): a
// snapshot of a small page through the CLI, as a person or an agent's
// shell runs it (a new process, its connection and the call), and from the
// MCP server's open connection; and a click that navigates, answered with
// the new page. Each reports p50 and p95 beside Go's mean.

// BenchmarkCallCLI runs `durable-browser call <id> snapshot` on a session
// showing counter.html: the whole process, start to exit.
func BenchmarkCallCLI(b *testing.B) {
	s := benchSession(b)
	var p percentiles
	for b.Loop() {
		t0 := time.Now()
		cmd := exec.Command(env.Bin, "call", "--address", env.Temporal.Address(), "--namespace", "default", s.id, "snapshot")
		out, err := cmd.Output()
		p.add(time.Since(t0))
		if err != nil || !strings.Contains(string(out), `"ok": true`) {
			b.Fatalf("durable-browser call: %v\n%s", err, out)
		}
	}
	p.report(b)
}

// BenchmarkCallMCP sends tools/call snapshot on an open stdio connection to
// `durable-browser mcp --session <id>`: from the request to its answer.
func BenchmarkCallMCP(b *testing.B) {
	s := benchSession(b)
	srv := startMCPStdio(b, nil, "--session", s.id)
	ctx := context.Background()
	call := func() *mcp.CallToolResult {
		res, err := srv.cs.CallTool(ctx, &mcp.CallToolParams{Name: "snapshot", Arguments: map[string]any{}})
		if err != nil {
			b.Fatalf("tools/call: %v\n%s", err, srv.stderr)
		}
		if res.IsError {
			b.Fatalf("snapshot failed: %+v", res.Content)
		}
		return res
	}
	call() // the server's own connection to Temporal is made on its first call
	var p percentiles
	for b.Loop() {
		t0 := time.Now()
		call()
		p.add(time.Since(t0))
	}
	p.report(b)
}

// BenchmarkClickNavigateThroughTemporal clicks the demo home page's About
// link with observe, through a session: the answer carries the new page's
// listing. Loading the home page again between clicks is not timed.
func BenchmarkClickNavigateThroughTemporal(b *testing.B) {
	s := benchSession(b)
	home := actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/"})
	click := actions(map[string]any{"op": "click", "locator": map[string]any{"role": "link", "name": "About"}})
	click["observe"] = "interactive"
	var p percentiles
	for b.Loop() {
		b.StopTimer()
		benchCall(b, s, "run", home)
		b.StartTimer()
		t0 := time.Now()
		out := benchCall(b, s, "run", click)
		p.add(time.Since(t0))
		var res struct {
			URL      string `json:"url"`
			Observed struct {
				Text string `json:"text"`
			} `json:"observed"`
		}
		if err := json.Unmarshal(out, &res); err != nil || !strings.HasSuffix(res.URL, "/about.html") || !strings.Contains(res.Observed.Text, `link "Back home"`) {
			b.Fatalf("the answer does not show the new page: %s", out)
		}
	}
	p.report(b)
}

// BenchmarkCallPhases splits a snapshot call through Temporal by its
// session's history: each event's time after the one before it in the same
// call (p50 over the calls, as <n>-<event>-ms), and from the last event to
// the answer reaching the caller. Where a call's time goes, for
// docs/benchmarks.md ("A call's own latency").
func BenchmarkCallPhases(b *testing.B) {
	s := benchSession(b)
	type span struct{ t0, t1 time.Time }
	var calls []span
	for b.Loop() {
		t0 := time.Now()
		benchCall(b, s, "snapshot", map[string]any{})
		calls = append(calls, span{t0, time.Now()})
	}
	b.StopTimer()
	var events []*historypb.HistoryEvent
	it := env.Client.GetWorkflowHistory(context.Background(), s.id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			b.Fatal(err)
		}
		events = append(events, e)
	}
	phases := map[string]*percentiles{}
	add := func(name string, d time.Duration) {
		if phases[name] == nil {
			phases[name] = &percentiles{}
		}
		phases[name].add(d)
	}
	for _, c := range calls {
		prev, n := c.t0, 0
		for _, e := range events {
			t := e.GetEventTime().AsTime()
			if t.Before(c.t0) || t.After(c.t1) {
				continue
			}
			n++
			add(fmt.Sprintf("%02d-%s", n, strings.TrimPrefix(e.GetEventType().String(), "EVENT_TYPE_")), t.Sub(prev))
			prev = t
		}
		add("zz-answer", c.t1.Sub(prev))
	}
	for name, p := range phases {
		sorted := slices.Clone(*p)
		slices.Sort(sorted)
		b.ReportMetric(float64(sorted[len(sorted)/2])/1e6, name+"-ms")
	}
	var all percentiles
	for _, c := range calls {
		all.add(c.t1.Sub(c.t0))
	}
	all.report(b)
}
