package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/driver"
	"github.com/durable-browser/durable-browser/internal/envelope"
	"github.com/durable-browser/durable-browser/internal/holds"
	"github.com/durable-browser/durable-browser/internal/jsengine"
	"github.com/durable-browser/durable-browser/internal/redact"
	"github.com/durable-browser/durable-browser/internal/redactgate"
	"github.com/durable-browser/durable-browser/providers"
)

// fakeProvider hands out sessions from memory and records every call.
type fakeProvider struct {
	mu         sync.Mutex
	created    []providers.CreateOptions
	released   []string
	createErr  error
	releaseErr error
	// downloads, when set, is each session's download directory.
	downloads string
	// found are browsers that outlived the worker that made them (another
	// worker's, or an earlier boot's), by tag, with the options they were
	// made with (nil: none kept). Create and Find find them.
	found map[string]*contract.SessionOptions
	finds int
	// gate, when set, holds Create until closed; entered hears each Create.
	gate, entered chan struct{}
}

func (p *fakeProvider) session(tag string) *providers.Session {
	return &providers.Session{
		Tag:         tag,
		Provider:    "fake",
		CDPURL:      "ws://127.0.0.1:9222/devtools/browser/" + tag,
		PID:         4242,
		DownloadDir: p.downloads,
	}
}

func (p *fakeProvider) Create(_ context.Context, o providers.CreateOptions) (*providers.Session, error) {
	if p.gate != nil {
		p.entered <- struct{}{}
		<-p.gate
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.created = append(p.created, o)
	if p.createErr != nil {
		return nil, p.createErr
	}
	s := p.session(o.Tag)
	if made, ok := p.found[o.Tag]; ok {
		s.Found, s.Made = true, made
	}
	return s, nil
}

func (p *fakeProvider) Find(_ context.Context, tag string) (*providers.Session, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finds++
	made, ok := p.found[tag]
	if !ok {
		return nil, providers.ErrNotFound
	}
	s := p.session(tag)
	s.Found, s.Made = true, made
	return s, nil
}

func (p *fakeProvider) Release(_ context.Context, tag string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.released = append(p.released, tag)
	return p.releaseErr
}

func (p *fakeProvider) calls() (created []string, released []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.created {
		created = append(created, c.Tag)
	}
	return created, append([]string(nil), p.released...)
}

// fakeBrowser is an attached browser with no Chrome behind it. Run asks the
// request gate the activities gave Attach about each request in requests,
// the way the driver does before a request leaves the browser.
type fakeBrowser struct {
	opts driver.Options

	mu       sync.Mutex
	url      string
	title    string
	closed   int
	runs     [][]driver.Action
	requests []driver.GatedRequest
	// concurrent sends the requests all at once, as a page firing many
	// fetches does; else one after the other.
	concurrent bool
	// downloads are the finished downloads Downloads lists.
	downloads []contract.Download
	// decisions are the gate's answers to requests, in order.
	decisions []driver.GateDecision
	sent      []contract.SentRequest

	// runFn, when set, answers Run instead of the default (every action
	// completes).
	runFn   func(ctx context.Context, actions []driver.Action) (*contract.RunResult, error)
	snap    *contract.SnapshotResult
	snapErr error
	// target is the active tab's target id.
	target string
	// uploads are the paths Upload was given.
	uploads []string
}

func (b *fakeBrowser) Snapshot(context.Context, driver.SnapshotOptions) (*contract.SnapshotResult, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.snapErr != nil {
		return nil, b.snapErr
	}
	if b.snap != nil {
		return b.snap, nil
	}
	return &contract.SnapshotResult{OK: true, Page: contract.Page{URL: b.url, Title: b.title}, Observation: contract.Observation{Text: "- heading \"Hello\"", Epoch: 1}}, nil
}

func (b *fakeBrowser) Run(ctx context.Context, actions []driver.Action, _ driver.RunOptions) (*contract.RunResult, error) {
	b.mu.Lock()
	b.runs = append(b.runs, actions)
	reqs, fn, concurrent := b.requests, b.runFn, b.concurrent
	b.mu.Unlock()
	var wg sync.WaitGroup
	for _, r := range reqs {
		send := func() {
			d := driver.GateAllow
			if b.opts.RequestGate != nil {
				d = b.opts.RequestGate(ctx, r)
			}
			b.mu.Lock()
			b.decisions = append(b.decisions, d)
			if d == driver.GateAllow {
				b.sent = append(b.sent, contract.SentRequest{Method: r.Method, Origin: r.Origin, Path: r.Path})
			}
			b.mu.Unlock()
		}
		if !concurrent {
			send()
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); send() }()
	}
	wg.Wait()
	if fn != nil {
		return fn(ctx, actions)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, a := range actions {
		if a.Op == "goto" {
			b.url = a.URL
		}
	}
	return &contract.RunResult{Page: contract.Page{URL: b.url, Title: b.title}, Completed: len(actions), Total: len(actions), Sent: append([]contract.SentRequest(nil), b.sent...)}, nil
}

func (b *fakeBrowser) Screenshot(context.Context, driver.ScreenshotOptions) (*driver.Shot, error) {
	return &driver.Shot{Bytes: []byte("\x89PNG fake"), Type: "png", Width: 10, Height: 10, DPR: 1}, nil
}

func (b *fakeBrowser) Read(context.Context, driver.ReadOptions) (*driver.ReadResult, error) {
	return nil, errors.New("not faked")
}

func (b *fakeBrowser) Check(context.Context, driver.CheckOptions) (*driver.Checked, error) {
	return nil, errors.New("not faked")
}

func (b *fakeBrowser) Downloads(context.Context) ([]contract.Download, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]contract.Download(nil), b.downloads...), nil
}

func (b *fakeBrowser) Upload(_ context.Context, _ driver.Target, path string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.uploads = append(b.uploads, path)
	return nil
}

func (b *fakeBrowser) ActiveTarget() (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.target, nil
}

func (b *fakeBrowser) URL(context.Context) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.url
}

func (b *fakeBrowser) Title(context.Context) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.title
}

func (b *fakeBrowser) SentSoFar() []contract.SentRequest {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]contract.SentRequest(nil), b.sent...)
}

func (b *fakeBrowser) Text(_ context.Context, id string) (string, error) {
	return "text of " + id, nil
}

func (b *fakeBrowser) Attr(_ context.Context, id, name string) (string, bool, error) {
	return name + " of " + id, true, nil
}

func (b *fakeBrowser) Eval(context.Context, string, string) (json.RawMessage, error) {
	return json.RawMessage(`{"evaluated":true}`), nil
}

func (b *fakeBrowser) Hold(context.Context) func() { return func() {} }
func (b *fakeBrowser) Forget()                     {}

func (b *fakeBrowser) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed++
	return nil
}

func (b *fakeBrowser) closedCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closed
}

// fakeClient answers the two calls the request gate makes of Temporal.
type fakeClient struct {
	client.Client // nil: any other call panics

	mu        sync.Mutex
	signals   []contract.HoldSignal
	signalErr error
	// decide answers QueryHold for a hold id; nil means never decided.
	decide func(holdID string) contract.HoldDecision
}

func (c *fakeClient) SignalWorkflow(_ context.Context, workflowID, runID, name string, arg any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if name != contract.SignalHold {
		return errors.New("unexpected signal " + name)
	}
	c.signals = append(c.signals, arg.(contract.HoldSignal))
	return c.signalErr
}

func (c *fakeClient) QueryWorkflow(_ context.Context, workflowID, runID, name string, args ...any) (converter.EncodedValue, error) {
	if name != contract.QueryHold || len(args) != 1 {
		return nil, errors.New("unexpected query " + name)
	}
	var d contract.HoldDecision
	if c.decide != nil {
		d = c.decide(args[0].(string))
	}
	// As the session does: the answer names the request recorded under the
	// id, unless decide says otherwise (a forged record).
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.signals {
		if s.HoldID == args[0].(string) && d.Decision != "" && d.Method == "" {
			d.Method, d.RequestFacts = s.Method, s.RequestFacts
		}
	}
	return decodedValue{d}, nil
}

type decodedValue struct{ v contract.HoldDecision }

func (v decodedValue) HasValue() bool { return true }
func (v decodedValue) Get(p any) error {
	*(p.(*contract.HoldDecision)) = v.v
	return nil
}

// harness is a set of activities with a fake provider named "local" and
// fake browsers, run through Temporal's test activity environment.
type harness struct {
	t     *testing.T
	a     *Activities
	prov  *fakeProvider
	red   *redact.Redactor
	env   *testsuite.TestActivityEnvironment
	setup func(*fakeBrowser) // shapes each browser as it is attached

	mu        sync.Mutex
	browsers  []*fakeBrowser
	attachErr error
}

const testHostQueue = "durable-browser@test-host"

func newHarness(t *testing.T, mod func(*Options)) *harness {
	t.Helper()
	h := &harness{t: t, prov: &fakeProvider{}, red: redact.New()}
	o := Options{
		HostQueue: testHostQueue,
		Providers: map[string]providers.Provider{"local": h.prov},
		Holds:     holds.New(h.red),
		Cells:     jsengine.Options{Redactor: h.red},
		Attach:    h.attach,
	}
	if mod != nil {
		mod(&o)
	}
	// The evidence and secrets a test gives redact with h.red, as
	// worker.New gives every way out the worker's one redactor.
	if o.Evidence != nil {
		o.Evidence.Redactor = h.red
	}
	if o.Secrets != nil {
		o.Secrets.Redactor = h.red
	}
	h.a = New(o)
	var s testsuite.WorkflowTestSuite
	h.env = s.NewTestActivityEnvironment()
	// The worker's redaction gate, as every activity runs behind it.
	h.env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{redactgate.New(h.red)}})
	reg := &onceRegistry{r: h.env, seen: map[string]bool{}}
	h.a.RegisterShared(reg)
	h.a.RegisterHost(reg)
	return h
}

func (h *harness) attach(_ context.Context, o driver.Options) (Browser, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.attachErr != nil {
		return nil, h.attachErr
	}
	b := &fakeBrowser{opts: o, url: "about:blank"}
	if h.setup != nil {
		h.setup(b)
	}
	h.browsers = append(h.browsers, b)
	return b, nil
}

func (h *harness) browser(i int) *fakeBrowser {
	h.mu.Lock()
	defer h.mu.Unlock()
	if i >= len(h.browsers) {
		h.t.Fatalf("browser %d was never attached (%d were)", i, len(h.browsers))
	}
	return h.browsers[i]
}

func (h *harness) attached() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.browsers)
}

// onceRegistry registers each name once: RegisterShared and RegisterHost
// both register release, which one environment takes only once.
type onceRegistry struct {
	r    Registry
	seen map[string]bool
}

func (o *onceRegistry) RegisterActivityWithOptions(a any, opts activity.RegisterOptions) {
	if o.seen[opts.Name] {
		return
	}
	o.seen[opts.Name] = true
	o.r.RegisterActivityWithOptions(a, opts)
}

// call runs the named activity and decodes its result.
func call[Res any](h *harness, name string, req any) (*Res, error) {
	h.t.Helper()
	v, err := h.env.ExecuteActivity(name, req)
	if err != nil {
		return nil, err
	}
	var out Res
	if err := v.Get(&out); err != nil {
		h.t.Fatalf("decoding %s result: %v", name, err)
	}
	return &out, nil
}

// create opens a session with the given tag and options and fails the test
// if it does not.
func (h *harness) create(tag string, o contract.SessionOptions) contract.SessionRef {
	h.t.Helper()
	res, err := call[contract.CreateResult](h, contract.ActivityCreate, contract.CreateRequest{Tag: tag, Options: o})
	if err != nil {
		h.t.Fatalf("create %s: %v", tag, err)
	}
	return res.Session
}

// failure recovers the envelope from an activity's error.
func failure(t *testing.T, err error) *contract.Failure {
	t.Helper()
	if err == nil {
		t.Fatal("expected a failure, got none")
	}
	f, ok := envelope.From(err)
	if !ok {
		t.Fatalf("error carries no envelope: %v", err)
	}
	return f
}

func wantCode(t *testing.T, err error, code contract.Code, retryable bool) *contract.Failure {
	t.Helper()
	f := failure(t, err)
	if f.Code != code || f.Retryable != retryable {
		t.Fatalf("failure = %s (retryable %v), want %s (retryable %v): %s", f.Code, f.Retryable, code, retryable, f.Message)
	}
	// Temporal's own retry decision follows the envelope's.
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) {
		t.Fatalf("error is no ApplicationError: %v", err)
	}
	if appErr.NonRetryable() == retryable || appErr.Type() != string(code) {
		t.Fatalf("application error type %s non-retryable %v, want %s non-retryable %v", appErr.Type(), appErr.NonRetryable(), code, !retryable)
	}
	return f
}

// containsAnywhere reports whether s appears in v's JSON form or its Go form.
func containsAnywhere(v any, s string) bool {
	raw, _ := json.Marshal(v)
	return strings.Contains(string(raw), s) || strings.Contains(fmt.Sprintf("%+v", v), s)
}
