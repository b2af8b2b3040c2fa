package test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/evidence"
	"github.com/durable-browser/durable-browser/internal/recorder"
	"github.com/durable-browser/durable-browser/internal/redact"
	"github.com/durable-browser/durable-browser/test/harness"
	"github.com/durable-browser/durable-browser/workflows"
)

// recorderPage animates a counter on every animation frame (so the
// screencast sends frames all along) and measures, from the page, when its
// password field held a value: from the first keydown in it until the page
// clears it itself, 1.5 s after the first input.
const recorderPage = `<!doctype html><html><head><title>Recorder test</title></head><body>
<h1 id="n">0</h1>
<label>Password <input id="pw" name="password" type="password"></label>
<p id="log">waiting</p>
<script>
let n = 0, start = 0, cleared = false;
(function tick() { n++; document.getElementById('n').textContent = String(n); requestAnimationFrame(tick); })();
const pw = document.getElementById('pw');
pw.addEventListener('keydown', () => { if (!start) start = Date.now(); }, true);
pw.addEventListener('input', () => {
  if (cleared || pw.dataset.armed) return;
  pw.dataset.armed = '1';
  setTimeout(() => { pw.value = ''; const end = Date.now(); cleared = true;
    document.getElementById('log').textContent = 'held ' + start + ' ' + end; }, 1500);
});
</script></body></html>`

// A password typed into a recorded page leaves a gap, not a frame: no kept
// frame's timestamp falls inside the interval the page measured; frames are
// kept before and after it. The session exports to a WebM ffprobe reads,
// whose duration and frame count match its index, and the screenshots'
// receipts carry offsets that fall before and after the gap.
func TestRecorderPasswordGapAndExport(t *testing.T) {
	recorderPasswordGap(t, recorderPage)
}

// The same with the password field inside an open shadow root inside a
// same-origin frame: the guard looks into both.
func TestRecorderPasswordInShadowFrame(t *testing.T) {
	recorderPasswordGap(t, shadowFramePage)
}

// shadowFramePage holds recorderPage's field in an open shadow root of a
// same-origin (srcdoc) frame; the frame writes the interval into the page.
const shadowFramePage = `<!doctype html><html><head><title>Recorder shadow test</title></head><body>
<h1 id="n">0</h1>
<iframe id="f" style="width:600px;height:120px" srcdoc="<!doctype html><body><div id=host></div><script>
const root = document.getElementById('host').attachShadow({mode: 'open'});
root.innerHTML = '<label>Password <input id=pw name=password type=password></label>';
const pw = root.getElementById('pw'); let start = 0, armed = false;
pw.addEventListener('keydown', () => { if (!start) start = Date.now(); }, true);
pw.addEventListener('input', () => { if (armed) return; armed = true;
  setTimeout(() => { pw.value = ''; parent.document.getElementById('log').textContent = 'held ' + start + ' ' + Date.now(); }, 1500); });
</script></body>"></iframe>
<p id="log">waiting</p>
<script>
let n = 0;
(function tick() { n++; document.getElementById('n').textContent = String(n); requestAnimationFrame(tick); })();
</script></body></html>`

func recorderPasswordGap(t *testing.T, page string) {
	if _, err := exec.LookPath("ffprobe"); err != nil {
		t.Fatalf("ffprobe not found: run scripts/install-ffmpeg.sh (%v)", err)
	}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	}))
	t.Cleanup(site.Close)
	env.StartWorker(t, harnessDefaults())
	s := newSession(t, workflows.SessionConfig{Session: contract.SessionOptions{Record: true}})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	s.must("run", actions(map[string]any{"op": "goto", "url": site.URL + "/"}), nil)
	var before contract.ScreenshotResult
	s.must("screenshot", map[string]any{}, &before)
	var snap contract.SnapshotResult
	s.must("snapshot", map[string]any{}, &snap)
	pw := refFor(t, snap.Text, "Password")
	waitForFrame(t, ctx, s.id, 0, "the recording kept no frame of the page")
	s.must("run", actions(map[string]any{"op": "type", "id": pw, "text": "hunter2-correct-horse"}), nil)

	// The page clears the field itself and writes down when it held a value.
	from, to := pageInterval(t, s, "held", "the page never cleared its password field")
	// Capture resumes once the field is clean: the first frame kept after
	// a gap is filed at once.
	waitForFrame(t, ctx, s.id, to, "no frame was kept after the password field was cleared")
	var after contract.ScreenshotResult
	s.must("screenshot", map[string]any{}, &after)
	var rel contract.ReleaseResult
	s.must("browser_release", map[string]any{}, &rel)

	chunks, err := recorder.Load(ctx, env.Store, s.id)
	if err != nil {
		for _, line := range strings.Split(env.Log.String(), "\n") {
			if strings.Contains(line, "record") || strings.Contains(line, "session created") {
				t.Log(line)
			}
		}
		h := historyJSON(t, s.id)
		for _, m := range regexp.MustCompile(`"data":"([A-Za-z0-9+/=]+)"`).FindAllStringSubmatch(h, -1) {
			if d, err := base64.StdEncoding.DecodeString(m[1]); err == nil && strings.Contains(string(d), "options") {
				t.Log(string(d))
			}
		}
		t.Fatal(err)
	}
	var frames, beforeN, afterN int
	var gapCovers bool
	ended := ""
	for _, c := range chunks {
		for _, f := range c.Frames {
			frames++
			if f.T >= from && f.T <= to {
				t.Errorf("frame at %d is inside the interval %d..%d in which the password field held a value", f.T, from, to)
			}
			if f.T < from {
				beforeN++
			} else if f.T > to {
				afterN++
			}
			if f.Width > recorder.MaxWidth {
				t.Errorf("frame %d px wide, over %d", f.Width, recorder.MaxWidth)
			}
		}
		for _, g := range c.Gaps {
			if g.From <= from && g.To >= to && g.Reason == recorder.GapCredential {
				gapCovers = true
			}
		}
		if c.End != "" {
			ended = c.End
		}
	}
	t.Logf("%d chunks, %d frames (%d before the password, %d after); interval %d..%d", len(chunks), frames, beforeN, afterN, from, to)
	if !gapCovers {
		t.Errorf("no credential gap covers %d..%d: %+v", from, to, gapsOf(chunks))
	}
	if beforeN == 0 || afterN == 0 {
		t.Errorf("want frames both before and after the password (%d before, %d after)", beforeN, afterN)
	}
	if ended != recorder.GapReleased {
		t.Errorf("the recording ended %q, want %q", ended, recorder.GapReleased)
	}

	// Receipts carry where they fall in the recording.
	marks := map[string]*contract.RecordingMark{}
	for name, cc := range map[string]contract.ClaimCheck{"before": before.Evidence, "after": after.Evidence} {
		b, _, err := env.Store.Get(ctx, evidence.ReceiptKey(cc.Key))
		if err != nil {
			t.Fatal(err)
		}
		var rec contract.Receipt
		if err := json.Unmarshal(b, &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Recording == nil || rec.Recording.Recording != chunks[0].Recording {
			t.Fatalf("%s screenshot's receipt has no mark of recording %s: %+v", name, chunks[0].Recording, rec.Recording)
		}
		marks[name] = rec.Recording
	}
	start := chunks[0].Start
	if b, a := start+marks["before"].OffsetMS, start+marks["after"].OffsetMS; b >= from || a <= to {
		t.Errorf("receipt marks at %d and %d, want before %d and after %d", b, a, from, to)
	}

	// Export through the CLI, as an operator would.
	dir := t.TempDir()
	out := filepath.Join(dir, "run.webm")
	cmd := exec.CommandContext(ctx, env.Bin, "recording", "get", "--s3-bucket", env.S3.Bucket(), "--s3-prefix", "evidence",
		"--s3-endpoint", env.S3.Endpoint(), "--s3-path-style", "--s3-region", "us-east-1", s.id, "-o", out)
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID="+env.S3.AccessKey(), "AWS_SECRET_ACCESS_KEY="+env.S3.SecretKey(), "AWS_EC2_METADATA_DISABLED=true")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("recording get: %v\n%s", err, b)
	}
	var x recorder.Index
	ib, err := os.ReadFile(filepath.Join(dir, "run.index.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(ib, &x); err != nil {
		t.Fatal(err)
	}
	var kept int
	for _, sg := range x.Segments {
		if sg.Kind == "frame" {
			kept++
		}
	}
	if kept != frames {
		t.Errorf("the index shows %d frames, the chunks hold %d; gaps %+v", kept, frames, gapsOf(chunks))
		for _, c := range chunks {
			for _, f := range c.Frames {
				t.Logf("frame %d", f.T)
			}
		}
		for _, sg := range x.Segments {
			t.Logf("segment %+v", sg)
		}
	}
	probe, err := exec.CommandContext(ctx, "ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0",
		"-show_entries", "stream=nb_read_frames:format=duration", "-of", "json", out).Output()
	if err != nil {
		t.Fatalf("ffprobe: %v", err)
	}
	var p struct {
		Streams []struct {
			Frames string `json:"nb_read_frames"`
		} `json:"streams"`
		Format struct {
			Duration string `json:"duration"`
		} `json:"format"`
	}
	if err := json.Unmarshal(probe, &p); err != nil || len(p.Streams) != 1 {
		t.Fatalf("ffprobe output %s: %v", probe, err)
	}
	dur, _ := strconv.ParseFloat(p.Format.Duration, 64)
	n, _ := strconv.Atoi(p.Streams[0].Frames)
	if n != x.Frames || dur*1000 < float64(x.VideoMS-100) || dur*1000 > float64(x.VideoMS+100) {
		t.Errorf("the WebM has %d frames over %.3f s; its index says %d frames over %d ms", n, dur, x.Frames, x.VideoMS)
	}
	// The receipts' seconds of video: before the slate, and after it.
	vb, ok1 := x.VideoAtMark(marks["before"].Recording, marks["before"].OffsetMS)
	va, ok2 := x.VideoAtMark(marks["after"].Recording, marks["after"].OffsetMS)
	if !ok1 || !ok2 || vb >= va || va > x.VideoMS {
		t.Errorf("receipts map to video %d ms and %d ms (of %d)", vb, va, x.VideoMS)
	}
}

func gapsOf(chunks []*recorder.Chunk) []recorder.Gap {
	var out []recorder.Gap
	for _, c := range chunks {
		out = append(out, c.Gaps...)
	}
	return out
}

// secretPage animates like recorderPage; its Name field is no credential
// field, so only the recorder's knowledge that a secret is being typed keeps
// it out. The page notes the first keystroke and when Clear emptied it.
const secretPage = `<!doctype html><html><head><title>Recorder secret test</title></head><body>
<h1 id="n">0</h1>
<label>Name <input id="name" name="fullname" type="text"></label>
<button id="clear" type="button">Clear</button>
<p id="log">waiting</p>
<script>
let n = 0, start = 0;
(function tick() { n++; document.getElementById('n').textContent = String(n); requestAnimationFrame(tick); })();
const f = document.getElementById('name');
f.addEventListener('keydown', () => { if (!start) start = Date.now(); }, true);
document.getElementById('clear').addEventListener('click', () => {
  f.value = ''; document.getElementById('log').textContent = 'held ' + start + ' ' + Date.now();
});
</script></body></html>`

// A {{secret:NAME}} typed into a plain text field leaves a secret_typed gap
// from before the first keystroke until the field no longer shows it; no
// kept frame falls inside, and capture resumes after.
func TestRecorderSecretTypedGap(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, secretPage)
	}))
	t.Cleanup(site.Close)
	t.Setenv("DURABLE_BROWSER_SECRET_REC_NAME", "rec-secret-Value-9876")
	t.Setenv("DURABLE_BROWSER_SECRET_REC_NAME_ORIGINS", redact.OriginOf(site.URL))
	env.StartWorker(t, harnessDefaults())
	s := newSession(t, workflows.SessionConfig{Session: contract.SessionOptions{Record: true}})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	s.must("run", actions(map[string]any{"op": "goto", "url": site.URL + "/"}), nil)
	var snap contract.SnapshotResult
	s.must("snapshot", map[string]any{}, &snap)
	waitForFrame(t, ctx, s.id, 0, "the recording kept no frame of the page")
	s.must("run", actions(map[string]any{"op": "type", "id": refFor(t, snap.Text, `textbox "Name"`), "text": "{{secret:REC_NAME}}"}), nil)
	s.must("run", actions(map[string]any{"op": "click", "id": refFor(t, snap.Text, `button "Clear"`)}), nil)
	from, to := pageInterval(t, s, "held", "the page did not note the interval")
	waitForFrame(t, ctx, s.id, to, "no frame was kept after the secret was cleared")
	s.must("browser_release", map[string]any{}, nil)

	chunks, err := recorder.Load(ctx, env.Store, s.id)
	if err != nil {
		t.Fatal(err)
	}
	covered, before := false, 0
	for _, c := range chunks {
		for _, f := range c.Frames {
			if f.T >= from && f.T <= to {
				t.Errorf("frame at %d is inside %d..%d, while the secret was typed or shown", f.T, from, to)
			}
			if f.T < from {
				before++
			}
		}
		for _, g := range c.Gaps {
			if g.Reason == recorder.GapSecretTyped && g.From <= from && g.To >= to {
				covered = true
			}
		}
	}
	if !covered {
		t.Errorf("no secret_typed gap covers %d..%d: %+v", from, to, gapsOf(chunks))
	}
	if before == 0 {
		t.Error("no frame was kept before the secret was typed")
	}
}

// waitForFrame waits until the session's recording has filed a frame
// after t (unix ms): the first frame kept, and the first after a gap, are
// filed at once.
func waitForFrame(t *testing.T, ctx context.Context, workflowID string, after int64, what string) {
	t.Helper()
	harness.Eventually(t, time.Minute, func() bool {
		chunks, _ := recorder.Load(ctx, env.Store, workflowID)
		for _, c := range chunks {
			for _, f := range c.Frames {
				if f.T > after {
					return true
				}
			}
		}
		return false
	}, "%s", what)
}

// A visible cross-origin frame cannot be checked: no frame is kept while it
// shows, and capture resumes once it is gone.
func TestRecorderCrossOriginFrameGap(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><body>another origin</body>`)
	}))
	t.Cleanup(other.Close)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><head><title>Recorder frame test</title></head><body>
<h1 id="n">0</h1><button id="show" type="button">Show</button><button id="hide" type="button">Hide</button><p id="log">none</p>
<script>
let n = 0, loaded = 0;
(function tick() { n++; document.getElementById('n').textContent = String(n); requestAnimationFrame(tick); })();
document.getElementById('show').onclick = () => { const f = document.createElement('iframe'); f.id = 'x';
  f.src = %q; f.onload = () => { loaded = Date.now(); document.getElementById('log').textContent = 'loaded'; };
  document.body.appendChild(f); };
document.getElementById('hide').onclick = () => { document.getElementById('x').remove();
  document.getElementById('log').textContent = 'shown ' + loaded + ' ' + Date.now(); };
</script></body></html>`, other.URL+"/")
	}))
	t.Cleanup(site.Close)
	env.StartWorker(t, harnessDefaults())
	s := newSession(t, workflows.SessionConfig{Session: contract.SessionOptions{Record: true}})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	s.must("run", actions(map[string]any{"op": "goto", "url": site.URL + "/"}), nil)
	var snap contract.SnapshotResult
	s.must("snapshot", map[string]any{}, &snap)
	waitForFrame(t, ctx, s.id, 0, "the recording kept no frame of the page")
	s.must("run", actions(map[string]any{"op": "click", "id": refFor(t, snap.Text, `button "Show"`)}), nil)
	// Once the other origin's document has loaded in it, the frame cannot
	// be checked.
	deadline := time.Now().Add(time.Minute)
	for {
		var r contract.ReadResult
		s.must("browser_read", map[string]any{"what": "text"}, &r)
		if strings.Contains(r.Content, "loaded") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cross-origin frame never loaded: %q", r.Content)
		}
	}
	// Keep it shown until the recording has marked it (an open gap is
	// filed with the next chunk): hidden at once, it may show between two
	// screencast frames and leave nothing to mark.
	harness.Eventually(t, time.Minute, func() bool {
		chunks, _ := recorder.Load(ctx, env.Store, s.id)
		for _, c := range chunks {
			for _, g := range c.Gaps {
				if g.Reason == recorder.GapCrossOriginFrame {
					return true
				}
			}
		}
		return false
	}, "the recording never marked the shown cross-origin frame as a gap")
	s.must("run", actions(map[string]any{"op": "click", "id": refFor(t, snap.Text, `button "Hide"`)}), nil)
	from, to := pageInterval(t, s, "shown", "the page did not note when the frame showed")
	waitForFrame(t, ctx, s.id, to, "no frame was kept after the cross-origin frame was removed")
	s.must("browser_release", map[string]any{}, nil)
	chunks, err := recorder.Load(ctx, env.Store, s.id)
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, c := range chunks {
		for _, f := range c.Frames {
			if f.T >= from && f.T <= to {
				t.Errorf("frame at %d kept while the cross-origin frame showed (%d..%d)", f.T, from, to)
			}
		}
		for _, g := range c.Gaps {
			reasons = append(reasons, g.Reason)
		}
	}
	t.Logf("cross-origin frame shown %d..%d; gaps %+v", from, to, gapsOf(chunks))
	if !slices.Contains(reasons, recorder.GapCrossOriginFrame) {
		t.Errorf("no cross_origin_frame gap: %+v", gapsOf(chunks))
	}
}

// pageInterval reads the interval a test page writes into its text as
// "<word> FROM TO" (page clock, ms), reading again until it is there.
func pageInterval(t *testing.T, s *session, word, missing string) (from, to int64) {
	t.Helper()
	re := regexp.MustCompile(regexp.QuoteMeta(word) + ` (\d+) (\d+)`)
	deadline := time.Now().Add(time.Minute)
	for {
		var read contract.ReadResult
		s.must("browser_read", map[string]any{"what": "text"}, &read)
		if m := re.FindStringSubmatch(read.Content); m != nil {
			from, _ = strconv.ParseInt(m[1], 10, 64)
			to, _ = strconv.ParseInt(m[2], 10, 64)
			return from, to
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %q", missing, read.Content)
		}
	}
}
