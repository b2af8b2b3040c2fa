package driver

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-rod/rod/lib/proto"

	"github.com/durable-browser/durable-browser/internal/redact"
	"github.com/durable-browser/durable-browser/internal/states"
)

// TabRestored is what became of one checkpoint tab in a new browser.
type TabRestored struct {
	// URL and Title are where the tab is now: the checkpoint's URL when it
	// was loaded again, about:blank when it was not (Reason says why).
	URL    string
	Title  string
	Active bool
	Reason string
	// Was is the checkpoint's URL of a tab not loaded again.
	Was string
}

// notReloaded says why a checkpoint tab is not loaded again ("" when it is).
func notReloaded(t states.Tab) string {
	switch {
	case t.Method == MethodWithheld:
		return "its address held a typed secret, so it was not kept"
	case t.URL == "" || t.URL == "about:blank":
		return ""
	case !strings.HasPrefix(t.URL, "http://") && !strings.HasPrefix(t.URL, "https://"):
		return "it was not a web page (" + truncate(t.URL, 40) + ")"
	case t.Method == "GET":
		return ""
	case t.Method == "":
		return "how it was reached is not known, so it was not loaded again"
	}
	return "it was reached by " + t.Method + ", which is not sent again"
}

// RestoreTabs reopens a checkpoint's tabs in this fresh browser: the first
// in the tab it has, the others in new tabs, each loaded again by GET at
// its URL (through the session's guards, armed since Attach) and scrolled
// where it was. It leaves the checkpoint's active tab active.
func (b *Browser) RestoreTabs(ctx context.Context, tabs []states.Tab) []TabRestored {
	first, err := b.activeTab()
	if err != nil {
		return nil
	}
	out := make([]TabRestored, 0, len(tabs))
	active := first
	for i, t := range tabs {
		res := TabRestored{URL: "about:blank", Active: t.Active, Was: t.URL}
		tb := first
		if i > 0 {
			if b.o.TargetID != "" && b.o.BrowserContextID == "" {
				res.Reason = "this browser is driven through one page only"
				out = append(out, res)
				continue
			}
			var err error
			tb, err = b.openTab(ctx)
			if err != nil {
				res.Reason = fmt.Sprintf("a tab could not be opened for it: %v", err)
				out = append(out, res)
				continue
			}
		}
		b.mu.Lock()
		b.active = tb
		b.mu.Unlock()
		if t.Active {
			active = tb
		}
		res.Reason = notReloaded(t)
		if res.Reason == "" && t.URL != "" && t.URL != "about:blank" {
			if _, err := b.Run(ctx, []Action{{Op: "goto", URL: t.URL}}, RunOptions{}); err != nil {
				res.Reason = "loading it again failed: " + truncate(err.Error(), 200)
			} else {
				if t.ScrollX != 0 || t.ScrollY != 0 {
					_, _ = proto.RuntimeEvaluate{Expression: fmt.Sprintf("window.scrollTo(%f,%f)", t.ScrollX, t.ScrollY)}.Call(b.client(ctx, tb.sess))
				}
				res.URL, res.Title = b.info(ctx)
				res.Was = ""
			}
		}
		if res.Reason == "" {
			res.Was = ""
		}
		out = append(out, res)
	}
	_ = proto.TargetActivateTarget{TargetID: active.id}.Call(b.client(ctx, ""))
	b.mu.Lock()
	b.active = active
	b.mu.Unlock()
	return out
}

// ArmSecrets guards the session against secrets typed before (in the
// browser a restore replaces), before any page loads.
func (b *Browser) ArmSecrets(secrets ...redact.Secret) { b.armSecrets(secrets) }

// Closed reports whether the connection to the browser is gone (Chrome
// exited or crashed): nothing more can be done with it.
func (b *Browser) Closed() bool { return b.ctx.Err() != nil }
