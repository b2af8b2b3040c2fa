package activities

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/evidence"
)

// shotHarness is a harness over a real Chromium (the local provider)
// that files evidence in memory and may reach loopback.
func shotHarness(t *testing.T) *harness {
	return chromeHarness(t, func(o *Options) { o.Evidence = &evidence.Filer{Store: evidence.NewMemory()} })
}

// A very wide page's full-page screenshot is cut at a readable scale, and
// says so; a code cell's page.screenshot answers the same cut (one capture
// path); a quality for a PNG is refused naming the fix, by the tool and by
// the cell.
func TestScreenshotCutToolAndCell(t *testing.T) {
	h := shotHarness(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>wide</title><body style="margin:0"><div style="width:20000px;height:400px">`+
			strings.Repeat("wide page text ", 300)+`</div></body>`)
	}))
	t.Cleanup(srv.Close)
	ref := h.create("t-1", contract.SessionOptions{AllowHosts: []string{"127.0.0.1"}})
	if _, err := call[contract.RunResult](h, contract.ActivityRun, runReq(ref, []byte(`[{"op":"goto","url":"`+srv.URL+`/"}]`))); err != nil {
		t.Fatal(err)
	}

	shot, err := call[contract.ScreenshotResult](h, contract.ActivityScreenshot,
		contract.ScreenshotRequest{Call: contract.Call{Session: ref}, Args: contract.ScreenshotArgs{FullPage: true}})
	if err != nil {
		t.Fatal(err)
	}
	c := shot.Cut
	if c == nil || c.RightClip == nil || shot.Region.Width >= 20000 || c.Asked.Width < 20000 ||
		c.RightClip.X != shot.Region.X+shot.Region.Width || c.NextClip != *c.RightClip || !strings.Contains(c.Note, `"x":`) {
		t.Fatalf("full page of a 20000 px wide page: %dx%d, region %+v, cut %+v; want its left part and the clip to the right", shot.Width, shot.Height, shot.Region, c)
	}
	if shot.Width > 2000 || float64(shot.Width)/shot.Region.Width < 0.46 {
		t.Fatalf("region %+v came back %d px wide: unreadable", shot.Region, shot.Width)
	}

	// The cell's answer: the claim check and the very same cut.
	res, err := call[contract.RunResult](h, contract.ActivityRun, cellReq(ref, `return await page.screenshot({full_page: true})`))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		contract.ClaimCheck
		Cut *contract.ScreenshotCut `json:"cut"`
	}
	if err := json.Unmarshal(res.Output, &got); err != nil {
		t.Fatalf("output %s: %v", res.Output, err)
	}
	if got.Key == "" || got.Inline != "" || got.Cut == nil {
		t.Fatalf("page.screenshot answered %s; want the claim check and the cut", res.Output)
	}
	// The tool again, now: Chrome shows the page without its horizontal
	// scrollbar after the first capture beyond the viewport, which the
	// first shot's height had left out.
	again, err := call[contract.ScreenshotResult](h, contract.ActivityScreenshot,
		contract.ScreenshotRequest{Call: contract.Call{Session: ref}, Args: contract.ScreenshotArgs{FullPage: true}})
	if err != nil {
		t.Fatal(err)
	}
	if again.Cut == nil || again.Cut.RightClip == nil {
		t.Fatalf("the tool's second shot: cut %+v", again.Cut)
	}
	if a, b := shotJSON(t, got.Cut), shotJSON(t, again.Cut); a != b {
		t.Fatalf("the cell's cut %s, the tool's %s", a, b)
	}

	// Quality with a PNG: refused up front, naming the fix.
	const fix = `quality applies to jpeg only; drop quality or set type "jpeg"`
	_, err = call[contract.ScreenshotResult](h, contract.ActivityScreenshot,
		contract.ScreenshotRequest{Call: contract.Call{Session: ref}, Args: contract.ScreenshotArgs{Quality: 50}})
	if f := wantCode(t, err, contract.CodeRefused, false); !strings.Contains(f.Message, fix) {
		t.Fatalf("quality for a png: %q; want it to name the fix", f.Message)
	}
	res, err = call[contract.RunResult](h, contract.ActivityRun, cellReq(ref,
		`try { await page.screenshot({type: "png", quality: 50}); return "taken" } catch (e) { return [e.code, e.message] }`))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	if err := json.Unmarshal(res.Output, &out); err != nil || len(out) != 2 || out[0] != "refused" ||
		!strings.Contains(out[1], "page.screenshot option quality: "+fix) {
		t.Fatalf("page.screenshot with a png quality answered %s; want refused naming the fix", res.Output)
	}
}

func shotJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
