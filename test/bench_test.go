package test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/durable-browser/durable-browser/activities"
	"github.com/durable-browser/durable-browser/internal/driver"
	"github.com/durable-browser/durable-browser/providers"
	"github.com/durable-browser/durable-browser/providers/local"
	"github.com/durable-browser/durable-browser/test/harness"
	"github.com/durable-browser/durable-browser/workflows"
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
	if _, err := br.Run(ctx, []driver.Action{{Op: "goto", URL: env.Demo.URL() + benchPage}}); err != nil {
		b.Fatal(err)
	}
	return br
}

func BenchmarkSnapshotDirect(b *testing.B) {
	br := directBrowser(b)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := br.Snapshot(ctx, driver.SnapshotOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFillClickDirect(b *testing.B) {
	br := directBrowser(b)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		snap, err := br.Snapshot(ctx, driver.SnapshotOptions{Mode: "interactive"})
		if err != nil {
			b.Fatal(err)
		}
		field, button := refFor(b, snap.Text, `textbox "Note"`), refFor(b, snap.Text, `button "Check"`)
		b.StartTimer()
		if _, err := br.Run(ctx, []driver.Action{{Op: "fill", ID: field, Value: "hello"}, {Op: "click", ID: button}}); err != nil {
			b.Fatal(err)
		}
	}
}

func benchSession(b *testing.B) *session {
	b.Helper()
	env.StartWorker(b, harness.WorkerOptions{})
	s := &session{id: "bench-" + time.Now().Format("150405.000000")}
	b.Cleanup(func() {
		_ = env.Client.SignalWorkflow(context.Background(), s.id, "", workflows.SignalClose, nil)
	})
	benchCall(b, s, "run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + benchPage}))
	return s
}

func benchCall(b *testing.B, s *session, tool string, args any) json.RawMessage {
	raw, _ := json.Marshal(args)
	out, err := workflows.Call(context.Background(), env.Client, s.id, workflows.ToolCall{Name: tool, Args: raw}, workflows.CallOptions{Config: s.cfg})
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
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		benchCall(b, s, "snapshot", map[string]any{})
	}
}

func BenchmarkFillClickThroughTemporal(b *testing.B) {
	s := benchSession(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		var snap activities.SnapshotResult
		_ = json.Unmarshal(benchCall(b, s, "snapshot", map[string]any{"mode": "interactive"}), &snap)
		field, button := refFor(b, snap.Text, `textbox "Note"`), refFor(b, snap.Text, `button "Check"`)
		b.StartTimer()
		benchCall(b, s, "run", actions(map[string]any{"op": "fill", "id": field, "value": "hello"}, map[string]any{"op": "click", "id": button}))
	}
}
