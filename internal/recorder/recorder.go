package recorder

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"image/jpeg"
	"strings"
	"sync"
	"time"

	"github.com/go-rod/rod"
	rodcdp "github.com/go-rod/rod/lib/cdp"
	"github.com/go-rod/rod/lib/proto"
	"github.com/go-rod/rod/lib/utils"
	"github.com/rs/zerolog"

	"github.com/durable-browser/durable-browser/internal/evidence"
)

// Screencast limits the issue sets: frames at most 800 px wide, at most 10 a
// second (the newest of each tenth wins).
const (
	MaxWidth = 800
	// FrameEvery is the least time between two kept frames.
	FrameEvery = 100 * time.Millisecond
	// jpegQuality is the screencast's JPEG quality.
	jpegQuality = 70
	// margin widens every credential interval on both sides: the frame's
	// swap time and the page's clock are read in different processes.
	margin = 100 // ms
	// checkTimeout bounds one credential check; a check that does not
	// answer keeps no frame.
	checkTimeout = 2 * time.Second
	// worldName is the isolated world the guard runs in.
	worldName = "durable-browser-recorder"
	// bindingName is how the guard reports to the recorder.
	bindingName = "__durableBrowserRecorder"
	// Tool is the evidence tool name chunk keys carry.
	Tool = "recording"
	// ChunkExt is the chunks' file extension.
	ChunkExt = "dbrec"
)

//go:embed guard.js
var guardJS string

// Options start a recording of one session's page.
type Options struct {
	// CDPURL is the browser's DevTools WebSocket; the recorder opens its own
	// connection and its own session on the page, so a live view or the
	// driver screencasting or driving the same page are not disturbed.
	CDPURL   string
	TargetID string
	// Store files the chunks; WorkflowID and SessionTag place them beside
	// the session's evidence.
	Store      evidence.Store
	WorkflowID string
	SessionTag string
	// FlushEvery is how often a chunk is filed (default 10 s).
	FlushEvery time.Duration
	Logger     zerolog.Logger
}

// Mark is where a moment falls in a recording: receipts carry it.
type Mark struct {
	Recording string `json:"recording"`
	OffsetMS  int64  `json:"offset_ms"`
}

// Recorder records one session's page. Its methods are safe for concurrent
// use; Close ends it.
type Recorder struct {
	o       Options
	id      string
	start   int64 // browser clock, unix ms
	browser *rod.Browser
	log     zerolog.Logger

	in     chan any
	done   chan struct{}
	cancel context.CancelFunc

	mu       sync.Mutex
	skew     int64 // browser clock minus this process's, ms
	closed   bool
	closeErr error
}

// Items the event goroutine and the methods hand to the loop, in order.
type (
	frameItem struct {
		t    int64
		w, h int
		jpeg []byte
	}
	markItem  struct{ t int64 }
	checkItem struct {
		id     int64
		now    int64
		reason string
	}
	contextItem struct {
		id      proto.RuntimeExecutionContextID
		gone    bool
		cleared bool
	}
	holdItem struct {
		delta   int
		secrets []string
		reason  string
	}
	followItem struct{ target string }
	closeItem  struct {
		reason string
		done   chan error
	}
)

// Start connects to the browser and begins recording the page.
func Start(ctx context.Context, o Options) (*Recorder, error) {
	if o.FlushEvery <= 0 {
		o.FlushEvery = 10 * time.Second
	}
	// A connection of its own: closing it ends the recorder's session and
	// nothing else.
	ws := &rodcdp.WebSocket{}
	if err := ws.Connect(ctx, o.CDPURL, nil); err != nil {
		return nil, fmt.Errorf("recorder: connecting to the browser: %w", err)
	}
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	b := rod.New().ControlURL("").SlowMotion(0).Trace(false).Monitor("").Logger(utils.LoggerQuiet).
		Client(rodcdp.New().Logger(utils.LoggerQuiet).Start(ws)).NoDefaultDevice().Context(lctx)
	if err := b.Connect(); err != nil {
		cancel()
		_ = ws.Close()
		return nil, fmt.Errorf("recorder: connecting to the browser: %w", err)
	}
	now := time.Now().UnixMilli()
	r := &Recorder{o: o, browser: b, log: o.Logger.With().Str("component", "recorder").Logger(),
		in: make(chan any, 256), done: make(chan struct{}), cancel: cancel,
		id: fmt.Sprintf("r%013d-%s", now, evidence.SHA256Hex([]byte(fmt.Sprint(o.SessionTag, now, time.Now().UnixNano())))[:6]),
	}
	// The first frame kept is filed at once, as after a gap.
	l := &loop{r: r, ctx: lctx, resumed: true}
	if err := l.attach(o.TargetID); err != nil {
		_ = b.Close()
		cancel()
		return nil, err
	}
	r.start = time.Now().UnixMilli() + r.skewMS()
	l.chunkFrom, l.lastClean = r.start, r.start
	go l.run()
	return r, nil
}

// ID names the recording.
func (r *Recorder) ID() string { return r.id }

// Offset is where this moment falls in the recording.
func (r *Recorder) Offset() Mark {
	off := time.Now().UnixMilli() + r.skewMS() - r.start
	if off < 0 {
		off = 0
	}
	return Mark{Recording: r.id, OffsetMS: off}
}

func (r *Recorder) skewMS() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.skew
}

// HoldSecrets keeps every frame out from now until release is called, then
// until the page no longer shows any of the values: a {{secret:NAME}} is
// being typed. The values stay in memory only, to check the page for them.
func (r *Recorder) HoldSecrets(values []string) (release func()) {
	var vs []string
	for _, v := range values {
		if v != "" {
			vs = append(vs, v)
		}
	}
	r.send(holdItem{delta: 1, secrets: vs, reason: GapSecretTyped})
	var once sync.Once
	return func() { once.Do(func() { r.send(holdItem{delta: -1}) }) }
}

// Follow moves the recording to another page target of the session (the
// tab the agent made active).
func (r *Recorder) Follow(targetID string) {
	if targetID != "" {
		r.send(followItem{target: targetID})
	}
}

func (r *Recorder) send(v any) {
	select {
	case r.in <- v:
	case <-r.done:
	}
}

// Close files what is left with the reason the recording ended (GapReleased,
// GapWorkerStopped) and disconnects. It is idempotent.
func (r *Recorder) Close(reason string) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		<-r.done
		return r.closeErr
	}
	r.closed = true
	r.mu.Unlock()
	c := closeItem{reason: reason, done: make(chan error, 1)}
	var err error
	select {
	case r.in <- c:
		select {
		case err = <-c.done:
		case <-time.After(30 * time.Second):
			err = errors.New("recorder: the last chunk was not filed within 30 s")
		}
	case <-r.done:
	}
	r.cancel()
	_ = r.browser.Close()
	<-r.done
	r.mu.Lock()
	r.closeErr = err
	r.mu.Unlock()
	return err
}

// loop is the recorder's state, owned by one goroutine.
type loop struct {
	r   *Recorder
	ctx context.Context

	page    *rod.Page
	target  string
	context proto.RuntimeExecutionContextID
	stopEv  func()

	latest   *frameItem // newest frame not yet taken
	lastTake time.Time
	pending  []Frame // taken, awaiting a clean check

	checkID   int64
	checking  bool
	checkSent time.Time

	lastClean  int64 // browser ms of the last clean check
	dirtyUntil int64 // no frame at or before dirtyUntil+margin is kept
	gap        *Gap  // open gap
	lastKept   int64 // the last kept frame's time
	resumed    bool  // a gap closed: file the next kept frame at once
	holds      int
	secrets    []string

	chunkFrom int64
	seq       int
	frames    []Frame
	gaps      []Gap
	bytes     int
}

// attach opens a session of the recorder's own on target, installs the
// guard and starts the screencast.
func (l *loop) attach(target string) error {
	r := l.r
	res, err := proto.TargetAttachToTarget{TargetID: proto.TargetTargetID(target), Flatten: true}.Call(r.browser)
	if err != nil {
		return fmt.Errorf("recorder: attaching to the page: %w", err)
	}
	p := r.browser.PageFromSession(res.SessionID)
	l.page, l.target, l.context = p, target, 0
	ectx, stop := context.WithCancel(l.ctx)
	if l.stopEv != nil {
		l.stopEv()
	}
	l.stopEv = stop
	events := r.browser.Context(ectx).Event()
	sid := res.SessionID
	go func() {
		for msg := range events {
			if msg.SessionID != sid {
				continue
			}
			l.event(p, target, msg)
		}
	}()
	steps := []func() error{
		func() error {
			return proto.RuntimeAddBinding{Name: bindingName, ExecutionContextName: worldName}.Call(p)
		},
		func() error {
			_, err := proto.PageAddScriptToEvaluateOnNewDocument{Source: strings.ReplaceAll(guardJS, "BINDING", "'"+bindingName+"'"),
				WorldName: worldName, RunImmediately: true}.Call(p)
			return err
		},
		func() error { return proto.PageEnable{}.Call(p) },
		func() error { return proto.RuntimeEnable{}.Call(p) },
		func() error {
			// The browser's clock, as pages and frame timestamps read it.
			t0 := time.Now()
			v, err := proto.RuntimeEvaluate{Expression: "Date.now()", ReturnByValue: true}.Call(p)
			if err != nil {
				return err
			}
			mid := t0.Add(time.Since(t0) / 2).UnixMilli()
			r.mu.Lock()
			r.skew = int64(v.Result.Value.Num()) - mid
			r.mu.Unlock()
			return nil
		},
		func() error {
			q, w, n := jpegQuality, MaxWidth, 1
			h := 2 * MaxWidth
			return proto.PageStartScreencast{Format: proto.PageStartScreencastFormatJpeg, Quality: &q, MaxWidth: &w, MaxHeight: &h, EveryNthFrame: &n}.Call(p)
		},
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return fmt.Errorf("recorder: preparing the page: %w", err)
		}
	}
	return nil
}

// event hands one CDP event of the recorder's session to the loop.
func (l *loop) event(p *rod.Page, target string, msg *rod.Message) {
	r := l.r
	switch msg.Method {
	case (&proto.PageScreencastFrame{}).ProtoEvent():
		var e proto.PageScreencastFrame
		if !msg.Load(&e) {
			return
		}
		go func() { _ = proto.PageScreencastFrameAck{SessionID: e.SessionID}.Call(p) }()
		t := int64(float64(e.Metadata.Timestamp) * 1000)
		if t == 0 {
			t = time.Now().UnixMilli() + r.skewMS()
		}
		c, err := jpeg.DecodeConfig(bytes.NewReader(e.Data))
		if err != nil {
			return
		}
		r.send(frameItem{t: t, w: c.Width, h: c.Height, jpeg: e.Data})
	case (&proto.RuntimeBindingCalled{}).ProtoEvent():
		var e proto.RuntimeBindingCalled
		if !msg.Load(&e) || e.Name != bindingName {
			return
		}
		var m struct {
			K      string  `json:"k"`
			T      int64   `json:"t"`
			ID     int64   `json:"id"`
			Now    int64   `json:"now"`
			Reason *string `json:"reason"`
		}
		if json.Unmarshal([]byte(e.Payload), &m) != nil {
			return
		}
		switch m.K {
		case "mark":
			r.send(markItem{t: m.T})
		case "check":
			reason := ""
			if m.Reason != nil {
				reason = *m.Reason
			}
			r.send(checkItem{id: m.ID, now: m.Now, reason: reason})
		}
	case (&proto.RuntimeExecutionContextCreated{}).ProtoEvent():
		var e proto.RuntimeExecutionContextCreated
		if !msg.Load(&e) || e.Context.Name != worldName {
			return
		}
		if f, ok := e.Context.AuxData["frameId"]; ok && f.Str() == target {
			r.send(contextItem{id: e.Context.ID})
		}
	case (&proto.RuntimeExecutionContextDestroyed{}).ProtoEvent():
		var e proto.RuntimeExecutionContextDestroyed
		if msg.Load(&e) {
			r.send(contextItem{id: e.ExecutionContextID, gone: true})
		}
	case (&proto.RuntimeExecutionContextsCleared{}).ProtoEvent():
		r.send(contextItem{cleared: true})
	}
}

func (l *loop) run() {
	defer close(l.r.done)
	tick := time.NewTicker(FrameEvery)
	defer tick.Stop()
	flush := time.NewTicker(l.r.o.FlushEvery)
	defer flush.Stop()
	for {
		select {
		case <-l.ctx.Done():
			return
		case v := <-l.r.in:
			switch it := v.(type) {
			case frameItem:
				l.latest = &it
			case markItem:
				l.dirty(it.t-margin, it.t, GapCredential)
			case checkItem:
				if it.id == l.checkID && l.checking {
					l.checking = false
					l.checked(it.now, it.reason)
				}
			case contextItem:
				switch {
				case it.cleared:
					l.context = 0
				case it.gone:
					if it.id == l.context {
						l.context = 0
					}
				default:
					l.context = it.id
				}
			case holdItem:
				l.holds += it.delta
				if it.delta > 0 {
					l.secrets = append(l.secrets, it.secrets...)
					now := time.Now().UnixMilli() + l.r.skewMS()
					// Conservative: from the last clean check, whatever the
					// two clocks say.
					l.dirty(min(l.lastClean, now-margin), now, it.reason)
				}
			case followItem:
				if it.target != l.target {
					l.follow(it.target)
				}
			case closeItem:
				it.done <- l.finish(it.reason)
				return
			}
		case <-tick.C:
			if l.checking && time.Since(l.checkSent) > checkTimeout {
				l.checking = false
				l.checked(time.Now().UnixMilli()+l.r.skewMS(), GapUncheckable)
			}
			if l.latest != nil && !l.checking && time.Since(l.lastTake) >= FrameEvery {
				f := l.latest
				l.latest = nil
				l.lastTake = time.Now()
				l.pending = append(l.pending, Frame{T: f.t, Width: f.w, Height: f.h, JPEG: f.jpeg})
				l.check()
			}
		case <-flush.C:
			if err := l.flush(time.Now().UnixMilli()+l.r.skewMS(), ""); err != nil {
				l.r.log.Warn().Err(err).Msg("filing a recording chunk")
			}
		}
	}
}

// check asks the guard in the page's main frame; its answer comes back
// through the binding, behind every mark the page reported before it.
func (l *loop) check() {
	l.checkID++
	l.checking, l.checkSent = true, time.Now()
	if l.context == 0 {
		l.checking = false
		l.checked(time.Now().UnixMilli()+l.r.skewMS(), GapUncheckable)
		return
	}
	secrets, _ := json.Marshal(l.secrets)
	if l.secrets == nil {
		secrets = []byte("[]")
	}
	id, ctxID, p := l.checkID, l.context, l.page
	go func() {
		res, err := proto.RuntimeEvaluate{Expression: fmt.Sprintf("globalThis.__dbrec ? (__dbrec.check(%d, %s), true) : false", id, secrets),
			ContextID: ctxID, ReturnByValue: true}.Call(p)
		if err != nil || res.ExceptionDetails != nil || !res.Result.Value.Bool() {
			l.r.send(checkItem{id: id, now: time.Now().UnixMilli() + l.r.skewMS(), reason: GapUncheckable})
		}
	}()
}

// dirty says a credential may have been on the page from from until at
// least until: no frame of that stretch is kept, and a gap opens.
func (l *loop) dirty(from, until int64, reason string) {
	// Frames already kept were confirmed by a clean check after them: the
	// gap starts after the last.
	from = max(from, l.chunkFrom, l.lastKept+1)
	if l.gap == nil {
		l.gap = &Gap{From: from, To: from, Reason: reason}
	} else if from < l.gap.From {
		l.gap.From = from
	}
	l.dirtyUntil = max(l.dirtyUntil, until)
	kept := l.pending[:0]
	for _, f := range l.pending {
		if f.T < l.gap.From {
			kept = append(kept, f)
		}
	}
	l.pending = kept
}

// checked takes a check's answer: now is the page's clock when it looked.
func (l *loop) checked(now int64, reason string) {
	if reason == "" && l.holds > 0 {
		reason = GapSecretTyped
	}
	if reason != "" {
		l.dirty(l.lastClean, now, reason)
		return
	}
	// Clean now. A value may have gone at any moment since the last dirty
	// sighting, so an open gap closes only here.
	l.lastClean = now
	if l.gap != nil {
		l.gap.To = max(now, l.dirtyUntil+margin)
		l.dirtyUntil = l.gap.To
		l.gaps = append(l.gaps, *l.gap)
		l.gap = nil
		l.resumed = true
	}
	var wait []Frame
	for _, f := range l.pending {
		switch {
		case f.T <= l.dirtyUntil+margin:
			// dropped: inside, or too near, a credential
		case f.T < now:
			l.keep(f)
		default:
			wait = append(wait, f)
		}
	}
	l.pending = wait
}

func (l *loop) keep(f Frame) {
	if n := len(l.frames); n > 0 && f.T <= l.frames[n-1].T {
		return
	}
	if f.T < l.chunkFrom {
		return
	}
	l.frames = append(l.frames, f)
	l.lastKept = f.T
	l.bytes += len(f.JPEG)
	// The first frame after a gap is filed at once: the chunk says capture
	// resumed, and a gap's record never waits for the next flush.
	if l.bytes > 8<<20 || len(l.frames) >= MaxChunkFrames/2 || l.resumed {
		l.resumed = false
		if err := l.flush(f.T, ""); err != nil {
			l.r.log.Warn().Err(err).Msg("filing a recording chunk")
		}
	}
}

// follow moves the screencast to another target; frames not yet confirmed
// are dropped with the old page.
func (l *loop) follow(target string) {
	now := time.Now().UnixMilli() + l.r.skewMS()
	_ = proto.PageStopScreencast{}.Call(l.page)
	_ = proto.TargetDetachFromTarget{SessionID: l.page.SessionID}.Call(l.r.browser)
	l.pending, l.latest, l.checking = nil, nil, false
	if err := l.attach(target); err != nil {
		l.r.log.Warn().Err(err).Msg("following the active tab")
		l.dirty(now, now, GapUncheckable)
	}
}

// flush files the chunk covering chunkFrom..to. An open gap is cut at to
// and goes on in the next chunk.
func (l *loop) flush(to int64, end string) error {
	if to < l.chunkFrom {
		to = l.chunkFrom
	}
	if n := len(l.frames); n > 0 && l.frames[n-1].T > to {
		to = l.frames[n-1].T
	}
	gaps := l.gaps
	if l.gap != nil {
		g := *l.gap
		if end != "" {
			// A recording that ends inside a gap ends with it.
			g.To = max(g.To, to)
		} else {
			g.To = to
		}
		if g.To > g.From {
			gaps = append(gaps, g)
		}
		l.gap.From = to
	}
	if len(l.frames) == 0 && len(gaps) == 0 && end == "" {
		return nil
	}
	c := &Chunk{Header: Header{Recording: l.r.id, SessionTag: l.r.o.SessionTag, Seq: l.seq, Start: l.r.start,
		From: l.chunkFrom, To: to, Frames: l.frames, Gaps: gaps, End: end}}
	l.seq++
	l.chunkFrom, l.frames, l.gaps, l.bytes = to, nil, nil, 0
	return PutChunk(l.ctx, l.r.o.Store, l.r.o.WorkflowID, c)
}

// finish checks the page once more for the frames awaiting a check, then
// files the last chunk; frames a check did not confirm are dropped.
func (l *loop) finish(reason string) error {
	sctx, cancel := context.WithTimeout(l.ctx, checkTimeout)
	defer cancel()
	_ = proto.PageStopScreencast{}.Call(l.r.browser.Context(sctx).PageFromSession(l.page.SessionID))
	if len(l.pending) > 0 && !l.checking {
		l.check()
	}
	for l.checking {
		select {
		case v := <-l.r.in:
			switch it := v.(type) {
			case markItem:
				l.dirty(it.t-margin, it.t, GapCredential)
			case checkItem:
				if it.id == l.checkID {
					l.checking = false
					l.checked(it.now, it.reason)
				}
			}
		case <-sctx.Done():
			l.checking = false
		}
	}
	now := time.Now().UnixMilli() + l.r.skewMS()
	return l.flush(now, reason)
}

// PutChunk files c beside the session's evidence, under a key its
// recording, sequence number and hash make.
func PutChunk(ctx context.Context, store evidence.Store, workflowID string, c *Chunk) error {
	b, err := Encode(c)
	if err != nil {
		return err
	}
	key := ChunkKey(workflowID, c.SessionTag, c.Recording, c.Seq, evidence.SHA256Hex(b))
	_, err = store.Put(ctx, key, b, "application/vnd.durable-browser.recording")
	return err
}

// ChunkKey is <workflow id>/<session tag>/<recording>.<seq>-recording-<sha256[:12]>.dbrec.
func ChunkKey(workflowID, tag, recording string, seq int, sha string) string {
	return evidence.BodyKey("", workflowID, tag, fmt.Sprintf("%s.%06d", recording, seq), Tool, sha, ChunkExt)
}
