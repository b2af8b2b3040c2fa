package test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-rod/rod/lib/input"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/recorder"
	"github.com/durable-browser/durable-browser/test/harness"
	"github.com/durable-browser/durable-browser/workflows"
)

// The live view and the recorder each open their own DevTools session on
// the page and screencast it: on one recorded session with the live view
// on, frames keep reaching both the viewer's canvas and the recording, and
// a person's typing through the viewer reaches the page.
func TestLiveViewWhileRecording(t *testing.T) {
	// livePage (the Name field at fixed places) with a counter redrawn on
	// every animation frame, so both screencasts get frames all along.
	page := strings.Replace(livePage, "</body>", `<h1 id="n" style="position:absolute;left:600px;top:40px;margin:0">0</h1>
<script>let n = 0; (function tick() { n++; document.getElementById('n').textContent = String(n); requestAnimationFrame(tick); })();</script></body>`, 1)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	}))
	t.Cleanup(site.Close)
	lv := liveWorker(t)
	s := newSession(t, workflows.SessionConfig{Session: contract.SessionOptions{Record: true}})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	s.must("run", actions(map[string]any{"op": "goto", "url": site.URL + "/"}), nil)
	tag := tagOf(t, s)
	waitForFrame(t, ctx, s.id, 0, "the recording kept no frame before the viewer opened")

	addr, ok := lv.URL(tag)
	if !ok {
		t.Fatalf("no live view for session %s", tag)
	}
	p := newPerson(t)
	p.page = p.open(addr)
	frames := func() int { n, _ := strconv.Atoi(data(t, p.page, "frames")); return n }
	harness.Eventually(t, 30*time.Second, func() bool { return frames() > 0 }, "no frame reached the viewer's canvas of a recorded session")
	opened := time.Now().UnixMilli()
	// Both screencasts go on at once: the recording keeps frames drawn
	// after the viewer had its first, and the viewer keeps getting more.
	seen := frames()
	waitForFrame(t, ctx, s.id, opened, "the recording kept no frame once the viewer was streaming")
	harness.Eventually(t, 30*time.Second, func() bool { return frames() > seen }, "the viewer stopped getting frames while the recorder ran (%d)", seen)

	// The person types through the viewer into the page.
	p.takeOver(lv, tag)
	p.click(240, 185) // the Name field
	if err := p.page.Keyboard.Type([]input.Key("hello")...); err != nil {
		t.Fatal(err)
	}
	typed := time.Now().UnixMilli()
	harness.Eventually(t, 20*time.Second, func() bool { return data(t, p.page, "takenOver") == "true" }, "the viewer never showed Give back")
	p.pressTake() // now "Give back"
	harness.Eventually(t, 20*time.Second, func() bool { return !lv.Hands(tag).State().TakenOver }, "Give back did not reach the server")
	// The agent is refused for the person's last 3 s of input; then its
	// snapshot shows what they typed.
	var snap contract.SnapshotResult
	harness.Eventually(t, 60*time.Second, func() bool {
		out, ok := s.call("snapshot", map[string]any{})
		if ok {
			if err := json.Unmarshal(out, &snap); err != nil {
				t.Fatal(err)
			}
			return true
		}
		var f contract.Failure
		if err := json.Unmarshal(out, &f); err != nil || f.Reason != contract.ReasonPersonDriving {
			t.Fatalf("snapshot after the person drove: %s", out)
		}
		return false
	}, "the agent stayed refused")
	if !strings.Contains(snap.Text, "echo: hello") {
		t.Fatalf("typing through the viewer did not reach the page of a recorded session: %s", snap.Text)
	}
	waitForFrame(t, ctx, s.id, typed, "the recording kept no frame after the person typed")
	s.must("browser_release", map[string]any{}, nil)

	chunks, err := recorder.Load(ctx, env.Store, s.id)
	if err != nil {
		t.Fatal(err)
	}
	var before, during, ended = 0, 0, ""
	for _, c := range chunks {
		for _, f := range c.Frames {
			if f.T < opened {
				before++
			} else {
				during++
			}
		}
		if c.End != "" {
			ended = c.End
		}
	}
	t.Logf("%d chunks: %d frames before the viewer opened, %d with it open; viewer drew %d; gaps %+v", len(chunks), before, during, frames(), gapsOf(chunks))
	if before == 0 || during == 0 {
		t.Errorf("want kept frames before and while the viewer streamed, got %d and %d", before, during)
	}
	if ended != recorder.GapReleased {
		t.Errorf("the recording ended %q, want %q", ended, recorder.GapReleased)
	}
}
