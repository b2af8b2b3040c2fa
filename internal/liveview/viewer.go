package liveview

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	rodcdp "github.com/go-rod/rod/lib/cdp"
	"github.com/go-rod/rod/lib/proto"
	"github.com/go-rod/rod/lib/utils"
	"github.com/rs/zerolog"
)

// viewer is one connected person: a CDP connection of its own to the
// session's browser, attached to the active page in a session of its own
// (so other screencasts, a recorder's, run beside it), streaming frames
// out and input in.
type viewer struct {
	s     *Server
	se    *session
	c     *websocket.Conn
	watch bool
	log   zerolog.Logger

	cdp    *rodcdp.Client
	sid    atomic.Value // string: our CDP session on the active page
	target string       // only follow touches it

	frames chan frame  // newest wins
	texts  chan []byte // state and errors for the page
	wake   chan struct{}
}

type frame struct {
	data          []byte
	width, height float64 // CSS px of the page the frame shows
}

// follow interval: how often the view checks which page is active.
const followEvery = 500 * time.Millisecond

func (v *viewer) run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ws := &rodcdp.WebSocket{}
	if err := ws.Connect(ctx, v.se.page.CDPURL, nil); err != nil {
		return fmt.Errorf("liveview: reach the browser: %w", err)
	}
	defer func() { _ = ws.Close() }()
	v.cdp = rodcdp.New().Logger(utils.LoggerQuiet).Start(ws)
	v.frames = make(chan frame, 1)
	v.texts = make(chan []byte, 16)
	v.wake = make(chan struct{}, 1)
	go v.events(ctx)
	if err := v.follow(ctx); err != nil {
		return err
	}
	errc := make(chan error, 3)
	go func() { errc <- v.write(ctx) }()
	// A socket read or write whose context ends closes the socket at once;
	// the session's end closes it with its own code instead (serveSocket).
	go func() { errc <- v.read(context.WithoutCancel(ctx)) }()
	go func() { errc <- v.keepUp(ctx) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		return errEnded
	}
}

// call runs one CDP method on our page session (sid "" is the browser).
func (v *viewer) call(ctx context.Context, sid, method string, params any) ([]byte, error) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return v.cdp.Call(cctx, sid, method, params)
}

// follow attaches to the session's active page, if it changed, and starts
// the screencast there.
func (v *viewer) follow(ctx context.Context) error {
	actx, cancel := context.WithTimeout(ctx, 10*time.Second)
	target, err := v.se.page.Active(actx)
	cancel()
	if err != nil {
		return fmt.Errorf("liveview: find the active page: %w", err)
	}
	if target == v.target {
		return nil
	}
	if old := v.currentSID(); old != "" {
		_, _ = v.call(ctx, old, "Page.stopScreencast", nil)
		_, _ = v.call(ctx, "", "Target.detachFromTarget", proto.TargetDetachFromTarget{SessionID: proto.TargetSessionID(old)})
	}
	raw, err := v.call(ctx, "", "Target.attachToTarget", proto.TargetAttachToTarget{TargetID: proto.TargetTargetID(target), Flatten: true})
	if err != nil {
		return fmt.Errorf("liveview: attach to the active page: %w", err)
	}
	var res proto.TargetAttachToTargetResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return err
	}
	v.sid.Store(string(res.SessionID))
	v.target = target
	_, err = v.call(ctx, string(res.SessionID), "Page.startScreencast", proto.PageStartScreencast{
		Format: proto.PageStartScreencastFormatJpeg, Quality: &v.s.o.FrameQuality, EveryNthFrame: intp(1)})
	if err != nil {
		return fmt.Errorf("liveview: start the screencast: %w", err)
	}
	return nil
}

func intp(n int) *int { return &n }

// events takes the browser's events: frames of our session are acked and
// offered to the writer, newest first.
func (v *viewer) events(ctx context.Context) {
	for ev := range v.cdp.Event() {
		if ev.Method != "Page.screencastFrame" || ev.SessionID != v.currentSID() {
			continue
		}
		var f proto.PageScreencastFrame
		if json.Unmarshal(ev.Params, &f) != nil || f.Metadata == nil {
			continue
		}
		sid := ev.SessionID
		// Acked off this loop: a call waits on the reader this loop feeds.
		go func() {
			_, _ = v.call(ctx, sid, "Page.screencastFrameAck", proto.PageScreencastFrameAck{SessionID: f.SessionID})
		}()
		fr := frame{data: f.Data, width: f.Metadata.DeviceWidth, height: f.Metadata.DeviceHeight}
		select {
		case <-v.frames:
		default:
		}
		select {
		case v.frames <- fr:
		default:
		}
	}
}

// currentSID is our session on the page the view follows now.
func (v *viewer) currentSID() string {
	s, _ := v.sid.Load().(string)
	return s
}

// writeWait bounds one write to the page: a viewer that stops reading is
// dropped rather than holding the stream.
const writeWait = 10 * time.Second

func (v *viewer) send(ctx context.Context, typ websocket.MessageType, b []byte) error {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeWait)
	defer cancel()
	return v.c.Write(wctx, typ, b)
}

// write sends frames (a size line when it changed, then the JPEG) and
// state lines to the page.
func (v *viewer) write(ctx context.Context) error {
	var w, h float64
	for {
		select {
		case <-ctx.Done():
			return errEnded
		case t := <-v.texts:
			if err := v.send(ctx, websocket.MessageText, t); err != nil {
				return err
			}
		case f := <-v.frames:
			if f.width != w || f.height != h {
				w, h = f.width, f.height
				b, _ := json.Marshal(map[string]any{"t": "size", "w": w, "h": h})
				if err := v.send(ctx, websocket.MessageText, b); err != nil {
					return err
				}
			}
			if err := v.send(ctx, websocket.MessageBinary, f.data); err != nil {
				return err
			}
		}
	}
}

// say queues a line for the page; a full queue drops it (state is sent
// again on change).
func (v *viewer) say(m map[string]any) {
	b, _ := json.Marshal(m)
	select {
	case v.texts <- b:
	default:
	}
}

// keepUp follows the active page and tells the page who has the browser
// and where it is.
func (v *viewer) keepUp(ctx context.Context) error {
	t := time.NewTicker(followEvery)
	defer t.Stop()
	var last string
	for {
		if err := v.follow(ctx); err != nil {
			return err
		}
		st := v.se.hands.State()
		addr := ""
		if raw, err := v.call(ctx, "", "Target.getTargetInfo", proto.TargetGetTargetInfo{TargetID: proto.TargetTargetID(v.target)}); err == nil {
			var ti proto.TargetGetTargetInfoResult
			if json.Unmarshal(raw, &ti) == nil && ti.TargetInfo != nil {
				addr = ti.TargetInfo.URL
			}
		}
		m := map[string]any{"t": "state", "url": addr, "person": st.Person, "taken_over": st.TakenOver, "watch": v.watch, "epoch": st.Epoch}
		b, _ := json.Marshal(m)
		if string(b) != last {
			last = string(b)
			v.say(m)
		}
		select {
		case <-ctx.Done():
			return errEnded
		case <-t.C:
		case <-v.wake:
		}
	}
}

// input is one message from the viewer page.
type input struct {
	T          string  `json:"t"`
	Type       string  `json:"type,omitempty"`
	X          float64 `json:"x,omitempty"`
	Y          float64 `json:"y,omitempty"`
	Button     string  `json:"button,omitempty"`
	Buttons    int     `json:"buttons,omitempty"`
	ClickCount int     `json:"clickCount,omitempty"`
	Modifiers  int     `json:"modifiers,omitempty"`
	DX         float64 `json:"dx,omitempty"`
	DY         float64 `json:"dy,omitempty"`
	Key        string  `json:"key,omitempty"`
	Code       string  `json:"code,omitempty"`
	Text       string  `json:"text,omitempty"`
	KeyCode    int     `json:"keyCode,omitempty"`
	Location   int     `json:"location,omitempty"`
	URL        string  `json:"url,omitempty"`
}

// Bounds on what a viewer may send.
const (
	maxPaste = 64 << 10
	maxCoord = 100000
)

func (v *viewer) read(ctx context.Context) error {
	for {
		var in input
		if err := readJSON(ctx, v.c, &in); err != nil {
			var se *json.SyntaxError
			if errors.As(err, &se) {
				continue
			}
			return err
		}
		if v.watch {
			continue // watch-only: every input is dropped here, on the server
		}
		if err := v.apply(ctx, in); err != nil {
			v.say(map[string]any{"t": "error", "message": err.Error()})
		}
		// Tell the page who has the browser now, not at the next tick.
		select {
		case v.wake <- struct{}{}:
		default:
		}
	}
}

// errInput refuses a malformed input message.
type errInput string

func (e errInput) Error() string { return "ignored input: " + string(e) }

var (
	mouseTypes = map[string]proto.InputDispatchMouseEventType{
		"mousePressed": proto.InputDispatchMouseEventTypeMousePressed, "mouseReleased": proto.InputDispatchMouseEventTypeMouseReleased,
		"mouseMoved": proto.InputDispatchMouseEventTypeMouseMoved}
	buttons = map[string]proto.InputMouseButton{"": proto.InputMouseButtonNone, "none": proto.InputMouseButtonNone,
		"left": proto.InputMouseButtonLeft, "middle": proto.InputMouseButtonMiddle, "right": proto.InputMouseButtonRight}
	keyTypes = map[string]proto.InputDispatchKeyEventType{"keyDown": proto.InputDispatchKeyEventTypeKeyDown,
		"keyUp": proto.InputDispatchKeyEventTypeKeyUp, "rawKeyDown": proto.InputDispatchKeyEventTypeRawKeyDown}
)

func okCoord(f float64) bool { return !math.IsNaN(f) && f >= -maxCoord && f <= maxCoord }

// command is what one viewer input asks of the page: a DevTools method and
// its parameters, and how the hands take it. It checks the whole message
// first (bounded coordinates, known event types, short keys and texts, an
// http or https address), so nothing malformed reaches the page.
type command struct {
	method string
	params any
	// take and give move the hands; move is a plain cursor move (it
	// reaches the page only while the person drives); back reads the
	// history first.
	take, give, move, back bool
}

// commandOf reads an input message; an error is an errInput.
func commandOf(in input) (command, error) {
	if !okCoord(in.X) || !okCoord(in.Y) || !okCoord(in.DX) || !okCoord(in.DY) {
		return command{}, errInput("coordinates out of range")
	}
	if in.Modifiers < 0 || in.Modifiers > 15 || in.ClickCount < 0 || in.ClickCount > 3 || in.Buttons < 0 || in.Buttons > 31 {
		return command{}, errInput("modifiers, click count or buttons out of range")
	}
	switch in.T {
	case "take":
		return command{take: true}, nil
	case "give":
		return command{give: true}, nil
	case "mouse":
		typ, ok := mouseTypes[in.Type]
		btn, ok2 := buttons[in.Button]
		if !ok || !ok2 {
			return command{}, errInput("unknown mouse event")
		}
		b := in.Buttons
		ev := proto.InputDispatchMouseEvent{Type: typ, X: in.X, Y: in.Y, Button: btn, Buttons: &b, ClickCount: in.ClickCount, Modifiers: in.Modifiers}
		return command{method: "Input.dispatchMouseEvent", params: ev, move: typ == proto.InputDispatchMouseEventTypeMouseMoved && in.Buttons == 0}, nil
	case "wheel":
		ev := proto.InputDispatchMouseEvent{Type: proto.InputDispatchMouseEventTypeMouseWheel, X: in.X, Y: in.Y, DeltaX: in.DX, DeltaY: in.DY, Modifiers: in.Modifiers}
		return command{method: "Input.dispatchMouseEvent", params: ev}, nil
	case "key":
		typ, ok := keyTypes[in.Type]
		if !ok || len(in.Key) > 32 || len(in.Code) > 32 || len(in.Text) > 8 || in.KeyCode < 0 || in.KeyCode > 255 || in.Location < 0 || in.Location > 3 {
			return command{}, errInput("unknown key event")
		}
		if typ == proto.InputDispatchKeyEventTypeKeyDown && in.Text == "" {
			typ = proto.InputDispatchKeyEventTypeRawKeyDown
		}
		loc := in.Location
		ev := proto.InputDispatchKeyEvent{Type: typ, Key: in.Key, Code: in.Code, Text: in.Text, UnmodifiedText: in.Text,
			WindowsVirtualKeyCode: in.KeyCode, Modifiers: in.Modifiers, Location: &loc}
		return command{method: "Input.dispatchKeyEvent", params: ev}, nil
	case "paste":
		if len(in.Text) > maxPaste {
			return command{}, errInput("paste over 64 KiB")
		}
		return command{method: "Input.insertText", params: proto.InputInsertText{Text: in.Text}}, nil
	case "goto":
		u, err := url.Parse(in.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(in.URL) > 8192 {
			return command{}, errInput("the address bar takes an http or https address")
		}
		return command{method: "Page.navigate", params: proto.PageNavigate{URL: in.URL}}, nil
	case "back":
		return command{back: true}, nil
	case "reload":
		return command{method: "Page.reload", params: proto.PageReload{}}, nil
	}
	return command{}, errInput("unknown message " + fmt.Sprintf("%q", in.T))
}

// apply sends one input to the page, under the hands.
func (v *viewer) apply(ctx context.Context, in input) error {
	c, err := commandOf(in)
	if err != nil {
		return err
	}
	h := v.se.hands
	sid := v.currentSID()
	switch {
	case c.take:
		h.TakeOver()
		return nil
	case c.give:
		h.GiveBack()
		return nil
	case c.back:
		return h.Person(func() error {
			raw, err := v.call(ctx, sid, "Page.getNavigationHistory", nil)
			if err != nil {
				return err
			}
			var hist proto.PageGetNavigationHistoryResult
			if err := json.Unmarshal(raw, &hist); err != nil {
				return err
			}
			if hist.CurrentIndex < 1 || hist.CurrentIndex >= len(hist.Entries) {
				return errInput("there is no page to go back to")
			}
			_, err = v.call(ctx, sid, "Page.navigateToHistoryEntry", proto.PageNavigateToHistoryEntry{EntryID: hist.Entries[hist.CurrentIndex-1].ID})
			return err
		})
	}
	send := func() error { _, err := v.call(ctx, sid, c.method, c.params); return err }
	if c.move {
		// A cursor resting over the view is no one driving: a plain
		// move reaches the page only while the person has it.
		_, err := h.Move(send)
		return err
	}
	return h.Person(send)
}

// readJSON reads one text message into v.
func readJSON(ctx context.Context, c *websocket.Conn, v any) error {
	typ, b, err := c.Read(ctx)
	if err != nil {
		return err
	}
	if typ != websocket.MessageText {
		return &json.SyntaxError{}
	}
	return json.Unmarshal(b, v)
}
