package driver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-rod/rod/lib/proto"

	"github.com/durable-browser/durable-browser/internal/states"
)

// stateWorld is the isolated world the seeding script runs in: pages
// cannot read or change it.
const stateWorld = "durable-browser-state"

// seededMark marks a tab's session storage once an origin's saved storage
// was put back, so a page that later clears a key is not given it again.
// ExportState leaves it out.
const seededMark = "__durable_browser_state_seeded"

// ExportState reads the browser's sign-in state: every cookie of its
// cookie jar (the session's browser context), and the local and session
// storage of each origin its tabs show now. It is bounded by ctx.
func (b *Browser) ExportState(ctx context.Context) (states.State, error) {
	b.opMu.Lock()
	defer b.opMu.Unlock()
	t, err := b.activeTab()
	if err != nil {
		return states.State{}, err
	}
	res, err := proto.NetworkGetAllCookies{}.Call(b.client(ctx, t.sess))
	if err != nil {
		return states.State{}, fmt.Errorf("driver: read cookies: %w", err)
	}
	var st states.State
	for _, c := range res.Cookies {
		if c.PartitionKey != nil {
			continue // a third-party partitioned cookie: kept by its partition, not restorable by name
		}
		exp := float64(c.Expires)
		if c.Session {
			exp = 0
		}
		st.Cookies = append(st.Cookies, states.Cookie{Name: c.Name, Value: c.Value, Domain: c.Domain, Path: c.Path,
			Expires: exp, HTTPOnly: c.HTTPOnly, Secure: c.Secure, SameSite: string(c.SameSite)})
	}
	b.mu.Lock()
	type open struct {
		sess   proto.TargetSessionID
		method string
		active bool
		order  int
	}
	var tabs []open
	for _, tb := range b.tabs {
		if !tb.closed {
			tabs = append(tabs, open{tb.sess, tb.docMethod, tb == b.active, tb.openedAt})
		}
	}
	armed := b.armed
	b.mu.Unlock()
	slices.SortFunc(tabs, func(x, y open) int { return x.order - y.order })
	// A typed secret stays out of what is saved, wherever a page put it:
	// only the cookies a site set may carry one.
	holds := func(parts ...string) bool { _, found := armed.Find("", parts...); return found }
	st.Secrets = armed.Names()
	seen := map[string]bool{}
	for _, tb := range tabs {
		tctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		r, err := proto.RuntimeEvaluate{Expression: invoke(readStorageJS), ReturnByValue: true}.Call(b.client(tctx, tb.sess))
		cancel()
		if err != nil || r.ExceptionDetails != nil || r.Result == nil {
			continue // a tab busy or gone: its origin keeps what was saved before
		}
		var o struct {
			Origin  string            `json:"o"`
			Local   map[string]string `json:"l"`
			Session map[string]string `json:"s"`
			Href    string            `json:"h"`
			Title   string            `json:"t"`
			X       float64           `json:"x"`
			Y       float64           `json:"y"`
		}
		if json.Unmarshal([]byte(r.Result.Value.JSON("", "")), &o) != nil {
			continue
		}
		t := states.Tab{URL: o.Href, Title: o.Title, ScrollX: o.X, ScrollY: o.Y, Active: tb.active, Method: tb.method}
		if holds(t.URL, t.Title) {
			t = states.Tab{URL: "about:blank", Active: tb.active, Method: MethodWithheld}
		}
		st.Tabs = append(st.Tabs, t)
		if seen[o.Origin] || !(strings.HasPrefix(o.Origin, "http://") || strings.HasPrefix(o.Origin, "https://")) {
			continue
		}
		seen[o.Origin] = true
		delete(o.Session, seededMark)
		for _, area := range []map[string]string{o.Local, o.Session} {
			for k, v := range area {
				if holds(k, v) {
					delete(area, k)
				}
			}
		}
		st.Origins = append(st.Origins, states.Origin{Origin: o.Origin, Local: o.Local, Session: o.Session})
	}
	st.Normalize()
	return st, nil
}

// MethodWithheld marks a checkpoint's tab whose URL or title held a typed
// secret: it is kept as about:blank.
const MethodWithheld = "withheld"

// readStorageJS (js/readstorage.js) reads a page's origin's storage, bounded.
var readStorageJS = program("readstorage.js")

// ImportState puts a saved state into a fresh browser: its cookies at
// once, and each origin's storage the first time a tab of this session
// shows that origin (storage can only be written from a page of its
// origin), by a script in an isolated world the pages cannot see.
func (b *Browser) ImportState(ctx context.Context, st states.State) error {
	t, err := b.activeTab()
	if err != nil {
		return err
	}
	now := float64(time.Now().Unix())
	var cookies []*proto.NetworkCookieParam
	for _, c := range st.Cookies {
		if c.Expires > 0 && c.Expires < now {
			continue
		}
		p := &proto.NetworkCookieParam{Name: c.Name, Value: c.Value, Path: c.Path, Secure: c.Secure, HTTPOnly: c.HTTPOnly,
			SameSite: proto.NetworkCookieSameSite(c.SameSite), Expires: proto.TimeSinceEpoch(c.Expires)}
		if strings.HasPrefix(c.Domain, ".") {
			p.Domain = c.Domain
		} else {
			// A host-only cookie stays host-only: named by URL, not domain.
			scheme := "http://"
			if c.Secure {
				scheme = "https://"
			}
			p.URL = scheme + c.Domain + c.Path
		}
		cookies = append(cookies, p)
	}
	if len(cookies) > 0 {
		if err := (proto.NetworkSetCookies{Cookies: cookies}).Call(b.client(ctx, t.sess)); err != nil {
			return fmt.Errorf("driver: set cookies: %w", err)
		}
	}
	if len(st.Origins) == 0 {
		return nil
	}
	data := map[string]map[string]map[string]string{}
	for _, o := range st.Origins {
		data[o.Origin] = map[string]map[string]string{"l": o.Local, "s": o.Session}
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return err
	}
	seed := invoke(seedJS, string(raw), strconv.Quote(seededMark)) + ";"
	b.mu.Lock()
	b.seed = seed
	var sess []proto.TargetSessionID
	for _, tb := range b.tabs {
		if !tb.closed {
			sess = append(sess, tb.sess)
		}
	}
	b.mu.Unlock()
	for _, sid := range sess {
		if _, err := (proto.PageAddScriptToEvaluateOnNewDocument{Source: seed, WorldName: stateWorld}).Call(b.client(ctx, sid)); err != nil {
			return fmt.Errorf("driver: arm saved storage: %w", err)
		}
	}
	return nil
}

// seedJS (js/seed.js) puts an origin's saved storage back on the first
// document of that origin in a tab; keys the page already has win.
var seedJS = program("seed.js")
