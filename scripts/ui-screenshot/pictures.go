package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/durable-browser/durable-browser/internal/demosite"
)

// picture is one PNG: a tab of the session's page in the UI, taken once the
// page's text holds everything in want.
type picture struct {
	file string
	// tab is the path under the workflow's page: timeline, user-metadata.
	tab string
	// what the picture must show, in the main page's text or the frames'.
	want []string
	// scrollTo, if set, is the text of an h2 scrolled to the top of the view;
	// every string in want must then be inside the view.
	scrollTo string
}

// pictures are what docs/operations.md shows. The strings are the session's
// own: the activities' summaries and the waits' names in the timeline, the
// state, page and pending handoff in the current details.
func pictures(demo string) []picture {
	return []picture{{
		file: "ui-session.png",
		tab:  "timeline",
		want: []string{
			"open browser (local)",
			"goto " + demo + "/shop/?…",
			"snapshot interactive",
			`click button "Sign in"`,
			"waiting for approval: POST http://" + demo + "/shop/signin",
			"browser.screenshot • screenshot",
			`waiting for a person: "Confirm the new device`,
		},
		scrollTo: "Timeline",
	}, {
		file: "ui-details.png",
		tab:  "user-metadata",
		want: []string{
			"browser session (local) opened by durable-browser call",
			"action policy ask",
			"waiting_for_human",
			"page http://" + demo + "/shop/search",
			"calls 5",
			"waiting for a person: Confirm the new device",
			"durable-browser handoff done",
		},
	}}
}

// never may appear on a picture: what was typed, the query string the session
// opened the page with, a DevTools or live-view address.
var never = []string{demosite.ShopEmail, demosite.ShopPassword, "utm_source", "newsletter", "ws://", "wss://", "/devtools/", "live view", "liveview"}

// takePictures photographs the session's page in the UI (page is its
// history tab).
func takePictures(ctx context.Context, ps *procs, chromePath, work, page, demo string, o options) error {
	cam, err := openCamera(ctx, ps, chromePath, work, o.width, o.height)
	if err != nil {
		return err
	}
	defer cam.close()
	base := strings.TrimSuffix(page, "/history")
	for _, p := range pictures(demo) {
		if err := takePicture(ctx, cam, base, p, o); err != nil {
			// What the page looked like helps more than the text alone.
			failed := filepath.Join(os.TempDir(), "ui-screenshot-failed-"+p.file)
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			if serr := cam.shoot(sctx, failed); serr == nil {
				err = fmt.Errorf("%w\n(the page as it was: %s)", err, failed)
			} else {
				err = fmt.Errorf("%w\n(no picture of the page as it was: %v)", err, serr)
			}
			cancel()
			return err
		}
	}
	return nil
}

func takePicture(ctx context.Context, cam *camera, base string, p picture, o options) error {
	if err := cam.navigate(ctx, base+"/"+p.tab); err != nil {
		return err
	}
	want, _ := json.Marshal(p.want)
	if err := cam.waitPage(ctx, fmt.Sprintf("the UI's %s tab to show %s", p.tab, want), fmt.Sprintf(`(() => {
  const text = %s;
  const missing = %s.filter(w => !text.includes(w));
  return missing.length ? "not yet: " + JSON.stringify(missing) : "";
})()`, pageText, want)); err != nil {
		return err
	}
	if p.scrollTo != "" {
		h2, _ := json.Marshal(p.scrollTo)
		if err := cam.waitPage(ctx, fmt.Sprintf("the %s tab to fit in %dx%d once scrolled (raise -height)", p.tab, o.width, o.height), fmt.Sprintf(`(() => {
  const h = [...document.querySelectorAll("h2")].find(e => e.textContent.trim() === %s);
  if (!h) return "no heading";
  // The UI scrolls an element of its own, not the window.
  let box = h.parentElement;
  while (box && !(box.scrollHeight > box.clientHeight && /auto|scroll/.test(getComputedStyle(box).overflowY))) box = box.parentElement;
  (box || document.scrollingElement).scrollTop += h.getBoundingClientRect().top - 64;
  const out = %s.filter(w => {
    const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      if (!n.textContent.includes(w)) continue;
      const r = document.createRange(); r.selectNodeContents(n);
      const b = r.getBoundingClientRect();
      return b.top < 0 || b.bottom > innerHeight || b.left < 0 || b.right > innerWidth;
    }
    return true;
  });
  return out.length ? "out of view: " + JSON.stringify(out) : "";
})()`, h2, want)); err != nil {
			return err
		}
	}
	var text string
	if err := cam.eval(ctx, pageText+` + "\n" + [...document.querySelectorAll("iframe")].map(f => decodeURIComponent(f.src || "")).join("\n")`, &text); err != nil {
		return err
	}
	// The frames' addresses carry their text too.
	for _, s := range never {
		if strings.Contains(strings.ToLower(text), strings.ToLower(s)) {
			return fmt.Errorf("the UI's %s tab shows %q: no picture taken", p.tab, s)
		}
	}
	file := filepath.Join(o.out, p.file)
	if err := cam.shoot(ctx, file); err != nil {
		return err
	}
	st, err := os.Stat(file)
	if err != nil {
		return err
	}
	fmt.Printf("wrote %s (%d KB)\n", file, st.Size()>>10)
	return nil
}

// pageText is a JavaScript expression: the text of the page and of its
// same-origin frames (the UI renders summaries and details in frames).
const pageText = `[document.body ? document.body.innerText : ""].concat([...document.querySelectorAll("iframe")].map(f => {
  try { return f.contentDocument && f.contentDocument.body ? f.contentDocument.body.innerText : ""; } catch (e) { return ""; }
})).join("\n")`
