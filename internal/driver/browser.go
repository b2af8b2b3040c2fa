// Package driver drives one browser session over the Chrome DevTools
// Protocol (go-rod): snapshots with ids that stay with their elements, batches of
// actions through real input events, tabs, dialogs, downloads, uploads and an
// optional gate on side-effecting requests.
package driver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-rod/rod"
	rodcdp "github.com/go-rod/rod/lib/cdp"
	"github.com/go-rod/rod/lib/proto"
	"github.com/rs/zerolog"

	"github.com/durable-browser/durable-browser/internal/egress"
	"github.com/durable-browser/durable-browser/internal/netguard"
	"github.com/durable-browser/durable-browser/internal/redact"
)

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
	// ViewportWidth and ViewportHeight are the CSS size every page of the
	// session is laid out at (a device metrics override, set on each page
	// as it is attached, popups too); default 1280x720.
	ViewportWidth, ViewportHeight int
	// Redact hides secrets in page text. The driver applies it before it
	// cuts any text to length, so no cut can leave a secret's prefix that
	// redaction downstream would no longer recognise. Nil: no redaction here.
	Redact func(string) string
	// Logger receives debug lines; the zero value logs nothing.
	Logger zerolog.Logger
	// TargetID, when set, is the one page this session drives (a page the
	// provider opened in someone else's browser): the driver attaches to it
	// and to popups it opens, never to the browser's other tabs.
	TargetID string
	// BrowserContextID, when set, is the browser context TargetID lives
	// in, the session's own in a browser it shares with other sessions
	// (the local provider's context isolation): downloads are set up for
	// that context alone, only its own frames' downloads are listed, and
	// restored tabs open in it.
	BrowserContextID string
	// RequestGate, when set, is asked about every request with side effects
	// (method not GET, HEAD or OPTIONS) before it leaves the browser. It may
	// block while a person decides; ctx is the running batch's context.
	RequestGate func(ctx context.Context, r GatedRequest) GateDecision
	// Reach, when set, is where the browser may go: every request of every
	// frame and worker is held at the Request stage and judged first, and
	// a blocked one fails (net::ERR_BLOCKED_BY_CLIENT) before it leaves.
	Reach *netguard.Policy
	// Resolver looks names up for Reach; default net.DefaultResolver.
	Resolver Resolver
	// GuardSecrets holds every request at the Request stage (as Reach
	// does) so that, once an action typed a {{secret:NAME}} value, a
	// request carrying it toward an origin it is not bound to fails before
	// it leaves. Requests are searched only after a secret was typed.
	GuardSecrets bool
	// Egress, when set, is the proxy this browser's traffic leaves
	// through (the local provider's): it is told the secrets typed here,
	// and what it refuses (a WebSocket off the allow list, a frame
	// carrying a secret) is listed with the run's blocked requests.
	Egress *egress.Proxy
	// Takeover, when set, passes each action of a batch to the page: it
	// may refuse one (a person took the browser over since the call
	// began), and it sends the action under the lock a person's input takes.
	Takeover TakeoverGate
}

// TakeoverGate decides, right before each action, whether the batch still
// has the browser or a person took it over (the live view). Dispatch runs
// send (the action) under the gate's lock, or refuses it; Check asks the
// same for an action that sends nothing to the page (a wait). Not to be
// confused with the page-text fence of answers (contract.Fence).
type TakeoverGate interface {
	Dispatch(ctx context.Context, send func() error) error
	Check(ctx context.Context) error
}

const (
	maxFileBytes   = 100 << 20
	maxDownloads   = 50
	defaultTimeout = 10 * time.Second
	defaultChars   = 12000
	// A common desktop size; Chrome's headless default (780x437) hides
	// the navigation of responsive pages.
	defaultViewportWidth  = 1280
	defaultViewportHeight = 720
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

	opMu      sync.Mutex // serialises Run, Snapshot, Upload, Screenshot, Read
	busyMu    sync.Mutex // serialises stopBusy
	closeOnce sync.Once
	rawSeq    atomic.Int64
	// answeredAt is when Chrome last answered a command sent to one of
	// this connection's pages (unix ns): the busy watch counts only a wait
	// with none.
	answeredAt atomic.Int64

	mu          sync.Mutex
	tabSeq      int
	tabs        map[proto.TargetTargetID]*tab
	sessions    map[proto.TargetSessionID]*tab              // every session we set up -> its tab
	frameSess   map[proto.PageFrameID]proto.TargetSessionID // out-of-process frame -> its session
	quiet       map[proto.TargetSessionID]bool              // capture's rod sessions whose Page domain was disabled
	frameParent map[proto.PageFrameID]proto.TargetSessionID // out-of-process frame -> the session that attached it
	ownFrames   map[proto.PageFrameID]bool                  // frames this session's pages announced (BrowserContextID mode)
	active      *tab
	snap        *snapState
	kept        map[int]*kept // recent snapshots by epoch, for since
	epoch       int
	runCtx      context.Context
	holdCtx     context.Context // a code cell's, between its calls (Hold)
	gating      int             // gate decisions under way
	ev          events
	dl          downloads
	reach       reachCache
	armed       *redact.Matcher     // secrets typed in this session; nil until one is
	pageCode    bool                // Eval ran code in the page: no secret is typed after
	asked       map[string]struct{} // host:port a page of the session asked for (egressBlocked)
	seed        string              // the saved-storage script every new tab gets (ImportState)
}

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
	if o.ViewportWidth <= 0 || o.ViewportHeight <= 0 {
		o.ViewportWidth, o.ViewportHeight = defaultViewportWidth, defaultViewportHeight
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
		quiet:       map[proto.TargetSessionID]bool{},
		frameParent: map[proto.PageFrameID]proto.TargetSessionID{},
		ownFrames:   map[proto.PageFrameID]bool{},
		ev:          events{requests: map[proto.NetworkRequestID]reqInfo{}},
		dl:          downloads{byGUID: map[string]*download{}, max: maxDownloads},
	}
	events := rb.Event()
	go b.loop(events)
	if o.Egress != nil {
		o.Egress.OnBlock(b.egressBlocked)
	}

	fail := func(err error) (*Browser, error) {
		_ = b.Close()
		return nil, err
	}
	root := b.client(ctx, "")
	if o.DownloadDir != "" {
		if err := (proto.BrowserSetDownloadBehavior{Behavior: proto.BrowserSetDownloadBehaviorBehaviorAllowAndName,
			BrowserContextID: proto.BrowserBrowserContextID(o.BrowserContextID),
			DownloadPath:     o.DownloadDir, EventsEnabled: true}).Call(root); err != nil {
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

// Viewport is the CSS size pages are laid out at, as WIDTHxHEIGHT.
func (b *Browser) Viewport() string {
	return fmt.Sprintf("%dx%d", b.o.ViewportWidth, b.o.ViewportHeight)
}

// Forget drops the latest snapshot's ids: someone else drove the page, so
// none of them may be trusted. The next action naming one asks for a
// snapshot.
func (b *Browser) Forget() {
	b.mu.Lock()
	b.snap = nil
	b.mu.Unlock()
}

// Close disconnects from Chrome. Chrome and its pages keep running.
func (b *Browser) Close() error {
	b.closeOnce.Do(func() {
		if b.ctx.Err() == nil {
			ctx, cancel := context.WithTimeout(b.ctx, 2*time.Second)
			_ = proto.TargetSetAutoAttach{AutoAttach: false}.Call(b.client(ctx, ""))
			cancel()
		}
		if b.o.Egress != nil {
			b.o.Egress.OnBlock(nil)
		}
		b.cancel()
		_ = b.ws.Close()
	})
	return nil
}

// client is a CDP client for one session ("" is the browser) bound to ctx.
func (b *Browser) client(ctx context.Context, sid proto.TargetSessionID) cdp {
	return cdp{b: b.rb, sid: sid, ctx: ctx, answered: &b.answeredAt}
}

type cdp struct {
	b        *rod.Browser
	sid      proto.TargetSessionID
	ctx      context.Context
	answered *atomic.Int64
}

func (c cdp) Call(ctx context.Context, _ string, method string, params interface{}) ([]byte, error) {
	out, err := c.b.Call(ctx, string(c.sid), method, params)
	if c.answered != nil && c.sid != "" && (err == nil || isCDPError(err)) {
		// A page's (or frame's) session: the browser's own answers say
		// nothing of whether a page's renderer is free.
		c.answered.Store(time.Now().UnixNano())
	}
	return out, err
}

func (c cdp) GetSessionID() proto.TargetSessionID { return c.sid }
func (c cdp) GetContext() context.Context         { return c.ctx }
