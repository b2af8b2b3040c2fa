package driver

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/internal/capture"
)

func TestScreenshotAndRead(t *testing.T) {
	b := attach(t, Options{})
	ctx := ctxT(t)
	if _, err := b.Screenshot(ctx, ScreenshotOptions{ID: "1"}); !errors.Is(err, ErrNoSnapshot) {
		t.Fatalf("screenshot of an id before any snapshot: %v, want ErrNoSnapshot", err)
	}
	gotoPage(t, b, siteURL+"/form.html")

	shot, err := b.Screenshot(ctx, ScreenshotOptions{})
	if err != nil {
		t.Fatalf("viewport screenshot: %v", err)
	}
	if shot.Type != capture.TypePNG || shot.Width == 0 || shot.Height == 0 || len(shot.Bytes) == 0 {
		t.Fatalf("viewport shot: type %s %dx%d, %d bytes", shot.Type, shot.Width, shot.Height, len(shot.Bytes))
	}

	s := snap(t, b, SnapshotOptions{})
	id := idOf(t, s.Text, `button "Create account"`)
	el, err := b.Screenshot(ctx, ScreenshotOptions{ID: id, Type: "jpeg"})
	if err != nil {
		t.Fatalf("element screenshot: %v", err)
	}
	if el.Type != capture.TypeJPEG || el.Region.Width >= shot.Region.Width {
		t.Fatalf("element shot: type %s, region %+v (viewport %+v)", el.Type, el.Region, shot.Region)
	}
	if _, err := b.Screenshot(ctx, ScreenshotOptions{ID: "99999"}); err == nil {
		t.Fatal("screenshot of an unknown id succeeded")
	} else if se := (*StaleError)(nil); !errors.As(err, &se) {
		t.Fatalf("screenshot of an unknown id: %v, want *StaleError", err)
	}
	if _, err := b.Screenshot(ctx, ScreenshotOptions{Type: "gif"}); !errors.Is(err, capture.ErrRefused) {
		t.Fatalf("gif screenshot: %v, want a capture refusal", err)
	}

	r, err := b.Read(ctx, ReadOptions{What: "markdown"})
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if !strings.Contains(r.Content, "Sign up") || !strings.HasPrefix(r.URL, siteURL) || len(r.Raw) == 0 {
		t.Fatalf("read: url %q, content %q", r.URL, r.Content)
	}
	if _, err := b.Read(ctx, ReadOptions{What: "pdf"}); !errors.Is(err, capture.ErrRefused) {
		t.Fatalf("read pdf: %v, want a capture refusal", err)
	}
}

// TestCaptureLeavesEventsOnce: a screenshot and a read attach a session of
// their own to the tab; after them, what the page does is still reported
// once, not once per session.
func TestCaptureLeavesEventsOnce(t *testing.T) {
	b := attach(t, Options{})
	ctx := ctxT(t)
	gotoPage(t, b, siteURL+"/form.html")
	if _, err := b.Screenshot(ctx, ScreenshotOptions{}); err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if _, err := b.Read(ctx, ReadOptions{}); err != nil {
		t.Fatalf("read: %v", err)
	}
	mustRun(t, b, `[{"op":"wait","ms":1}]`) // drains what the page left so far
	res := mustRun(t, b, fmt.Sprintf(`[{"op":"goto","url":%q},{"op":"wait","text":"Widget unavailable"}]`, siteURL+"/broken.html"))
	// The page's events are handled apart from the answers to commands: one
	// that came a moment before the answer may be listed by the next run
	// (the lists hold what happened since the run before). Counted over
	// both, each is there once.
	consoleErrors, failed := res.ConsoleErrors, res.FailedRequests
	eventually(t, "the broken page's console error and failed request", func() bool {
		next := mustRun(t, b, `[{"op":"wait","ms":1}]`)
		consoleErrors, failed = append(consoleErrors, next.ConsoleErrors...), append(failed, next.FailedRequests...)
		return len(consoleErrors) > 0 && len(failed) > 0
	})
	if len(consoleErrors) != 1 || len(failed) != 1 {
		t.Fatalf("after a screenshot and a read, the broken page's console error and failed request are listed %d and %d times, want once each:\n%q\n%q",
			len(consoleErrors), len(failed), consoleErrors, failed)
	}
}
