// Package driver drives one browser session over the Chrome DevTools
// Protocol (go-rod): accessibility snapshots with per-snapshot ids, batches of
// actions through real input events, tabs, dialogs, downloads, uploads and an
// optional gate on side-effecting requests.
package driver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-rod/rod"
	rodcdp "github.com/go-rod/rod/lib/cdp"
	"github.com/go-rod/rod/lib/proto"
	"github.com/go-rod/stealth"
	"github.com/rs/zerolog"
)

// DialogPolicy says how confirm and prompt dialogs are answered. Alerts are
// always accepted.
type DialogPolicy string

// Dialog policies.
const (
	DialogAccept  DialogPolicy = "accept"
	DialogDismiss DialogPolicy = "dismiss"
)

// GateDecision is a RequestGate's answer.
type GateDecision int

// Gate decisions.
const (
	GateAllow GateDecision = iota + 1
	GateDeny
)

// GatedRequest is a side-effecting request waiting for the RequestGate.
// It carries no query, body or headers.
type GatedRequest struct {
	Method       string
	Origin       string
	Path         string
	ResourceType string
	TabID        string
}

// SentRequest is a side-effecting request that left the browser.
type SentRequest struct {
	Method string `json:"method"`
	Origin string `json:"origin"`
	Path   string `json:"path"`
}

// Tab is one open page.
type Tab struct {
	ID     string `json:"id"`
	URL    string `json:"url"`
	Title  string `json:"title"`
	Active bool   `json:"active"`
	// TargetID is Chrome's id of the tab, for building a DevTools address
	// on the worker. Such an address is a credential: never serialised.
	TargetID string `json:"-"`
}

// Dialog is a JavaScript dialog the page opened and how it was answered.
type Dialog struct {
	Type     string `json:"type"` // alert, confirm, prompt, beforeunload
	Message  string `json:"message"`
	Accepted bool   `json:"accepted"`
}

// Options configure Attach.
type Options struct {
	// CDPURL is the websocket debugger URL (ws://...) of a running Chrome.
	CDPURL string
	// Stealth applies go-rod/stealth to every page of the session, popups too.
	Stealth bool
	// DownloadDir is this session's own download directory; empty disables downloads.
	DownloadDir string
	// DialogPolicy answers confirm and prompt; default accept.
	DialogPolicy DialogPolicy
	// ActionTimeout bounds each action; default 10s.
	ActionTimeout time.Duration
	// MaxSnapshotChars bounds snapshot text; default 12000.
	MaxSnapshotChars int
	// Logger receives debug lines; the zero value logs nothing.
	Logger zerolog.Logger
	// TargetID, when set, is the one page this session drives (a page the
	// provider opened in someone else's browser): the driver attaches to it
	// and to popups it opens, never to the browser's other tabs.
	TargetID string
	// RequestGate, when set, is asked about every request with side effects
	// (method not GET, HEAD or OPTIONS) before it leaves the browser. It may
	// block while a person decides; ctx is the running batch's context.
	RequestGate func(ctx context.Context, r GatedRequest) GateDecision
}

const (
	maxListed      = 50 // console errors, failed requests, sent requests kept between calls
	maxFileBytes   = 100 << 20
	maxDownloads   = 50
	defaultTimeout = 10 * time.Second
	defaultChars   = 12000
)

// Browser is one attached session. Its methods are safe for concurrent use,
// but actions and snapshots are meant to be called one at a time.
type Browser struct {
	o      Options
	log    zerolog.Logger
	rb     *rod.Browser
	ws     *rodcdp.WebSocket
	ctx    context.Context
	cancel context.CancelFunc

	opMu      sync.Mutex // serialises Run, Snapshot, Upload
	closeOnce sync.Once
	rawSeq    atomic.Int64

	mu          sync.Mutex
	tabSeq      int
	tabs        map[proto.TargetTargetID]*tab
	sessions    map[proto.TargetSessionID]*tab              // every session we set up -> its tab
	frameSess   map[proto.PageFrameID]proto.TargetSessionID // out-of-process frame -> its session
	frameParent map[proto.PageFrameID]proto.TargetSessionID // out-of-process frame -> the session that attached it
	active      *tab
	snap        *snapState
	idSeq       int
	epoch       int
	runCtx      context.Context
	gating      int // gate decisions under way
	ev          events
	dl          downloads
}

// tab is one page target and the session this driver set up on it.
type tab struct {
	id       proto.TargetTargetID
	short    string
	sess     proto.TargetSessionID
	opener   proto.TargetTargetID
	ready    chan struct{}
	navSeq   int
	loading  bool
	closed   bool
	openedAt int // b.ev.openSeq when it appeared
}

// events are what happened since the last Run, bounded.
type events struct {
	dialogs  []Dialog
	console  []string
	failed   []string
	sent     []SentRequest
	held     []SentRequest
	denied   []SentRequest
	openSeq  int
	requests map[proto.NetworkRequestID]reqInfo
}

type reqInfo struct{ method, url string }

// Attach connects to a running Chrome and takes its first tab (opening one if
// there is none). Close disconnects without stopping Chrome.
func Attach(ctx context.Context, o Options) (*Browser, error) {
	if o.CDPURL == "" {
		return nil, errors.New("driver: Options.CDPURL is empty; pass the browser's ws:// debugger URL")
	}
	if o.ActionTimeout <= 0 {
		o.ActionTimeout = defaultTimeout
	}
	if o.MaxSnapshotChars <= 0 {
		o.MaxSnapshotChars = defaultChars
	}
	if o.DialogPolicy == "" {
		o.DialogPolicy = DialogAccept
	}
	// Own the websocket so Close can end this connection (and with it the
	// auto-attach it set up) without closing Chrome.
	ws := &rodcdp.WebSocket{}
	if err := ws.Connect(ctx, o.CDPURL, nil); err != nil {
		return nil, fmt.Errorf("driver: connect to %s: %w (is Chrome running with remote debugging?)", redactWS(o.CDPURL), err)
	}
	bctx, cancel := context.WithCancel(context.Background())
	rb := newRod(ws).Context(bctx)
	if err := connect(ctx, rb); err != nil {
		cancel()
		_ = ws.Close()
		return nil, fmt.Errorf("driver: connect to %s: %w (is Chrome running with remote debugging?)", redactWS(o.CDPURL), err)
	}
	b := &Browser{
		o: o, log: o.Logger, rb: rb, ws: ws, ctx: bctx, cancel: cancel,
		tabs:        map[proto.TargetTargetID]*tab{},
		sessions:    map[proto.TargetSessionID]*tab{},
		frameSess:   map[proto.PageFrameID]proto.TargetSessionID{},
		frameParent: map[proto.PageFrameID]proto.TargetSessionID{},
		ev:          events{requests: map[proto.NetworkRequestID]reqInfo{}},
		dl:          downloads{byGUID: map[string]*download{}},
	}
	events := rb.Event()
	go b.loop(events)

	fail := func(err error) (*Browser, error) {
		_ = b.Close()
		return nil, err
	}
	root := b.client(ctx, "")
	if o.DownloadDir != "" {
		if err := (proto.BrowserSetDownloadBehavior{Behavior: proto.BrowserSetDownloadBehaviorBehaviorAllowAndName,
			DownloadPath: o.DownloadDir, EventsEnabled: true}).Call(root); err != nil {
			return fail(fmt.Errorf("driver: set download directory: %w", err))
		}
	}
	var t *tab
	var err error
	if o.TargetID != "" {
		t, err = b.attachOnly(ctx, proto.TargetTargetID(o.TargetID))
	} else {
		// Auto-attach to every page, paused, so stealth, dialogs and the request
		// gate are armed before a new page (a popup too) runs anything.
		if err := (proto.TargetSetAutoAttach{AutoAttach: true, WaitForDebuggerOnStart: true, Flatten: true}).Call(root); err != nil {
			return fail(fmt.Errorf("driver: auto-attach: %w", err))
		}
		t, err = b.firstTab(ctx)
	}
	if err != nil {
		return fail(err)
	}
	b.mu.Lock()
	b.active = t
	b.mu.Unlock()
	return b, nil
}

func connect(ctx context.Context, rb *rod.Browser) error {
	done := make(chan error, 1)
	go func() { done <- rb.Connect() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// firstTab waits for an attached page, opening about:blank if Chrome has none.
func (b *Browser) firstTab(ctx context.Context) (*tab, error) {
	res, err := proto.TargetGetTargets{}.Call(b.client(ctx, ""))
	if err != nil {
		return nil, fmt.Errorf("driver: list targets: %w", err)
	}
	var id proto.TargetTargetID
	for _, ti := range res.TargetInfos {
		if ti.Type == proto.TargetTargetInfoTypePage && !strings.HasPrefix(ti.URL, "devtools://") {
			id = ti.TargetID
			break
		}
	}
	if id == "" {
		r, err := proto.TargetCreateTarget{URL: "about:blank"}.Call(b.client(ctx, ""))
		if err != nil {
			return nil, fmt.Errorf("driver: open a tab: %w", err)
		}
		id = r.TargetID
	}
	return b.waitTab(ctx, id)
}

// attachOnly attaches to the one page id and watches target creation (no
// attaching) so popups that page opens can be attached as they appear.
func (b *Browser) attachOnly(ctx context.Context, id proto.TargetTargetID) (*tab, error) {
	root := b.client(ctx, "")
	if err := (proto.TargetSetDiscoverTargets{Discover: true}).Call(root); err != nil {
		return nil, fmt.Errorf("driver: watch targets: %w", err)
	}
	if _, err := (proto.TargetAttachToTarget{TargetID: id, Flatten: true}).Call(root); err != nil {
		return nil, fmt.Errorf("driver: attach to page %s: %w (is the page still open? create the session again)", truncate(string(id), 12), err)
	}
	return b.waitTab(ctx, id)
}

// popupCreated attaches to a page opened by one of this session's tabs
// (Options.TargetID mode, where the browser's other pages are left alone).
func (b *Browser) popupCreated(ti *proto.TargetTargetInfo) {
	if ti.Type != proto.TargetTargetInfoTypePage || ti.OpenerID == "" {
		return
	}
	b.mu.Lock()
	opener, known := b.tabs[ti.OpenerID], b.tabs[ti.TargetID] != nil
	b.mu.Unlock()
	if opener == nil || known {
		return
	}
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	if _, err := (proto.TargetAttachToTarget{TargetID: ti.TargetID, Flatten: true}).Call(b.client(ctx, "")); err != nil {
		b.log.Debug().Err(err).Msg("driver: attach to popup")
	}
}

// waitTab waits until the page target id is attached and set up.
func (b *Browser) waitTab(ctx context.Context, id proto.TargetTargetID) (*tab, error) {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		b.mu.Lock()
		t := b.tabs[id]
		b.mu.Unlock()
		if t != nil {
			select {
			case <-t.ready:
				return t, nil
			case <-ctx.Done():
				return nil, fmt.Errorf("driver: tab not ready: %w", ctx.Err())
			}
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return nil, fmt.Errorf("driver: tab not attached: %w", ctx.Err())
		}
	}
}

// Close disconnects from Chrome. Chrome and its pages keep running.
func (b *Browser) Close() error {
	b.closeOnce.Do(func() {
		if b.ctx.Err() == nil {
			ctx, cancel := context.WithTimeout(b.ctx, 2*time.Second)
			_ = proto.TargetSetAutoAttach{AutoAttach: false}.Call(b.client(ctx, ""))
			cancel()
		}
		b.cancel()
		_ = b.ws.Close()
	})
	return nil
}

// client is a CDP client for one session ("" is the browser) bound to ctx.
func (b *Browser) client(ctx context.Context, sid proto.TargetSessionID) cdp {
	return cdp{b: b.rb, sid: sid, ctx: ctx}
}

type cdp struct {
	b   *rod.Browser
	sid proto.TargetSessionID
	ctx context.Context
}

func (c cdp) Call(ctx context.Context, _ string, method string, params interface{}) ([]byte, error) {
	return c.b.Call(ctx, string(c.sid), method, params)
}
func (c cdp) GetSessionID() proto.TargetSessionID { return c.sid }
func (c cdp) GetContext() context.Context         { return c.ctx }

// activeTab returns the active tab or an error naming the fix.
func (b *Browser) activeTab() (*tab, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ctx.Err() != nil {
		return nil, ErrClosed
	}
	if b.active == nil || b.active.closed {
		return nil, errors.New("driver: no active tab: list tabs and switch to one")
	}
	return b.active, nil
}

// Page returns the active tab as a rod page (for capture).
func (b *Browser) Page() (*rod.Page, error) {
	t, err := b.activeTab()
	if err != nil {
		return nil, err
	}
	return b.rb.PageFromTarget(t.id)
}

// URL returns the active tab's URL, "" if unknown.
func (b *Browser) URL(ctx context.Context) string {
	u, _ := b.info(ctx)
	return u
}

// Title returns the active tab's title, "" if unknown.
func (b *Browser) Title(ctx context.Context) string {
	_, t := b.info(ctx)
	return t
}

func (b *Browser) info(ctx context.Context) (string, string) {
	t, err := b.activeTab()
	if err != nil {
		return "", ""
	}
	r, err := proto.TargetGetTargetInfo{TargetID: t.id}.Call(b.client(ctx, ""))
	if err != nil {
		return "", ""
	}
	return r.TargetInfo.URL, r.TargetInfo.Title
}

// Tabs lists open tabs.
func (b *Browser) Tabs(ctx context.Context) ([]Tab, error) {
	res, err := proto.TargetGetTargets{}.Call(b.client(ctx, ""))
	if err != nil {
		return nil, fmt.Errorf("driver: list tabs: %w", err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []Tab
	for _, ti := range res.TargetInfos {
		t := b.tabs[ti.TargetID]
		if t == nil || t.closed {
			continue
		}
		out = append(out, Tab{ID: t.short, URL: ti.URL, Title: ti.Title, Active: t == b.active, TargetID: string(ti.TargetID)})
	}
	return out, nil
}

func (b *Browser) tabByShort(id string) *tab {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, t := range b.tabs {
		if t.short == id && !t.closed {
			return t
		}
	}
	return nil
}

// SwitchTab makes tab id active. Ids of the latest snapshot become stale.
func (b *Browser) SwitchTab(ctx context.Context, id string) error {
	t := b.tabByShort(id)
	if t == nil {
		return fmt.Errorf("driver: no tab %q: list tabs for their ids", truncate(id, 20))
	}
	_ = proto.TargetActivateTarget{TargetID: t.id}.Call(b.client(ctx, ""))
	b.mu.Lock()
	b.active = t
	b.mu.Unlock()
	return nil
}

// CloseTab closes tab id. Closing the active tab activates another one.
func (b *Browser) CloseTab(ctx context.Context, id string) error {
	t := b.tabByShort(id)
	if t == nil {
		return fmt.Errorf("driver: no tab %q: list tabs for their ids", truncate(id, 20))
	}
	if _, err := (proto.TargetCloseTarget{TargetID: t.id}).Call(b.client(ctx, "")); err != nil {
		return fmt.Errorf("driver: close tab: %w", err)
	}
	b.dropTab(t.id)
	// closeTarget answers before the page is gone: confirm it, so nobody
	// (a later attach too) picks a closing page.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		res, err := proto.TargetGetTargets{}.Call(b.client(ctx, ""))
		if err != nil {
			break
		}
		gone := true
		for _, ti := range res.TargetInfos {
			if ti.TargetID == t.id {
				gone = false
			}
		}
		if gone {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

func (b *Browser) dropTab(id proto.TargetTargetID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.tabs[id]
	if t == nil || t.closed {
		return
	}
	t.closed = true
	if b.active == t {
		b.active = nil
		// Back to the page that opened it, else the newest open tab.
		if o := b.tabs[t.opener]; o != nil && !o.closed {
			b.active = o
			return
		}
		var best *tab
		for _, o := range b.tabs {
			if !o.closed && (best == nil || o.openedAt > best.openedAt) {
				best = o
			}
		}
		b.active = best
	}
}

// loop dispatches CDP events until the connection closes. A panic here would
// kill the worker, so every event is handled under recover.
func (b *Browser) loop(msgs <-chan *rod.Message) {
	for msg := range msgs {
		b.handle(msg)
	}
	b.cancel()
}

func (b *Browser) handle(msg *rod.Message) {
	defer func() {
		if r := recover(); r != nil {
			b.log.Error().Str("method", msg.Method).Interface("panic", r).Msg("driver: event handler panicked")
		}
	}()
	switch msg.Method {
	case "Target.attachedToTarget":
		var e proto.TargetAttachedToTarget
		if msg.Load(&e) {
			go b.attached(msg.SessionID, &e)
		}
	case "Target.detachedFromTarget":
		var e proto.TargetDetachedFromTarget
		if msg.Load(&e) {
			b.mu.Lock()
			t := b.sessions[e.SessionID]
			delete(b.sessions, e.SessionID)
			for fid, sid := range b.frameSess {
				if sid == e.SessionID {
					delete(b.frameSess, fid)
					delete(b.frameParent, fid)
				}
			}
			isTab := t != nil && t.sess == e.SessionID
			b.mu.Unlock()
			if isTab {
				b.dropTab(t.id)
			}
		}
	case "Target.targetCreated":
		var e proto.TargetTargetCreated
		if b.o.TargetID != "" && msg.Load(&e) && e.TargetInfo != nil {
			go b.popupCreated(e.TargetInfo)
		}
	case "Target.targetDestroyed":
		var e proto.TargetTargetDestroyed
		if msg.Load(&e) {
			b.dropTab(e.TargetID)
		}
	case "Page.javascriptDialogOpening":
		var e proto.PageJavascriptDialogOpening
		if msg.Load(&e) {
			go b.dialog(msg.SessionID, &e)
		}
	case "Page.frameNavigated":
		var e proto.PageFrameNavigated
		if msg.Load(&e) && e.Frame.ParentID == "" {
			b.bumpNav(msg.SessionID, proto.PageFrameID(""))
		}
	case "Page.navigatedWithinDocument":
		var e proto.PageNavigatedWithinDocument
		if msg.Load(&e) {
			b.bumpNav(msg.SessionID, e.FrameID)
		}
	case "Page.frameRequestedNavigation", "Page.frameStartedLoading", "Page.frameStoppedLoading":
		var fid proto.PageFrameID
		switch msg.Method {
		case "Page.frameRequestedNavigation":
			var e proto.PageFrameRequestedNavigation
			msg.Load(&e)
			fid = e.FrameID
		case "Page.frameStartedLoading":
			var e proto.PageFrameStartedLoading
			msg.Load(&e)
			fid = e.FrameID
		default:
			var e proto.PageFrameStoppedLoading
			msg.Load(&e)
			fid = e.FrameID
		}
		b.mu.Lock()
		if t := b.sessions[msg.SessionID]; t != nil && t.sess == msg.SessionID && string(fid) == string(t.id) {
			t.loading = msg.Method != "Page.frameStoppedLoading"
		}
		b.mu.Unlock()
	case "Runtime.consoleAPICalled":
		var e proto.RuntimeConsoleAPICalled
		if msg.Load(&e) && e.Type == proto.RuntimeConsoleAPICalledTypeError {
			var parts []string
			for _, a := range e.Args {
				if a.Value.Nil() {
					parts = append(parts, a.Description)
				} else {
					parts = append(parts, a.Value.Str())
				}
			}
			b.addConsole(strings.Join(parts, " "))
		}
	case "Runtime.exceptionThrown":
		var e proto.RuntimeExceptionThrown
		if msg.Load(&e) {
			d := e.ExceptionDetails
			text := d.Text
			if d.Exception != nil && d.Exception.Description != "" {
				text = d.Exception.Description
			}
			b.addConsole(text)
		}
	case "Network.requestWillBeSent":
		var e proto.NetworkRequestWillBeSent
		if msg.Load(&e) {
			b.mu.Lock()
			if len(b.ev.requests) > 2000 {
				b.ev.requests = map[proto.NetworkRequestID]reqInfo{}
			}
			b.ev.requests[e.RequestID] = reqInfo{method: e.Request.Method, url: e.Request.URL}
			if b.o.RequestGate == nil && !safeMethod(e.Request.Method) && b.sessions[msg.SessionID] != nil {
				o, p := originPath(e.Request.URL)
				b.ev.sent = appendBounded(b.ev.sent, SentRequest{Method: e.Request.Method, Origin: o, Path: p})
			}
			b.mu.Unlock()
		}
	case "Network.responseReceived":
		var e proto.NetworkResponseReceived
		if msg.Load(&e) && e.Response.Status >= 400 {
			b.mu.Lock()
			ri := b.ev.requests[e.RequestID]
			if ri.method == "" {
				ri.method = "GET"
			}
			o, p := originPath(e.Response.URL)
			b.ev.failed = appendBounded(b.ev.failed, fmt.Sprintf("%d %s %s%s", e.Response.Status, ri.method, o, p))
			b.mu.Unlock()
		}
	case "Network.loadingFailed":
		var e proto.NetworkLoadingFailed
		if msg.Load(&e) && !e.Canceled {
			b.mu.Lock()
			ri := b.ev.requests[e.RequestID]
			o, p := originPath(ri.url)
			b.ev.failed = appendBounded(b.ev.failed, fmt.Sprintf("%s %s %s%s", truncate(e.ErrorText, 60), ri.method, o, p))
			b.mu.Unlock()
		}
	case "Fetch.requestPaused":
		var e proto.FetchRequestPaused
		if msg.Load(&e) {
			if !safeMethod(e.Request.Method) && e.ResponseStatusCode == nil {
				// Counted here, not in the goroutine, so an action settling
				// right now already sees that a decision is under way.
				b.mu.Lock()
				b.gating++
				b.mu.Unlock()
			}
			go b.gate(msg.SessionID, &e)
		}
	case "Browser.downloadWillBegin":
		var e proto.BrowserDownloadWillBegin
		if msg.Load(&e) {
			b.downloadBegin(&e)
		}
	case "Browser.downloadProgress":
		var e proto.BrowserDownloadProgress
		if msg.Load(&e) {
			b.downloadProgress(&e)
		}
	}
}

func (b *Browser) bumpNav(sid proto.TargetSessionID, frame proto.PageFrameID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.sessions[sid]
	if t == nil || t.sess != sid {
		return // an iframe's own navigation does not move the page
	}
	if frame != "" && string(frame) != string(t.id) {
		return
	}
	t.navSeq++
}

func (b *Browser) addConsole(s string) {
	b.mu.Lock()
	b.ev.console = appendBounded(b.ev.console, truncate(strings.TrimSpace(s), 300))
	b.mu.Unlock()
}

func appendBounded[T any](list []T, v T) []T {
	if len(list) >= maxListed {
		return list
	}
	return append(list, v)
}

// attached sets up a newly attached session (a page, an out-of-process
// iframe or a worker) and lets it run.
func (b *Browser) attached(parent proto.TargetSessionID, e *proto.TargetAttachedToTarget) {
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	sid := e.SessionID
	c := b.client(ctx, sid)
	info := e.TargetInfo
	var t *tab
	switch info.Type {
	case proto.TargetTargetInfoTypePage:
		b.mu.Lock()
		t = b.tabs[info.TargetID]
		if t == nil {
			b.tabSeq++
			b.ev.openSeq++
			t = &tab{id: info.TargetID, short: fmt.Sprintf("t%d", b.tabSeq), sess: sid, opener: info.OpenerID,
				ready: make(chan struct{}), openedAt: b.ev.openSeq}
			b.tabs[info.TargetID] = t
		}
		b.sessions[sid] = t
		b.mu.Unlock()
	case typeIframe:
		b.mu.Lock()
		t = b.sessions[parent]
		if t != nil {
			b.sessions[sid] = t
			b.frameSess[proto.PageFrameID(info.TargetID)] = sid
			b.frameParent[proto.PageFrameID(info.TargetID)] = parent
		}
		b.mu.Unlock()
	}
	// A paused target answers nothing until it runs, so the setup is sent
	// without waiting, in order, ahead of the resume: Chrome applies it
	// before the page runs a line.
	if b.o.RequestGate != nil && (t != nil || strings.Contains(string(info.Type), "worker")) {
		b.sendNoWait(sid, proto.FetchEnable{Patterns: []*proto.FetchRequestPattern{{URLPattern: "*", RequestStage: proto.FetchRequestStageRequest}}})
	}
	if t != nil {
		if info.Type == proto.TargetTargetInfoTypePage && b.o.Stealth {
			b.sendNoWait(sid, proto.PageAddScriptToEvaluateOnNewDocument{Source: stealth.JS})
			if !e.WaitingForDebugger {
				// Already running (attached by id, not paused): patch the current document too.
				b.sendNoWait(sid, proto.RuntimeEvaluate{Expression: stealth.JS})
			}
		}
		b.sendNoWait(sid, proto.PageEnable{})
		b.sendNoWait(sid, proto.RuntimeEnable{})
		b.sendNoWait(sid, proto.NetworkEnable{})
		b.sendNoWait(sid, proto.TargetSetAutoAttach{AutoAttach: true, WaitForDebuggerOnStart: true, Flatten: true})
	}
	err := proto.RuntimeRunIfWaitingForDebugger{}.Call(c)
	if t != nil {
		// Page.enable answers once the page's agents run: then events flow.
		_ = proto.PageEnable{}.Call(c)
	}
	b.log.Debug().Err(err).Str("type", string(info.Type)).Bool("waiting", e.WaitingForDebugger).Msg("driver: attached")
	if t != nil && info.Type == proto.TargetTargetInfoTypePage {
		select {
		case <-t.ready:
		default:
			close(t.ready)
		}
	}
	if t == nil && !strings.Contains(string(info.Type), "worker") {
		_ = proto.TargetDetachFromTarget{SessionID: sid}.Call(b.client(ctx, parent))
	}
}

func (b *Browser) dialog(sid proto.TargetSessionID, e *proto.PageJavascriptDialogOpening) {
	accept := e.Type == proto.PageDialogTypeAlert || e.Type == proto.PageDialogTypeBeforeunload || b.o.DialogPolicy != DialogDismiss
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	err := proto.PageHandleJavaScriptDialog{Accept: accept, PromptText: e.DefaultPrompt}.Call(b.client(ctx, sid))
	if err != nil {
		b.log.Debug().Err(err).Msg("driver: answer dialog")
	}
	b.mu.Lock()
	if len(b.ev.dialogs) < maxListed {
		b.ev.dialogs = append(b.ev.dialogs, Dialog{Type: string(e.Type), Message: truncate(e.Message, 300), Accepted: accept})
	}
	b.mu.Unlock()
}

// sendNoWait sends a command on session sid without waiting for its answer.
// Its id is far above rod's own counter, so rod drops the answer.
func (b *Browser) sendNoWait(sid proto.TargetSessionID, req proto.Request) {
	id := rawIDBase + b.rawSeq.Add(1)
	data, err := json.Marshal(map[string]interface{}{"id": id, "sessionId": sid, "method": req.ProtoReq(), "params": req})
	if err != nil {
		return
	}
	if err := b.ws.Send(data); err != nil {
		b.log.Debug().Err(err).Str("method", req.ProtoReq()).Msg("driver: send")
	}
}

const rawIDBase = 1 << 30

func safeMethod(m string) bool {
	switch strings.ToUpper(m) {
	case "GET", "HEAD", "OPTIONS":
		return true
	}
	return false
}

// gate holds a side-effecting request until the RequestGate decides.
func (b *Browser) gate(sid proto.TargetSessionID, e *proto.FetchRequestPaused) {
	c := b.client(b.ctx, sid)
	if safeMethod(e.Request.Method) || e.ResponseStatusCode != nil {
		_ = proto.FetchContinueRequest{RequestID: e.RequestID}.Call(c)
		return
	}
	o, p := originPath(e.Request.URL)
	sr := SentRequest{Method: e.Request.Method, Origin: o, Path: p}
	b.mu.Lock()
	ctx := b.runCtx
	if ctx == nil {
		ctx = b.ctx
	}
	t := b.sessions[sid]
	short := ""
	if t != nil {
		short = t.short
	}
	b.ev.held = appendBounded(b.ev.held, sr)
	b.mu.Unlock()
	dec := GateDeny
	func() {
		defer func() {
			if r := recover(); r != nil {
				b.log.Error().Interface("panic", r).Msg("driver: request gate panicked; request denied")
			}
		}()
		dec = b.o.RequestGate(ctx, GatedRequest{Method: sr.Method, Origin: o, Path: p, ResourceType: string(e.ResourceType), TabID: short})
	}()
	if ctx.Err() != nil {
		dec = GateDeny
	}
	var err error
	if dec == GateAllow {
		err = proto.FetchContinueRequest{RequestID: e.RequestID}.Call(c)
	} else {
		err = proto.FetchFailRequest{RequestID: e.RequestID, ErrorReason: proto.NetworkErrorReasonBlockedByClient}.Call(c)
	}
	if err != nil {
		b.log.Debug().Err(err).Msg("driver: release gated request")
	}
	b.mu.Lock()
	b.gating--
	if dec == GateAllow {
		b.ev.sent = appendBounded(b.ev.sent, sr)
	} else {
		b.ev.denied = appendBounded(b.ev.denied, sr)
	}
	b.mu.Unlock()
}

// originPath splits a URL into origin and path, dropping userinfo, query and
// fragment, which may carry secrets.
func originPath(raw string) (string, string) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		if i := strings.IndexAny(raw, "?#"); i >= 0 {
			raw = raw[:i]
		}
		return "", truncate(raw, 200)
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	return u.Scheme + "://" + u.Host, truncate(p, 200)
}

// redactWS hides the token part of a debugger URL in error messages.
func redactWS(raw string) string {
	o, _ := originPath(raw)
	if o == "" {
		return "the CDP URL"
	}
	return o
}
