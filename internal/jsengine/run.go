package jsengine

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"time"
)

// maxMessage bounds one line the cell's process sends (a page call's
// arguments are the largest: a string the cell built, JSON-escaped).
const maxMessage = 4*MaxStringChars + 64<<10

// Run runs opts.Source in a process of its own (this binary, re-executed;
// see child.go), limited in CPU time and address space and killed at the
// deadline, so no builtin of the engine can hold the worker's cores or
// memory past it. Each page call comes back over a pipe and runs here,
// against opts.Page. It returns the result so far with a non-nil *Error
// when the cell stopped early; any other error means the cell could not
// run (a bad option, or no process to run it in).
func Run(ctx context.Context, opts Options) (*Result, error) {
	if opts.Page == nil {
		return nil, errors.New("cell: Options.Page is nil")
	}
	opts.defaults()
	if n := len(opts.Source); n > MaxSourceBytes {
		return &Result{}, &Error{Kind: KindLimit, Message: fmt.Sprintf("the code is %d bytes, over the %d-byte (64 KiB) source limit; do less in one cell", n, MaxSourceBytes)}
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Deadline)
	defer cancel()
	dl, _ := ctx.Deadline()
	p, err := takeProc()
	if err != nil {
		return nil, fmt.Errorf("cell: starting the cell's process: %w", err)
	}
	if err := p.send(toChild{Job: &job{Source: opts.Source, MaxCalls: opts.MaxCalls, MaxOutput: opts.MaxOutput,
		Deadline: dl.UnixNano(), Timeout: int64(opts.Deadline), MaxHeapGrowth: opts.MaxHeapGrowth, MaxMemory: opts.MaxMemory}}); err != nil {
		p.stop()
		return nil, fmt.Errorf("cell: handing the cell to its process: %w", err)
	}
	stopped := false
	defer func() {
		if !stopped { // a page call panicked: still nothing of the cell runs on
			p.stop()
		}
	}()
	h := &host{opts: opts}
	fin := h.serve(ctx, p)
	stopped = true
	if fin != nil {
		// It answered: nothing of it is needed, and its reaping need
		// not hold the answer up.
		kill(p.cmd)
		go p.stop()
	} else {
		p.stop()
	}
	res := &Result{Calls: h.calls, Console: h.console}
	if len(h.emitted) > 0 {
		res.Output, _ = json.Marshal(h.emitted)
	} else if fin != nil {
		res.Output = fin.Returned
	}
	res.OutputSize = len(opts.Redactor.JSON(res.Output))
	switch {
	case fin != nil && fin.Err != nil:
		return res, fin.Err
	case fin != nil:
		return res, nil
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return res, timeoutError(opts.Deadline)
	case ctx.Err() != nil:
		return res, &Error{Kind: KindCanceled, Message: "the cell was cancelled"}
	case p.tooLong:
		return res, &Error{Kind: KindLimit, Message: fmt.Sprintf("the cell sent a page call over %d MiB and was stopped; pass less to one call", maxMessage>>20)}
	}
	// The process ended without an answer: the kernel's address-space
	// bound stopped the engine (its allocator cannot go on), or the
	// engine failed.
	return res, &Error{Kind: KindLimit, Message: fmt.Sprintf("the cell's engine stopped without answering: it passed its memory bound (%d MiB) or failed (peak %d MiB); keep less in variables", opts.MaxMemory>>20, p.peak>>20)}
}

// host is the worker's side of one cell: it runs the page calls and keeps
// what the cell emitted and logged, bounded as the cell's process bounds
// them, so a killed process's output so far survives it.
type host struct {
	opts      Options
	calls     Counts
	emitted   []json.RawMessage
	emitBytes int
	console   []string
}

// serve answers the process until it is done, dies, or the deadline (plus
// killGrace for its own answer) or a cancel ends it.
func (h *host) serve(ctx context.Context, p *proc) *done {
	ctxDone := ctx.Done()
	var grace <-chan time.Time
	for {
		select {
		case m, ok := <-p.msgs:
			if !ok {
				return nil
			}
			switch {
			case m.Done != nil:
				return m.Done
			case m.Call != nil:
				a := h.call(ctx, m.Call)
				_ = p.send(toChild{Answer: &a})
			case m.Emit != nil:
				if h.emitBytes+len(m.Emit) <= h.opts.MaxOutput {
					h.emitBytes += len(m.Emit) + 1
					h.emitted = append(h.emitted, m.Emit)
				}
			case m.Console != nil:
				if len(h.console) <= maxConsoleLines {
					h.console = append(h.console, clip(*m.Console, maxConsoleLine))
				}
			}
		case <-ctxDone:
			if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil
			}
			// The process has the same deadline: let it answer with
			// what it has, then kill it.
			ctxDone, grace = nil, time.After(killGrace)
		case <-grace:
			return nil
		}
	}
}

func (h *host) call(ctx context.Context, c *pageCall) answer {
	if h.calls.Made >= h.opts.MaxCalls {
		return answer{Failed: true, Code: "refused", Message: fmt.Sprintf("over the limit of %d page calls per cell", h.opts.MaxCalls)}
	}
	h.calls.Made++
	raw, err := h.opts.Page.Call(ctx, c.Method, c.Args)
	if err != nil {
		h.calls.Failed++
	} else {
		h.calls.Completed++
	}
	if h.opts.Progress != nil {
		h.opts.Progress(h.calls)
	}
	// The answer leaves the worker for the cell's process here: redacted.
	red := h.opts.Redactor
	if err != nil {
		var pe *PageError
		if errors.As(err, &pe) {
			return answer{Failed: true, Code: pe.Code, Message: red.String(pe.Message)}
		}
		return answer{Failed: true, Code: "command_failed", Message: red.String(err.Error())}
	}
	return answer{Raw: red.JSON(raw)}
}

// proc is a running cell process and its pipes.
type proc struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	enc     *json.Encoder
	msgs    chan fromChild // closed when the process's output ends
	tooLong bool           // set before msgs closes
	peak    uint64         // peak RSS, after stop
}

func startProc() (*proc, error) {
	cmd := command()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &proc{cmd: cmd, stdin: stdin, enc: json.NewEncoder(stdin), msgs: make(chan fromChild, 16)}
	go p.read(stdout)
	// Ready once it has started and waits for its cell: a spare is
	// handed out only then.
	if m, ok := <-p.msgs; !ok || !m.Ready {
		p.stop()
		return nil, errors.New("the cell's process did not start")
	}
	return p, nil
}

func (p *proc) read(r io.Reader) {
	defer close(p.msgs)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxMessage)
	for sc.Scan() {
		var m fromChild
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			return
		}
		p.msgs <- m
		if m.Done != nil {
			return
		}
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		p.tooLong = true
	}
}

func (p *proc) send(m toChild) error { return p.enc.Encode(m) }

// stop kills the process group and reaps it; after it nothing of the cell
// runs. Called once.
func (p *proc) stop() {
	_ = p.stdin.Close()
	kill(p.cmd)
	// The reader may be blocked handing on a message: drain it so the
	// pipe closes and Wait returns.
	go func() {
		for range p.msgs {
		}
	}()
	_ = p.cmd.Wait()
	if p.cmd.ProcessState != nil {
		p.peak = maxRSS(p.cmd.ProcessState)
	}
}
