package test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	dbclient "github.com/durable-browser/durable-browser/client"
	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/recorder"
	"github.com/durable-browser/durable-browser/test/harness"
	"github.com/durable-browser/durable-browser/workflows"
)

// tickPage animates a counter on every animation frame, so the screencast
// sends frames all along.
const tickPage = `<!doctype html><html><head><title>Recorder tick</title></head><body>
<h1 id="n">0</h1>
<script>
let n = 0;
(function tick() { n++; document.getElementById('n').textContent = String(n); requestAnimationFrame(tick); })();
</script></body></html>`

// A recorded session whose worker process is killed (SIGKILL) after its
// recording filed a chunk: the next call is served by a new browser on
// another worker, which records on. The index shows the first recording
// ended lost_worker, a lost_worker gap from its last filed chunk, then the
// new recording's frames.
func TestRecorderLostWorkerGap(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, tickPage)
	}))
	t.Cleanup(site.Close)
	p := env.StartWorkerProcess(t, harness.ProcessOptions{})
	s := newSession(t, workflows.SessionConfig{Session: contract.SessionOptions{Record: true}})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	s.must("run", actions(map[string]any{"op": "goto", "url": site.URL + "/"}), nil)
	st, err := dbclient.State(ctx, env.Client, s.id)
	if err != nil || st.HostQueue != p.HostQueue() {
		t.Fatalf("the session should live on the worker process: state %+v err %v, process queue %s", st, err, p.HostQueue())
	}
	oldTag := st.Tag
	waitForFrame(t, ctx, s.id, 0, "the first recording filed no frame before its worker was killed")

	// The rest of the fleet takes the session's next browser.
	env.StartWorker(t, harnessDefaults())
	p.Kill()
	killed := time.Now().UnixMilli()

	if f := s.failure("snapshot", map[string]any{}); f.Code != contract.CodeSessionReplaced {
		t.Fatalf("a call after the worker was killed should answer session_replaced, got %+v", f)
	}
	s.must("run", actions(map[string]any{"op": "goto", "url": site.URL + "/"}), nil)
	st, err = dbclient.State(ctx, env.Client, s.id)
	if err != nil || st.Tag == oldTag || st.HostQueue == p.HostQueue() {
		t.Fatalf("the session should have moved to a new browser on another worker: %+v err %v", st, err)
	}
	waitForFrame(t, ctx, s.id, killed, "the new browser's recording filed no frame")
	s.must("browser_release", map[string]any{}, nil)

	chunks, err := recorder.Load(ctx, env.Store, s.id)
	if err != nil {
		t.Fatal(err)
	}
	x := recorder.Build(s.id, chunks)
	if len(x.Recordings) != 2 {
		t.Fatalf("want two recordings (before and after the kill), got %+v", x.Recordings)
	}
	first, second := x.Recordings[0], x.Recordings[1]
	if first.SessionTag != oldTag || second.SessionTag != st.Tag {
		t.Errorf("recordings of sessions %s and %s, want %s then %s", first.SessionTag, second.SessionTag, oldTag, st.Tag)
	}
	if first.Ended != recorder.GapLostWorker || second.Ended != recorder.GapReleased {
		t.Errorf("recordings ended %q and %q, want %q and %q", first.Ended, second.Ended, recorder.GapLostWorker, recorder.GapReleased)
	}
	// In order: frames of the first recording, the lost_worker gap from its
	// end to the second's start, then frames of the second.
	gap := -1
	for i, sg := range x.Segments {
		if sg.Kind == "gap" && sg.Reason == recorder.GapLostWorker {
			gap = i
			break
		}
	}
	if gap < 0 {
		t.Fatalf("no lost_worker gap in the index: %+v", x.Segments)
	}
	g := x.Segments[gap]
	if g.At != first.End || g.At+g.Dur < second.Start {
		t.Errorf("the lost_worker gap covers %d..%d ms, want from the first recording's end %d to at least the second's start %d", g.At, g.At+g.Dur, first.End, second.Start)
	}
	var before, after int
	for i, sg := range x.Segments {
		if sg.Kind != "frame" {
			continue
		}
		switch {
		case i < gap && sg.Recording == first.ID:
			before++
		case i > gap && sg.Recording == second.ID:
			after++
		default:
			t.Errorf("frame segment %d (%+v) is on the wrong side of the lost_worker gap (segment %d)", i, sg, gap)
		}
	}
	if before == 0 || after == 0 {
		t.Errorf("want frames before and after the lost_worker gap, got %d and %d", before, after)
	}
	t.Logf("recordings %+v; lost_worker gap %+v; %d frames before, %d after", x.Recordings, g, before, after)
}
