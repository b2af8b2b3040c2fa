package jsengine

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"runtime/debug"
	"sync"
	"time"
)

// childEnv, set to "1", makes any binary that links this package serve one
// cell on stdin/stdout instead of starting (see init). The worker sets it
// only for the processes it starts for cells; the worker binaries, dev and
// test binaries all link this package, so each can be its own cell host.
const childEnv = "DURABLE_BROWSER_INTERNAL_CELL_CHILD"

func init() {
	if os.Getenv(childEnv) != "1" {
		return
	}
	os.Exit(serveChild(os.Stdin, os.Stdout))
}

// The protocol: one JSON object a line. The worker sends a job, then an
// answer for each page call; the cell's process sends page calls, what it
// emits and logs, and at the end done.
type (
	toChild struct {
		Job    *job    `json:"job,omitempty"`
		Answer *answer `json:"answer,omitempty"`
	}
	job struct {
		Source        string `json:"source"`
		MaxCalls      int    `json:"max_calls"`
		MaxOutput     int    `json:"max_output"`
		Deadline      int64  `json:"deadline"` // Unix nanoseconds
		Timeout       int64  `json:"timeout"`  // the deadline as given, for messages
		MaxHeapGrowth uint64 `json:"max_heap_growth"`
		MaxMemory     uint64 `json:"max_memory"`
	}
	answer struct {
		Raw     json.RawMessage `json:"raw,omitempty"`
		Failed  bool            `json:"failed,omitempty"`
		Code    string          `json:"code,omitempty"`
		Message string          `json:"message,omitempty"`
	}
	fromChild struct {
		Ready   bool            `json:"ready,omitempty"`
		Call    *pageCall       `json:"call,omitempty"`
		Emit    json.RawMessage `json:"emit,omitempty"`
		Console *string         `json:"console,omitempty"`
		Done    *done           `json:"done,omitempty"`
	}
	pageCall struct {
		Method string         `json:"method"`
		Args   map[string]any `json:"args"`
	}
	done struct {
		Returned json.RawMessage `json:"returned,omitempty"`
		Err      *Error          `json:"err,omitempty"`
	}
)

// serveChild runs one cell for the worker on the other end of in and out,
// then returns the exit status. A closed in (the worker is gone) ends the
// process at once, whatever the engine is doing.
func serveChild(in io.Reader, out io.Writer) int {
	w := &childWire{enc: json.NewEncoder(out), answers: make(chan answer, 1)}
	dec := json.NewDecoder(bufio.NewReaderSize(in, 64<<10))
	c, err := newCellRun(w, w)
	if err != nil {
		_ = w.send(fromChild{Done: &done{Err: &Error{Kind: KindCode, Message: "setting up the engine failed: " + err.Error()}}})
		return 4
	}
	if w.send(fromChild{Ready: true}) != nil {
		return 3
	}
	var first toChild
	if err := dec.Decode(&first); err != nil || first.Job == nil {
		return 3
	}
	j := first.Job
	if err := limitSelf(j); err != nil {
		_ = w.send(fromChild{Done: &done{Err: &Error{Kind: KindCode, Message: "the cell's process could not be limited: " + err.Error()}}})
		return 4
	}
	go func() {
		for {
			var m toChild
			if err := dec.Decode(&m); err != nil {
				os.Exit(5) // the worker is gone: nothing to answer to
			}
			if m.Answer != nil {
				w.answers <- *m.Answer
			}
		}
	}()
	ctx, cancel := context.WithDeadline(context.Background(), time.Unix(0, j.Deadline))
	defer cancel()
	opts := Options{Source: j.Source, Deadline: time.Duration(j.Timeout), MaxCalls: j.MaxCalls, MaxOutput: j.MaxOutput, MaxHeapGrowth: j.MaxHeapGrowth, MaxMemory: j.MaxMemory}
	opts.defaults()
	res, err := c.runHere(ctx, opts)
	d := &done{}
	var ce *Error
	if errors.As(err, &ce) {
		d.Err = ce
	} else if err != nil {
		d.Err = &Error{Kind: KindCode, Message: err.Error()}
	}
	// Emitted values went as they came; the worker takes this only when
	// none did.
	d.Returned = res.Output
	if w.send(fromChild{Done: d}) != nil {
		return 6
	}
	return 0
}

// limitSelf holds this process to the job's bounds before any of the
// cell's code runs: CPU time a little past the deadline (the worker kills
// the process at the deadline; this holds should the worker be gone), and
// address space MaxMemory past what the runtime has reserved so far.
func limitSelf(j *job) error {
	if j.MaxMemory == 0 {
		j.MaxMemory = MaxMemory
	}
	cpu := time.Until(time.Unix(0, j.Deadline)) + 2*time.Second
	if err := setLimits(cpu, j.MaxMemory); err != nil {
		return err
	}
	// Collect harder near the bound rather than meet it.
	debug.SetMemoryLimit(int64(j.MaxMemory))
	return nil
}

// childWire is the cell's side of the pipe: its Page and its sink.
type childWire struct {
	mu      sync.Mutex
	enc     *json.Encoder
	answers chan answer
}

func (w *childWire) send(m fromChild) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.enc.Encode(m)
}

func (w *childWire) emitted(raw json.RawMessage) { _ = w.send(fromChild{Emit: raw}) }
func (w *childWire) logged(line string)          { _ = w.send(fromChild{Console: &line}) }

// Call implements Page: the worker runs the call and answers.
func (w *childWire) Call(ctx context.Context, method string, args map[string]any) (json.RawMessage, error) {
	if err := w.send(fromChild{Call: &pageCall{Method: method, Args: args}}); err != nil {
		return nil, err
	}
	select {
	case a := <-w.answers:
		if a.Failed {
			return nil, &PageError{Code: a.Code, Message: a.Message}
		}
		return a.Raw, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
