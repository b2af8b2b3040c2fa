package test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"testing"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/demosite"
	"github.com/durable-browser/durable-browser/test/harness"
	"github.com/durable-browser/durable-browser/workflows"
)

// One code cell against the same work as separate tool calls: collect every
// row of the demo site's orders table. Reported per collection: tool calls,
// characters the model sends and reads (arguments plus answers), tokens
// estimated as characters / 4, and wall time (ns/op). Rerun with
//
//	go test -run '^$' -bench 'BenchmarkTable' -benchtime 5x ./test/
var (
	rowRe  = regexp.MustCompile(`row "(A-\d+[^"]*)"`)
	nextRe = regexp.MustCompile(`\[(\d+)\] link "Next"`)
)

type tally struct{ calls, chars int }

func (tl *tally) call(b *testing.B, s *session, tool string, args any) json.RawMessage {
	b.Helper()
	raw, _ := json.Marshal(args)
	out, ok := s.call(tool, args)
	if !ok {
		b.Fatalf("%s failed: %s", tool, out)
	}
	tl.calls++
	tl.chars += len(raw) + len(out)
	return out
}

func (tl tally) report(b *testing.B) {
	b.ReportMetric(float64(tl.calls)/float64(b.N), "calls/op")
	b.ReportMetric(float64(tl.chars)/float64(b.N), "chars/op")
	b.ReportMetric(float64(tl.chars)/4/float64(b.N), "tokens/op")
}

func BenchmarkTableSeparateCalls(b *testing.B) {
	env.StartWorker(b, harness.WorkerOptions{})
	s := newSession(b, workflows.SessionConfig{})
	var tl tally
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var rows []string
		tl.call(b, s, "run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/table"}))
		for {
			var snap contract.SnapshotResult
			_ = json.Unmarshal(tl.call(b, s, "snapshot", map[string]any{}), &snap)
			for _, m := range rowRe.FindAllStringSubmatch(snap.Text, -1) {
				rows = append(rows, m[1])
			}
			next := nextRe.FindStringSubmatch(snap.Text)
			if next == nil {
				break
			}
			tl.call(b, s, "run", actions(map[string]any{"op": "click", "id": next[1]}))
		}
		if len(rows) != len(demosite.TableRows()) {
			b.Fatalf("%d rows", len(rows))
		}
	}
	b.StopTimer()
	tl.report(b)
}

func BenchmarkTableOneCell(b *testing.B) {
	env.StartWorker(b, harness.WorkerOptions{})
	s := newSession(b, workflows.SessionConfig{})
	var tl tally
	src := code(fmt.Sprintf(pageTable, env.Demo.URL()+"/table"))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var res contract.RunResult
		_ = json.Unmarshal(tl.call(b, s, "run", src), &res)
		var rows []string
		if json.Unmarshal(res.Output, &rows) != nil || len(rows) != len(demosite.TableRows()) {
			b.Fatalf("output %s", res.Output)
		}
	}
	b.StopTimer()
	tl.report(b)
}
