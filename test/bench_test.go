package test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	dbclient "github.com/durable-browser/durable-browser/client"

	"github.com/rs/zerolog"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/driver"
	"github.com/durable-browser/durable-browser/providers"
	"github.com/durable-browser/durable-browser/providers/local"
	"github.com/durable-browser/durable-browser/test/harness"
	"github.com/durable-browser/durable-browser/worker"
)

// The cost of going through Temporal: the same snapshot and the same
// fill+click, as direct driver calls and as tool calls on a BrowserSession
// on the embedded server. The difference per call is the overhead.

const benchPage = "/counter.html"

func directBrowser(b *testing.B) *driver.Browser {
	b.Helper()
	root, _ := os.MkdirTemp(env.Dir, "bench-")
	p, err := local.New(local.Options{ProfileRoot: root, BootID: "bench", Logger: zerolog.Nop()})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	sess, err := p.Create(ctx, providers.CreateOptions{Tag: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Release(context.Background(), "bench"); harness.KillUnder(root) })
	br, err := driver.Attach(ctx, driver.Options{CDPURL: sess.CDPURL, DownloadDir: filepath.Join(root, "dl")})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = br.Close() })
	if _, err := br.Run(ctx, []driver.Action{{Op: "goto", URL: env.Demo.URL() + benchPage}}, driver.RunOptions{}); err != nil {
		b.Fatal(err)
	}
	return br
}

func BenchmarkSnapshotDirect(b *testing.B) {
	br := directBrowser(b)
	ctx := context.Background()
	var p percentiles
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := br.Snapshot(ctx, driver.SnapshotOptions{}); err != nil {
			b.Fatal(err)
		}
		p.add(time.Since(t0))
	}
	p.report(b)
}

// percentiles collects per-call times so benchmarks report the p50 the
// targets are stated in, beside Go's mean.
type percentiles []time.Duration

func (p *percentiles) add(d time.Duration) { *p = append(*p, d) }

func (p percentiles) report(b *testing.B) {
	if len(p) == 0 {
		return
	}
	sorted := append(percentiles(nil), p...)
	slices.Sort(sorted)
	b.ReportMetric(float64(sorted[len(sorted)/2])/1e6, "p50-ms")
	b.ReportMetric(float64(sorted[len(sorted)*9/10])/1e6, "p90-ms")
	b.ReportMetric(float64(sorted[len(sorted)*95/100])/1e6, "p95-ms")
}

func BenchmarkFillClickDirect(b *testing.B) {
	br := directBrowser(b)
	ctx := context.Background()
	var p percentiles
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		snap, err := br.Snapshot(ctx, driver.SnapshotOptions{Mode: "interactive"})
		if err != nil {
			b.Fatal(err)
		}
		field, button := refFor(b, snap.Text, `textbox "Note"`), refFor(b, snap.Text, `button "Check"`)
		b.StartTimer()
		t0 := time.Now()
		if _, err := br.Run(ctx, []driver.Action{{Op: "fill", ID: field, Value: "hello"}, {Op: "click", ID: button}}, driver.RunOptions{}); err != nil {
			b.Fatal(err)
		}
		p.add(time.Since(t0))
	}
	p.report(b)
}

// benchWorker is one worker for every benchmark: Go runs a benchmark
// function several times, and a worker stopped between runs leaves polls the
// server may still hand a task to, which would be measured as overhead.
var benchWorker struct {
	once sync.Once
	w    *worker.Worker
	err  error
}

func startBenchWorker(b *testing.B) {
	benchWorker.once.Do(func() { benchWorker.w, benchWorker.err = env.NewWorker(harness.WorkerOptions{}) })
	if benchWorker.err != nil {
		b.Fatal(benchWorker.err)
	}
}

// stopBenchWorker is called by TestMain once every test and benchmark ran.
func stopBenchWorker() {
	if benchWorker.w != nil {
		benchWorker.w.Stop()
	}
}

func benchSession(b *testing.B) *session {
	b.Helper()
	startBenchWorker(b)
	s := &session{id: "bench-" + time.Now().Format("150405.000000")}
	b.Cleanup(func() {
		_ = env.Client.SignalWorkflow(context.Background(), s.id, "", contract.SignalClose, nil)
	})
	benchCall(b, s, "run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + benchPage}))
	// Warm up: the first calls pay for caches and connections.
	for i := 0; i < 3; i++ {
		benchCall(b, s, "snapshot", map[string]any{})
	}
	return s
}

func benchCall(b *testing.B, s *session, tool string, args any) json.RawMessage {
	raw, _ := json.Marshal(args)
	out, err := dbclient.Call(context.Background(), env.Client, s.id, contract.ToolCall{Name: tool, Args: raw}, dbclient.CallOptions{Config: s.cfg})
	if err != nil {
		b.Fatal(err)
	}
	var head struct {
		OK bool `json:"ok"`
	}
	_ = json.Unmarshal(out, &head)
	if !head.OK {
		b.Fatalf("%s: %s", tool, out)
	}
	return out
}

func BenchmarkSnapshotThroughTemporal(b *testing.B) {
	s := benchSession(b)
	var p percentiles
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		benchCall(b, s, "snapshot", map[string]any{})
		p.add(time.Since(t0))
	}
	p.report(b)
}

func BenchmarkFillClickThroughTemporal(b *testing.B) {
	s := benchSession(b)
	var p percentiles
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		var snap contract.SnapshotResult
		_ = json.Unmarshal(benchCall(b, s, "snapshot", map[string]any{"mode": "interactive"}), &snap)
		field, button := refFor(b, snap.Text, `textbox "Note"`), refFor(b, snap.Text, `button "Check"`)
		b.StartTimer()
		t0 := time.Now()
		benchCall(b, s, "run", actions(map[string]any{"op": "fill", "id": field, "value": "hello"}, map[string]any{"op": "click", "id": button}))
		p.add(time.Since(t0))
	}
	p.report(b)
}

// floorWorkflow answers an Update by running one empty activity on another
// task queue: the least a tool call through Temporal can cost here.
func floorWorkflow(ctx workflow.Context) error {
	err := workflow.SetUpdateHandler(ctx, "call", func(ctx workflow.Context) (string, error) {
		actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{TaskQueue: "floor-host", StartToCloseTimeout: time.Minute})
		var s string
		err := workflow.ExecuteActivity(actx, "floor.noop").Get(ctx, &s)
		return s, err
	})
	if err != nil {
		return err
	}
	return workflow.Await(ctx, func() bool { return false })
}

var floorWorkers struct {
	once         sync.Once
	shared, host sdkworker.Worker
	err          error
}

// BenchmarkTemporalFloor is the floor under the ThroughTemporal benchmarks:
// an Update plus one no-op activity on a second queue, with no browser.
func BenchmarkTemporalFloor(b *testing.B) {
	floorWorkers.once.Do(func() {
		floorWorkers.shared = sdkworker.New(env.Client, "floor-shared", sdkworker.Options{})
		floorWorkers.shared.RegisterWorkflowWithOptions(floorWorkflow, workflow.RegisterOptions{Name: "floorWorkflow"})
		floorWorkers.host = sdkworker.New(env.Client, "floor-host", sdkworker.Options{})
		floorWorkers.host.RegisterActivityWithOptions(func(context.Context) (string, error) { return "ok", nil }, activity.RegisterOptions{Name: "floor.noop"})
		if floorWorkers.err = floorWorkers.shared.Start(); floorWorkers.err == nil {
			floorWorkers.err = floorWorkers.host.Start()
		}
	})
	if floorWorkers.err != nil {
		b.Fatal(floorWorkers.err)
	}
	ctx := context.Background()
	run, err := env.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "floor-" + time.Now().Format("150405.000000"), TaskQueue: "floor-shared"}, "floorWorkflow")
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = env.Client.TerminateWorkflow(ctx, run.GetID(), "", "benchmark done") }()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h, err := env.Client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: run.GetID(), UpdateName: "call", WaitForStage: client.WorkflowUpdateStageCompleted})
		if err != nil {
			b.Fatal(err)
		}
		var s string
		if err := h.Get(ctx, &s); err != nil {
			b.Fatal(err)
		}
	}
}

func stopFloorWorkers() {
	if floorWorkers.shared != nil {
		floorWorkers.shared.Stop()
		floorWorkers.host.Stop()
	}
}
