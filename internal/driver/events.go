package driver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"
	"github.com/go-rod/stealth"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/listed"
)

// events are what happened since the last Run, each list bounded and
// counting what it did not keep.
type events struct {
	dialogs listed.List[contract.Dialog]
	console capped
	failed  capped
	sent    listed.List[contract.SentRequest]
	denied  listed.List[refusal] // every request the gate refused, listed in Held
	blocked listed.List[blocked]
	// act is the action in progress: the request refused or blocked that
	// was its own is kept there when it happens, so a page's many refused
	// requests cannot crowd it out of the bounded lists.
	act      *actionWatch
	openSeq  int
	requests map[proto.NetworkRequestID]reqInfo
}

// actionWatch is one action of a Run, while it runs.
type actionWatch struct {
	tab      *tab
	openedBy int // events.openSeq when it began: a tab opened later is the action's
	denied   *refusal
	blocked  *blocked
}

// deniedLocked notes a request the gate refused; b.mu is held.
func (b *Browser) deniedLocked(r refusal) {
	b.ev.denied.Add(r)
	if a := b.ev.act; a != nil && a.denied == nil && r.doc && (r.tab == nil || r.tab == a.tab || r.tab.openedAt > a.openedBy) {
		a.denied = &r
	}
}

// blockedLocked notes a request the reach guard or the egress proxy
// stopped; b.mu is held.
func (b *Browser) blockedLocked(br blocked) {
	b.ev.blocked.Add(br)
	if a := b.ev.act; a != nil && a.blocked == nil && br.tab != nil && br.tab == a.tab {
		a.blocked = &br
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

// event decodes msg's parameters as a T; ok says they decoded.
func event[T any, P interface {
	*T
	proto.Event
}](msg *rod.Message) (e P, ok bool) {
	e = new(T)
	return e, msg.Load(e)
}

func (b *Browser) handle(msg *rod.Message) {
	defer func() {
		if r := recover(); r != nil {
			b.log.Error().Str("method", msg.Method).Interface("panic", r).Msg("driver: event handler panicked")
		}
	}()
	switch msg.Method {
	case "Target.attachedToTarget":
		if e, ok := event[proto.TargetAttachedToTarget](msg); ok {
			go b.attached(msg.SessionID, e)
		}
	case "Target.detachedFromTarget":
		if e, ok := event[proto.TargetDetachedFromTarget](msg); ok {
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
		if e, ok := event[proto.TargetTargetCreated](msg); ok && b.o.TargetID != "" && e.TargetInfo != nil {
			go b.popupCreated(e.TargetInfo)
		}
	case "Target.targetDestroyed":
		if e, ok := event[proto.TargetTargetDestroyed](msg); ok {
			b.dropTab(e.TargetID)
		}
	case "Page.javascriptDialogOpening":
		if e, ok := event[proto.PageJavascriptDialogOpening](msg); ok {
			go b.dialog(msg.SessionID, e)
		}
	case "Page.frameAttached":
		if e, ok := event[proto.PageFrameAttached](msg); ok {
			b.ownFrame(e.FrameID)
		}
	case "Page.frameNavigated":
		if e, ok := event[proto.PageFrameNavigated](msg); ok {
			b.ownFrame(e.Frame.ID)
		}
		if e, ok := event[proto.PageFrameNavigated](msg); ok && e.Frame.ParentID == "" {
			b.bumpNav(msg.SessionID, proto.PageFrameID(""), e.Frame.URL, false)
			b.committed(msg.SessionID, e.Frame)
			b.navEnded(msg.SessionID, "")
		}
	case "Page.navigatedWithinDocument":
		if e, ok := event[proto.PageNavigatedWithinDocument](msg); ok {
			b.bumpNav(msg.SessionID, e.FrameID, e.URL, true)
		}
	case "Page.frameRequestedNavigation", "Page.frameStartedLoading", "Page.frameStoppedLoading":
		var fid proto.PageFrameID
		switch msg.Method {
		case "Page.frameRequestedNavigation":
			e, _ := event[proto.PageFrameRequestedNavigation](msg)
			fid = e.FrameID
		case "Page.frameStartedLoading":
			e, _ := event[proto.PageFrameStartedLoading](msg)
			fid = e.FrameID
		default:
			e, _ := event[proto.PageFrameStoppedLoading](msg)
			fid = e.FrameID
		}
		b.mu.Lock()
		if t := b.sessions[msg.SessionID]; t != nil && t.sess == msg.SessionID && string(fid) == string(t.id) {
			t.loading = msg.Method != "Page.frameStoppedLoading"
			if t.loading {
				t.parsed = false
			}
			t.navChanged()
		}
		b.mu.Unlock()
	case "Page.domContentEventFired":
		b.mu.Lock()
		if t := b.sessions[msg.SessionID]; t != nil && t.sess == msg.SessionID {
			t.parsed = true
		}
		b.mu.Unlock()
	case "Runtime.consoleAPICalled":
		if e, ok := event[proto.RuntimeConsoleAPICalled](msg); ok && e.Type == proto.RuntimeConsoleAPICalledTypeError {
			var parts []string
			for _, a := range e.Args {
				if a.Value.Nil() {
					parts = append(parts, a.Description)
				} else {
					parts = append(parts, a.Value.Str())
				}
			}
			b.addConsole(msg.SessionID, strings.Join(parts, " "))
		}
	case "Runtime.exceptionThrown":
		if e, ok := event[proto.RuntimeExceptionThrown](msg); ok {
			d := e.ExceptionDetails
			text := d.Text
			if d.Exception != nil && d.Exception.Description != "" {
				text = d.Exception.Description
			}
			b.addConsole(msg.SessionID, text)
		}
	case "Network.requestWillBeSent":
		if e, ok := event[proto.NetworkRequestWillBeSent](msg); ok {
			b.mu.Lock()
			if len(b.ev.requests) > 2000 {
				b.ev.requests = map[proto.NetworkRequestID]reqInfo{}
			}
			b.ev.requests[e.RequestID] = reqInfo{method: e.Request.Method, url: e.Request.URL}
			if t := b.sessions[msg.SessionID]; t != nil && t.sess == msg.SessionID && e.Type == proto.NetworkResourceTypeDocument && string(e.FrameID) == string(t.id) {
				// The tab asks for a new document: what the old one logged is not this one's.
				t.docConsole, t.docFailed, t.docStatus = capped{}, capped{}, 0
			}
			if b.o.Egress != nil {
				b.addAsked(e.Request.URL)
			}
			if !b.intercepting() && !safeMethod(e.Request.Method) && b.sessions[msg.SessionID] != nil {
				o, p := b.originPath(e.Request.URL)
				b.ev.sent.Add(contract.SentRequest{Method: e.Request.Method, Origin: o, Path: p})
			}
			b.mu.Unlock()
			b.navStarted(msg.SessionID, e)
		}
	case "Network.webSocketCreated":
		if e, ok := event[proto.NetworkWebSocketCreated](msg); ok && b.o.Egress != nil {
			b.mu.Lock()
			b.addAsked(e.URL)
			b.mu.Unlock()
		}
	case "Network.responseReceived":
		e, ok := event[proto.NetworkResponseReceived](msg)
		if !ok {
			break
		}
		if e.Type == proto.NetworkResourceTypeDocument {
			b.mu.Lock()
			if t := b.sessions[msg.SessionID]; t != nil && t.sess == msg.SessionID && string(e.FrameID) == string(t.id) {
				t.docStatus = e.Response.Status
				t.docResponses++
				t.unreached, t.unreachedURL = b.unreachedMark(e.Response), e.Response.URL
			}
			b.mu.Unlock()
		}
		b.navEnded(msg.SessionID, e.RequestID)
		if e.Response.Status >= 400 {
			b.mu.Lock()
			ri := b.ev.requests[e.RequestID]
			if ri.method == "" {
				ri.method = "GET"
			}
			o, p := b.originPath(e.Response.URL)
			if ri.method == "GET" && p == "/favicon.ico" {
				// Chromium asks every origin for its tab icon on its own;
				// a missing one says nothing about the page.
				b.mu.Unlock()
				break
			}
			b.failedLocked(msg.SessionID, fmt.Sprintf("%d %s %s%s", e.Response.Status, ri.method, o, p))
			b.mu.Unlock()
		}
	case "Network.loadingFailed":
		e, ok := event[proto.NetworkLoadingFailed](msg)
		if !ok {
			break
		}
		b.navFailed(msg.SessionID, e)
		b.navEnded(msg.SessionID, e.RequestID)
		// A request the guard or the gate stopped is listed as blocked or
		// denied, not again as failed.
		if !e.Canceled && !(b.intercepting() && strings.Contains(e.ErrorText, "ERR_BLOCKED_BY_CLIENT")) {
			b.mu.Lock()
			ri := b.ev.requests[e.RequestID]
			o, p := b.originPath(ri.url)
			b.failedLocked(msg.SessionID, fmt.Sprintf("%s %s %s%s", b.clip(e.ErrorText, 60), ri.method, o, p))
			b.mu.Unlock()
		}
	case "Fetch.requestPaused":
		if e, ok := event[proto.FetchRequestPaused](msg); ok {
			counted := b.o.RequestGate != nil && !safeMethod(e.Request.Method) && e.ResponseStatusCode == nil
			if counted {
				// Counted here, not in the goroutine, so an action settling
				// right now already sees that a decision is under way.
				b.mu.Lock()
				b.gating++
				b.mu.Unlock()
			}
			go b.paused(msg.SessionID, e, counted)
		}
	case "Browser.downloadWillBegin":
		if e, ok := event[proto.BrowserDownloadWillBegin](msg); ok {
			b.downloadBegin(e)
		}
	case "Browser.downloadProgress":
		if e, ok := event[proto.BrowserDownloadProgress](msg); ok {
			b.downloadProgress(e)
		}
	}
}

// bumpNav counts a navigation of the main frame of the tab sid drives
// (ids in hand go stale), to url. A same-document one (within: a fragment
// link, history.pushState) counts only when it changes the URL past its
// fragment: a route change of a single-page app does, a jump to an anchor
// on the page does not.
func (b *Browser) bumpNav(sid proto.TargetSessionID, frame proto.PageFrameID, url string, within bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.sessions[sid]
	if t == nil || t.sess != sid {
		return // an iframe's own navigation does not move the page
	}
	if frame != "" && string(frame) != string(t.id) {
		return
	}
	url = noFragment(url)
	if within && url != "" && url == t.url {
		return
	}
	t.url = url
	t.navSeq++
}

// committed notes what the main frame of the tab sid drives committed: the
// browser's error page for an address it could not load (Frame's
// unreachableUrl), or a page.
func (b *Browser) committed(sid proto.TargetSessionID, f *proto.PageFrame) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.sessions[sid]
	if t == nil || t.sess != sid {
		return
	}
	t.unreachable = ""
	if strings.HasPrefix(f.URL, errorPageScheme) {
		t.unreachable = f.UnreachableURL
	}
	t.navChanged()
}

// errorPageScheme is the scheme of the page Chrome shows in a tab whose
// navigation failed (chrome-error://chromewebdata/).
const errorPageScheme = "chrome-error:"

// navFailed notes why the main-frame navigation of the tab sid drives
// failed, when e is its request's failure. A refusal of the reach guard
// (noted by block, under the same address) stays the reason: Chrome's
// net::ERR_BLOCKED_BY_CLIENT says less.
func (b *Browser) navFailed(sid proto.TargetSessionID, e *proto.NetworkLoadingFailed) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.sessions[sid]
	if t == nil || t.sess != sid || t.pend == nil || t.pend.id != e.RequestID {
		return
	}
	if t.failURL == t.pend.url && t.failWhy != "" && strings.Contains(e.ErrorText, "ERR_BLOCKED_BY_CLIENT") {
		return
	}
	t.failURL, t.failWhy = t.pend.url, b.clip(e.ErrorText, 80)
}

// noFragment is u without its fragment, unless the fragment is a route
// (#/inbox, #!/inbox): hash-routed apps change their view by it, often
// reusing elements of the same shape, so ids from the view before must not
// be taken for the view after.
func noFragment(u string) string {
	if i := strings.IndexByte(u, '#'); i >= 0 {
		if f := u[i+1:]; strings.HasPrefix(f, "/") || strings.HasPrefix(f, "!") {
			return u
		}
		return u[:i]
	}
	return u
}

func (b *Browser) addConsole(sid proto.TargetSessionID, s string) {
	line := b.clip(strings.TrimSpace(s), 300)
	b.mu.Lock()
	b.ev.console.Add(line)
	if t := b.sessions[sid]; t != nil {
		t.docConsole.Add(line)
	}
	b.mu.Unlock()
}

// capped is a list of lines: console errors, failed requests.
type capped = listed.List[string]

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
		if t != nil && t.sess != sid && b.sessions[t.sess] == t {
			// A second session with a page this connection already drives:
			// the one rod attached for capture (Browser.page). It is not
			// the tab's: set up as well, it would get every page event
			// again (Chrome sending each twice, requests held twice, lines
			// listed twice).
			b.mu.Unlock()
			return
		}
		if t == nil {
			b.tabSeq++
			b.ev.openSeq++
			t = &tab{id: info.TargetID, short: fmt.Sprintf("t%d", b.tabSeq), sess: sid, opener: info.OpenerID,
				ready: make(chan struct{}), openedAt: b.ev.openSeq, url: noFragment(info.URL)}
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
	if b.intercepting() && (t != nil || strings.Contains(string(info.Type), "worker")) {
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
		if info.Type == proto.TargetTargetInfoTypePage {
			b.mu.Lock()
			seed := b.seed
			b.mu.Unlock()
			if seed != "" {
				b.sendNoWait(sid, proto.PageAddScriptToEvaluateOnNewDocument{Source: seed, WorldName: stateWorld})
			}
		}
		if info.Type == proto.TargetTargetInfoTypePage {
			// Lay the page out at the session's viewport before it runs.
			// The override lasts as long as this connection's session with
			// the page, so a worker that takes a found browser sets it again.
			b.sendNoWait(sid, proto.EmulationSetDeviceMetricsOverride{Width: b.o.ViewportWidth, Height: b.o.ViewportHeight,
				ScreenWidth: &b.o.ViewportWidth, ScreenHeight: &b.o.ViewportHeight})
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

// failedLocked lists a failed request for the browser and for the tab of
// the session it was made in; b.mu is held.
func (b *Browser) failedLocked(session proto.TargetSessionID, line string) {
	b.ev.failed.Add(line)
	if t := b.sessions[session]; t != nil {
		t.docFailed.Add(line)
	}
}
