// Package jsengine runs a code cell: a model's JavaScript in an embedded engine
// (dop251/goja) with a page object over a Page, under limits on page calls,
// source and output size, time and memory. The engine knows nothing of
// browsers: the caller's Page carries each call to the driver.
package jsengine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dlclark/regexp2/v2"
	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"

	"github.com/durable-browser/durable-browser/internal/redact"
)

// Limits of one cell. Each is refused with a message naming it.
const (
	MaxCalls        = 25
	MaxSourceBytes  = 64 << 10
	MaxOutputBytes  = 64 << 10
	DefaultDeadline = 120 * time.Second
	MaxDeadline     = 300 * time.Second
	// MaxHeapGrowth bounds how far a cell may grow the worker's heap.
	MaxHeapGrowth = 256 << 20
	// MaxStringChars bounds one string a builtin (repeat, padStart,
	// padEnd, join) may build in a single step, where the engine cannot
	// interrupt it.
	MaxStringChars = 8 << 20
	// maxCallStack bounds JavaScript recursion.
	maxCallStack = 2000
	// Console output kept: lines, characters a line, characters in all.
	maxConsoleLines = 50
	maxConsoleLine  = 500
	maxConsoleChars = 8 << 10
	// MaxMemory bounds the cell's process: its address space may grow
	// this far past what it had when the cell began (RLIMIT_AS), and its
	// garbage collector works to stay under it.
	MaxMemory = 512 << 20
	// grace is how long the engine may overrun an interrupt inside a
	// builtin before its process answers without it and exits.
	grace = 100 * time.Millisecond
	// killGrace is how long the worker waits past the deadline for the
	// cell's process to answer before it kills the process.
	killGrace = 400 * time.Millisecond
)

func init() {
	// A regular expression can backtrack for ever inside a builtin, where
	// the engine's interrupt does not reach; regexp2 (used only by goja
	// here) stops a match after this long.
	regexp2.DefaultMatchTimeout = 2 * time.Second
}

// Page carries a cell's page calls. method is one of Methods; args are the
// call's named arguments as JSON values. The answer is JSON the cell sees as
// a plain value. A failure the cell may catch is a *PageError.
type Page interface {
	Call(ctx context.Context, method string, args map[string]any) (json.RawMessage, error)
}

// PageError is a page call's failure, thrown into the cell as an Error
// whose name is "PageError" and whose code is Code (a failure code such as
// stale_snapshot), so the cell can catch it and decide.
type PageError struct {
	Code    string
	Message string
}

func (e *PageError) Error() string { return e.Code + ": " + e.Message }

// Options configure Run. Zero limits take the defaults above.
type Options struct {
	Source string
	Page   Page
	// Redactor redacts everything the cell is handed (each page call's
	// answer and failure message), so no secret is inside the cell to be
	// spelled in a way no later redaction finds (reversed, encoded); nil
	// redacts credential shapes only. Result.OutputSize is measured with it.
	Redactor *redact.Redactor
	MaxCalls int
	// MaxOutput bounds the output's JSON in bytes.
	MaxOutput int
	// Deadline bounds the whole cell (DefaultDeadline when zero; at most
	// MaxDeadline). ctx's own deadline also applies.
	Deadline time.Duration
	// MaxHeapGrowth bounds the live heap's growth in the cell's process,
	// checked as the engine runs (a clean limit answer).
	MaxHeapGrowth uint64
	// MaxMemory bounds the cell's process's address space past its start
	// (enforced by the kernel; the hard bound).
	MaxMemory uint64
	// Progress, when set, is told the counts after every page call.
	Progress func(Counts)
}

// Counts are a cell's page calls: made (attempted within the limit),
// completed and failed.
type Counts struct {
	Made      int `json:"made"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
}

// Result is what a cell produced, also when it failed: the output so far
// (emitted values, or the return value), the counts and the console.
type Result struct {
	Output json.RawMessage
	// OutputSize is the length of Output once redacted (Options.Redactor):
	// redaction may lengthen it ("[redacted]"), and the output limit holds
	// for what the caller is sent.
	OutputSize int
	Calls      Counts
	Console    []string
}

// Kind says why a cell stopped early.
type Kind string

// Kinds of Error.
const (
	KindCode     Kind = "code"     // the JavaScript threw, did not compile, or never settled
	KindLimit    Kind = "limit"    // a limit was passed
	KindTimeout  Kind = "timeout"  // the deadline passed
	KindCanceled Kind = "canceled" // ctx was cancelled
)

// Error is why a cell stopped early. Message names the limit or the error;
// Stack is the JavaScript stack, when there is one.
type Error struct {
	Kind    Kind
	Message string
	Stack   string
	// Code is, for KindCode, the code of the PageError the cell let
	// escape (what it threw carries name PageError and a code), else "".
	// The host checks it against the page calls it failed: the cell's own
	// code can throw any object.
	Code string
}

func (e *Error) Error() string { return string(e.Kind) + ": " + e.Message }

// limitError interrupts the engine when a limit is passed.
type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }

// Methods are the page object's methods, in documentation order.
var Methods = []string{"goto", "snapshot", "click", "fill", "type", "press", "select", "check", "uncheck",
	"scroll", "wait", "text", "attr", "url", "title", "screenshot", "eval"}

// defaults fills opts' zero limits.
func (opts *Options) defaults() {
	if opts.MaxCalls <= 0 {
		opts.MaxCalls = MaxCalls
	}
	if opts.MaxOutput <= 0 {
		opts.MaxOutput = MaxOutputBytes
	}
	if opts.Deadline <= 0 {
		opts.Deadline = DefaultDeadline
	}
	opts.Deadline = min(opts.Deadline, MaxDeadline)
	if opts.MaxHeapGrowth == 0 {
		opts.MaxHeapGrowth = MaxHeapGrowth
	}
	if opts.MaxMemory == 0 {
		opts.MaxMemory = MaxMemory
	}
}

// newCellRun makes a cell's state with its engine set up, before the cell
// is known: a spare process does this ahead.
func newCellRun(page Page, sink sink) (*cellRun, error) {
	c := &cellRun{res: &Result{}, sink: sink, stop: make(chan struct{}), opts: Options{Page: page}}
	vm := goja.New()
	vm.SetMaxCallStackSize(maxCallStack)
	// Code the cell builds (eval, Function) reads no source map from the
	// host's files either.
	vm.SetParserOptions(parser.WithDisableSourceMaps)
	c.vm = vm
	if err := c.install(vm); err != nil {
		return nil, err
	}
	return c, nil
}

// runHere runs the cell c (its opts set; ctx carries the deadline) in
// this process: the cell's own process (see child.go), never the
// worker's. A builtin the interrupt cannot reach is given grace, then
// left: the process exits after answering.
func (c *cellRun) runHere(ctx context.Context, opts Options) (*Result, error) {
	opts.Page = c.opts.Page
	c.opts, c.ctx = opts, ctx
	done := make(chan error, 1)
	go func() { done <- c.run() }()
	var err error
	finished := false
	select {
	case err = <-done:
		finished = true
	case <-ctx.Done():
		c.interrupt(ctx.Err())
	case <-c.stop:
	}
	if !finished {
		// Interrupted: a builtin may hold the engine a little longer.
		select {
		case err = <-done:
		case <-time.After(grace):
			err = c.stopErr(ctx.Err())
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := &Result{Calls: c.res.Calls, Console: append([]string(nil), c.res.Console...), Output: c.output()}
	return out, err
}

// cellRun is one cell's state. The engine runs on its own goroutine; mu
// guards what Run reads after it.
type cellRun struct {
	opts Options
	ctx  context.Context
	vm   *goja.Runtime // the engine's goroutine only
	vmp  atomic.Pointer[goja.Runtime]
	code codeMap // the code's lines, set before it runs

	mu          sync.Mutex
	res         *Result
	emitted     []json.RawMessage
	emitBytes   int
	returned    json.RawMessage
	consoleSize int

	stopped  atomic.Pointer[error]
	stop     chan struct{} // closed at the first interrupt
	stopOnce sync.Once
	sink     sink
}

// sink is told what the cell emits and logs as it happens, so what a cell
// produced before its process is killed is not lost with it.
type sink interface {
	emitted(raw json.RawMessage)
	logged(line string)
}

func (c *cellRun) interrupt(err error) {
	c.stopped.CompareAndSwap(nil, &err)
	if vm := c.vmp.Load(); vm != nil {
		vm.Interrupt(err)
	}
	c.stopOnce.Do(func() { close(c.stop) })
}

// stopErr maps why the engine stopped to an *Error.
func (c *cellRun) stopErr(cause error) *Error {
	if p := c.stopped.Load(); p != nil {
		cause = *p
	}
	var le *limitError
	switch {
	case errors.As(cause, &le):
		return &Error{Kind: KindLimit, Message: le.msg}
	case errors.Is(cause, context.DeadlineExceeded):
		return timeoutError(c.opts.Deadline)
	case errors.Is(cause, context.Canceled):
		return &Error{Kind: KindCanceled, Message: "the cell was cancelled"}
	}
	return &Error{Kind: KindCode, Message: fmt.Sprint(cause)}
}

func timeoutError(d time.Duration) *Error {
	return &Error{Kind: KindTimeout, Message: fmt.Sprintf("the cell ran past its deadline (%s) and was stopped; do less per cell or raise timeout_s (at most %d)", d.Round(time.Second), int(MaxDeadline/time.Second))}
}

func (c *cellRun) output() json.RawMessage {
	if len(c.emitted) > 0 {
		b, _ := json.Marshal(c.emitted)
		return b
	}
	return c.returned
}

func (c *cellRun) run() (err error) {
	vm := c.vm
	c.vmp.Store(vm)
	// An interrupt that came before the store is applied here.
	if p := c.stopped.Load(); p != nil {
		vm.Interrupt(*p)
	}
	defer func() {
		if r := recover(); r != nil {
			// A builtin's own panic (a regexp timeout, say): the cell's fault.
			err = &Error{Kind: KindCode, Message: fmt.Sprintf("the engine stopped: %v", r)}
		}
	}()
	stopWatch := c.watchHeap()
	defer stopWatch()
	// The code runs as an async function's body (see source.go); what the
	// engine says of it is told by the code's own lines and columns.
	c.code = newCodeMap(c.opts.Source)
	prog, cerr := compile(c.opts.Source)
	if cerr != nil {
		return cerr
	}
	v, rerr := vm.RunProgram(prog)
	if rerr != nil {
		return c.fromRunError(rerr)
	}
	if p := c.stopped.Load(); p != nil {
		return c.stopErr(*p)
	}
	p, ok := v.Export().(*goja.Promise)
	if !ok {
		return &Error{Kind: KindCode, Message: "the cell did not run as an async function"}
	}
	switch p.State() {
	case goja.PromiseStateFulfilled:
		raw, jerr := c.toJSON(p.Result())
		if jerr != nil {
			return jerr
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if len(raw) > c.opts.MaxOutput && len(c.emitted) == 0 {
			return &Error{Kind: KindLimit, Message: fmt.Sprintf("the returned value is %d bytes of JSON, over the %d-byte (64 KiB) output limit; return or emit less", len(raw), c.opts.MaxOutput)}
		}
		c.returned = raw
		return nil
	case goja.PromiseStateRejected:
		return c.thrown(p.Result())
	}
	return &Error{Kind: KindCode, Message: "the cell awaited something that never settles (there are no timers or events here); await only page calls"}
}

func (c *cellRun) fromRunError(err error) error {
	var ie *goja.InterruptedError
	if errors.As(err, &ie) {
		if cause, ok := ie.Value().(error); ok {
			return c.stopErr(cause)
		}
		return c.stopErr(errors.New(fmt.Sprint(ie.Value())))
	}
	var so *goja.StackOverflowError
	if errors.As(err, &so) {
		return &Error{Kind: KindCode, Message: fmt.Sprintf("too much recursion: the call stack passed %d frames", maxCallStack)}
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		return c.thrown(ex.Value())
	}
	return &Error{Kind: KindCode, Message: err.Error()}
}

// thrown describes a value the cell threw (or rejected with).
func (c *cellRun) thrown(v goja.Value) *Error {
	e := &Error{Kind: KindCode}
	if o, ok := v.(*goja.Object); ok {
		// Where it was thrown: the innermost frame in the code.
		at := ""
		if s := o.Get("stack"); s != nil && !goja.IsUndefined(s) {
			var frames []frame
			e.Stack, frames = c.code.stack(s.String())
			for _, f := range frames {
				if f.line > 0 {
					at = fmt.Sprintf(" (at line %d, column %d)", f.line, f.col)
					break
				}
			}
		}
		name, msg := o.Get("name"), o.Get("message")
		if msg != nil && !goja.IsUndefined(msg) {
			n := "Error"
			if name != nil && !goja.IsUndefined(name) {
				n = name.String()
			}
			e.Message = n + ": " + msg.String()
			if code := o.Get("code"); code != nil && !goja.IsUndefined(code) && n == "PageError" {
				e.Message += " (code " + code.String() + ")"
				e.Code = code.String()
			}
			e.Message += at
			return e
		}
	}
	if v == nil {
		e.Message = "the cell threw undefined"
		return e
	}
	e.Message = "the cell threw " + clip(v.String(), 200)
	return e
}

// watchHeap interrupts the engine when the worker's live heap (as the
// last garbage collection measured it; a cell that keeps allocating makes
// collections run) grows past the bound while the cell runs. It reads the
// process's heap, so it also counts what other work keeps meanwhile: a
// bound on the cell's growth, never a loose one. Garbage does not count.
func (c *cellRun) watchHeap() func() {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return sample[0].Value.Uint64()
	}
	base := read()
	stop := make(chan struct{})
	go func() {
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if now := read(); now > base && now-base > c.opts.MaxHeapGrowth {
					c.interrupt(&limitError{fmt.Sprintf("the cell grew the engine's memory past %d MiB and was stopped; keep less in variables", c.opts.MaxHeapGrowth>>20)})
					return
				}
			}
		}
	}()
	return func() { close(stop) }
}

// toJSON writes v as JSON with the engine's own JSON.stringify. undefined
// (and a function) give no output.
func (c *cellRun) toJSON(v goja.Value) (json.RawMessage, *Error) {
	if v == nil || goja.IsUndefined(v) {
		return nil, nil
	}
	stringify, _ := goja.AssertFunction(c.vm.Get("JSON").ToObject(c.vm).Get("stringify"))
	s, err := stringify(goja.Undefined(), v)
	if err != nil {
		var ex *goja.Exception
		if errors.As(err, &ex) {
			e := c.thrown(ex.Value())
			e.Message = "the output is not JSON: " + e.Message
			return nil, e
		}
		return nil, &Error{Kind: KindCode, Message: "the output is not JSON: " + err.Error()}
	}
	if goja.IsUndefined(s) {
		return nil, nil
	}
	return json.RawMessage(s.String()), nil
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// throwPage throws a PageError into the cell.
func (c *cellRun) throwPage(code, msg string) {
	errCtor := c.vm.Get("Error")
	o, err := c.vm.New(errCtor, c.vm.ToValue(msg))
	if err != nil {
		panic(c.vm.NewTypeError(msg))
	}
	_ = o.Set("name", "PageError")
	_ = o.Set("code", code)
	panic(o)
}

// console records one console line, bounded.
func (c *cellRun) console(level string, args []goja.Value) {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		if s, ok := a.Export().(string); ok {
			parts = append(parts, s)
			continue
		}
		if raw, err := c.toJSON(a); err == nil && raw != nil {
			parts = append(parts, string(raw))
		} else {
			parts = append(parts, a.String())
		}
	}
	line := clip(strings.Join(parts, " "), maxConsoleLine)
	if level != "log" {
		line = level + ": " + line
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.res.Console) >= maxConsoleLines || c.consoleSize+len(line) > maxConsoleChars {
		if n := len(c.res.Console); n > 0 && c.res.Console[n-1] != "…" {
			c.res.Console = append(c.res.Console, "…")
			if c.sink != nil {
				c.sink.logged("…")
			}
		}
		return
	}
	c.consoleSize += len(line)
	c.res.Console = append(c.res.Console, line)
	if c.sink != nil {
		c.sink.logged(line)
	}
}

// emit adds one value to the output.
func (c *cellRun) emit(v goja.Value) {
	raw, e := c.toJSON(v)
	if e != nil {
		panic(c.vm.NewTypeError(e.Message))
	}
	if raw == nil {
		raw = json.RawMessage("null")
	}
	c.mu.Lock()
	size := c.emitBytes + len(raw) + 1
	if size+1 > c.opts.MaxOutput {
		c.mu.Unlock()
		c.interrupt(&limitError{fmt.Sprintf("emitted output passed %d bytes (64 KiB) of JSON and the cell was stopped; emit less, or fewer fields per row", c.opts.MaxOutput)})
		return
	}
	c.emitBytes = size
	c.emitted = append(c.emitted, raw)
	c.mu.Unlock()
	if c.sink != nil {
		c.sink.emitted(raw)
	}
}

// call makes one page call, counting it.
func (c *cellRun) call(method string, args map[string]any) goja.Value {
	c.mu.Lock()
	if c.res.Calls.Made >= c.opts.MaxCalls {
		c.mu.Unlock()
		c.interrupt(&limitError{fmt.Sprintf("the cell tried page call %d (page.%s), over the limit of %d page calls per cell, and was stopped; split the work into several run calls", c.opts.MaxCalls+1, method, c.opts.MaxCalls)})
		return goja.Undefined()
	}
	c.res.Calls.Made++
	c.mu.Unlock()
	raw, err := c.opts.Page.Call(c.ctx, method, args)
	c.mu.Lock()
	if err != nil {
		c.res.Calls.Failed++
	} else {
		c.res.Calls.Completed++
	}
	counts := c.res.Calls
	c.mu.Unlock()
	if c.opts.Progress != nil {
		c.opts.Progress(counts)
	}
	if err != nil {
		if c.ctx.Err() != nil {
			c.interrupt(c.ctx.Err())
			return goja.Undefined()
		}
		var pe *PageError
		if errors.As(err, &pe) {
			c.throwPage(pe.Code, pe.Message)
		}
		c.throwPage("command_failed", err.Error())
	}
	if len(raw) == 0 {
		return goja.Undefined()
	}
	parse, _ := goja.AssertFunction(c.vm.Get("JSON").ToObject(c.vm).Get("parse"))
	v, perr := parse(goja.Undefined(), c.vm.ToValue(string(raw)))
	if perr != nil {
		c.throwPage("command_failed", "the page call's answer was not JSON")
	}
	return v
}
