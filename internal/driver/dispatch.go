package driver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/durable-browser/durable-browser/internal/scrub"
	"github.com/go-rod/rod/lib/proto"
)

// scrollToJS (js/scrollto.js) scrolls an element to the viewport's middle.
var scrollToJS = program("scrollto.js")

// do runs one action.
func (b *Browser) do(ctx context.Context, t *tab, a Action, r ref) error {
	page := b.client(ctx, t.sess)
	if err := b.unable(ctx, a, r); err != nil {
		return err
	}
	switch a.Op {
	case "click":
		n := a.Count
		if n == 0 {
			n = 1
		}
		btn := proto.InputMouseButtonLeft
		switch a.Button {
		case "right":
			btn = proto.InputMouseButtonRight
		case "middle":
			btn = proto.InputMouseButtonMiddle
		}
		x, y, err := b.point(ctx, t, r)
		if err != nil {
			return err
		}
		return b.click(page, x, y, btn, n)
	case "hover":
		x, y, err := b.point(ctx, t, r)
		if err != nil {
			return err
		}
		return proto.InputDispatchMouseEvent{Type: proto.InputDispatchMouseEventTypeMouseMoved, X: x, Y: y}.Call(page)
	case "fill", "type":
		if len(a.Secrets) > 0 {
			if b.ranPageCode() {
				return &ActionError{Kind: KindRefused, Reason: ErrPageCodeRan.Error(), Err: ErrPageCodeRan}
			}
			if err := b.checkSecretTarget(ctx, r, a.Secrets); err != nil {
				return err
			}
			// Armed before the first key: a page may send each keystroke.
			b.armSecrets(a.Secrets)
		}
		if a.Op == "fill" {
			return b.fill(ctx, t, r, a.Value)
		}
		if err := b.focus(ctx, r, false); err != nil {
			return err
		}
		return b.typeText(ctx, page, a.Text, time.Duration(a.DelayMS)*time.Millisecond)
	case "press":
		if a.ID != "" {
			if err := b.focus(ctx, r, false); err != nil {
				return err
			}
		}
		c, err := parseCombo(a.Key)
		if err != nil {
			return &ActionError{Kind: KindInvalid, Reason: err.Error()}
		}
		return b.press(page, c)
	case "select":
		return b.selectValues(ctx, r, a.Values)
	case "check", "uncheck":
		return b.setChecked(ctx, t, r, a.Op == "check")
	case "scroll":
		if a.ID != "" {
			_, err := b.callOn(ctx, r, scrollToJS)
			return err
		}
		_, err := proto.RuntimeEvaluate{Expression: fmt.Sprintf("window.scrollBy(%d,%d)", a.DX, a.DY)}.Call(page)
		return err
	case "goto":
		b.mu.Lock()
		dlBefore := len(b.dl.order)
		b.mu.Unlock()
		res, err := proto.PageNavigate{URL: a.URL}.Call(page)
		if err != nil {
			return err
		}
		if res.ErrorText != "" {
			if strings.Contains(res.ErrorText, "ERR_ABORTED") && b.becameDownload(ctx, t, dlBefore) {
				// The answer is a file to save: Chrome saves it and the tab
				// stays on its page; the run result lists the download.
				return nil
			}
			return &ActionError{Kind: KindNavigation, Reason: fmt.Sprintf("navigation to %s failed: %s; check the URL, and that its server is up", truncate(scrub.URL(a.URL), 200), truncate(res.ErrorText, 80))}
		}
		b.markLoading(t)
		return nil
	case "back", "forward":
		h, err := proto.PageGetNavigationHistory{}.Call(page)
		if err != nil {
			return err
		}
		i := h.CurrentIndex - 1
		if a.Op == "forward" {
			i = h.CurrentIndex + 1
		}
		if i < 0 || i >= len(h.Entries) {
			return &ActionError{Kind: KindNavigation, Reason: fmt.Sprintf("there is no page to go %s to", a.Op)}
		}
		if err := (proto.PageNavigateToHistoryEntry{EntryID: h.Entries[i].ID}).Call(page); err != nil {
			return err
		}
		return nil
	case "reload":
		if err := (proto.PageReload{}).Call(page); err != nil {
			return err
		}
		b.markLoading(t)
		return nil
	case "switch_tab":
		if err := b.SwitchTab(ctx, a.Tab); err != nil {
			return &ActionError{Op: a.Op, Kind: KindInvalid, Reason: fmt.Sprintf("no tab %q; use an id from tabs_opened", a.Tab)}
		}
		return nil
	case "close_tab":
		id := a.Tab
		if id == "" {
			id = t.short
		}
		if err := b.CloseTab(ctx, id); err != nil {
			var last *LastTabError
			if errors.As(err, &last) {
				return &ActionError{Op: a.Op, Kind: KindInvalid, Reason: last.Error(), Err: last}
			}
			return &ActionError{Op: a.Op, Kind: KindInvalid, Reason: fmt.Sprintf("no tab %q; use an id from tabs_opened", id)}
		}
		return nil
	case "wait":
		return b.wait(ctx, t, a, r)
	}
	return &ActionError{Kind: KindInvalid, Reason: fmt.Sprintf("unknown op %q", a.Op)}
}

func (b *Browser) markLoading(t *tab) {
	b.mu.Lock()
	t.loading, t.parsed = true, false
	b.mu.Unlock()
}
