package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/contract/validate"
	"github.com/durable-browser/durable-browser/internal/driver"
	"github.com/durable-browser/durable-browser/internal/jsengine"
	"github.com/durable-browser/durable-browser/internal/listed"
	"github.com/durable-browser/durable-browser/internal/liveview"
	"github.com/durable-browser/durable-browser/internal/scrub"
)

// cellMargin is kept between a cell's deadline and its activity's, so a
// cell that runs out of time answers timeout itself rather than being cut
// by the activity timeout (which reads as effect_unknown).
const cellMargin = 5 * time.Second

// runCell answers run {code}: a code cell over the session's page. It is an
// effect exactly as a batch is: one attempt, a heartbeat carrying the page
// calls completed, requests gated and journalled as a batch's.
func (a *Activities) runCell(ctx context.Context, req contract.RunRequest) (*contract.RunResult, error) {
	ctx, cancelStop := a.untilStopped(ctx)
	defer cancelStop()
	ctx, rs := a.startRun(ctx, req.Policy)
	cp := &pageBridge{a: a, rs: rs}
	s, done, err := a.begin(ctx, req.Session, func(s *liveSession) any {
		p := rs.progress(s.browser.URL(ctx), s.browser.SentSoFar())
		calls := cp.counts()
		p.PageCalls, p.Completed = &calls, calls.Completed
		if len(p.Sent) == 0 {
			p.Sent = cp.sentList()
		}
		return p
	})
	if err != nil {
		return nil, err
	}
	defer done()
	cp.s = s
	// Requests the page sends while the cell computes between page calls
	// meet the gate with this run's state, as a batch's do.
	defer s.browser.Hold(ctx)()

	deadline := time.Duration(req.Args.TimeoutS) * time.Second
	if deadline <= 0 {
		deadline = contract.DefaultCodeTimeoutS * time.Second
	}
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl) - cellMargin; left < deadline {
			deadline = max(left, time.Second)
		}
	}
	co := a.o.Cells
	co.Source, co.Page, co.Deadline = req.Args.Code, cp, deadline
	out, cerr := jsengine.Run(ctx, co)
	if out == nil {
		return nil, contract.Fail(contract.CodeCommandFailed, "the code cell could not start: %v", cerr)
	}
	// Where the active tab is as the cell ends, however it ended: a
	// navigation that failed (one the reach guard refused, say) is answered
	// by the driver once the tab shows its error page, so this is the
	// address every later call finds.
	url, title := s.browser.URL(ctx), s.browser.Title(ctx)
	calls := contract.PageCalls(out.Calls)
	l := rs.lists(cp.sentList(), cp.notListed())
	if f := cp.takenOver.Load(); f != nil {
		// A person took the browser mid-cell: no later page call reached
		// it, however the code went on.
		g := personDriving(errors.New(f.Message))
		g.PageCalls = &calls
		return nil, a.effected(g, url, l, calls, cp.mayHaveActed())
	}
	var ce *jsengine.Error
	if cerr != nil && errors.As(cerr, &ce) {
		if ce.Kind == jsengine.KindCanceled && ctx.Err() != nil {
			f := a.cutMidCall(ctx, s, url, l.sent)
			f.Held, f.NotListed, f.PageCalls = l.held, l.failureCounts(), &calls
			return nil, f
		}
		f := a.cellFailure(ce, out, url, l, cp.mayHaveActed())
		if r := cp.refused.Load(); r != nil && ce.Kind == jsengine.KindCode && ce.Code == string(contract.CodeBlocked) {
			// The cell let a policy refusal escape: it answers as a batch
			// whose navigation was refused does, so no caller retries it.
			f.Code, f.Retryable = contract.CodeBlocked, false
			f.Message = "the code cell stopped on a refused page call: " + r.Message
		}
		return nil, f
	}
	res := &contract.RunResult{
		OK:        true,
		Page:      contract.Page{URL: scrub.URL(url), Title: title},
		Completed: calls.Completed,
		Total:     calls.Made,
		Sent:      l.sent,
		Held:      l.held,
		NotListed: l.notListed,
		Output:    out.Output,
		PageCalls: &calls,
		Console:   out.Console,
	}
	s.stamp(&res.Page)
	cp.fill(res)
	a.saveAfterEffect(ctx, s)
	// The gate's redaction may lengthen the output ("[redacted]"); the
	// limit holds for what the model is sent, so it is measured redacted.
	if n := out.OutputSize; n > jsengine.MaxOutputBytes {
		f := contract.Fail(contract.CodeRefused, "the output is %d bytes of JSON after redaction, over the %d-byte (64 KiB) output limit; emit less", n, jsengine.MaxOutputBytes)
		f.PageCalls = &calls
		return nil, a.effected(f, res.URL, l, calls, cp.mayHaveActed())
	}
	return res, nil
}

// cellFailure is the envelope of a cell that stopped early: the code by
// why, the counts, and in the detail the stack, console and output so far.
func (a *Activities) cellFailure(ce *jsengine.Error, out *jsengine.Result, url string, l runLists, acted bool) *contract.Failure {
	calls := contract.PageCalls(out.Calls)
	var f *contract.Failure
	switch ce.Kind {
	case jsengine.KindCode:
		f = contract.Fail(contract.CodeCodeError, "the code cell failed: %s; fix the code and run it again (%d of %d page calls completed before it stopped; take a snapshot first if they changed the page)", ce.Message, calls.Completed, calls.Made)
	case jsengine.KindLimit:
		f = contract.Fail(contract.CodeRefused, "%s (%d of %d page calls completed)", ce.Message, calls.Completed, calls.Made)
	case jsengine.KindTimeout:
		f = contract.Fail(contract.CodeTimeout, "%s (%d of %d page calls completed)", ce.Message, calls.Completed, calls.Made)
	default:
		f = contract.Fail(contract.CodeAborted, "the code cell was cancelled (%d of %d page calls completed)", calls.Completed, calls.Made)
	}
	var d strings.Builder
	if ce.Stack != "" {
		d.WriteString(ce.Stack)
	}
	if len(out.Console) > 0 {
		fmt.Fprintf(&d, "\nconsole:\n%s", strings.Join(out.Console, "\n"))
	}
	if len(out.Output) > 0 {
		fmt.Fprintf(&d, "\noutput so far: %s", out.Output)
	}
	f.WithDetail(strings.TrimSpace(d.String()))
	f.PageCalls = &calls
	return a.effected(f, url, l, calls, acted)
}

// effected marks a cell's failure possibly effected when a page call
// completed, a failed one may have acted (acted: its input reached the
// page, or its page function ran) or a request left, and says where the
// page is. A page call refused before it reached the page (a page.eval
// after a secret was typed, options off the schema, an unknown secret)
// changed nothing: a cell whose calls all failed so leaves effect none.
func (a *Activities) effected(f *contract.Failure, url string, l runLists, calls contract.PageCalls, acted bool) *contract.Failure {
	if calls.Completed > 0 || acted || len(l.sent) > 0 {
		f.Effected()
	}
	if ce := f.Code; ce == contract.CodeTimeout && f.Effect == contract.EffectPossiblyEffected {
		// Never retried blindly: the cell may have acted.
		f.Retryable = false
	}
	f.LastURL, f.Sent, f.Held, f.NotListed = url, l.sent, l.held, l.failureCounts()
	return f
}

// pageBridge carries a cell's page calls to the driver. Each call is checked
// as the run tool checks a batch's action (the run schema is the one
// definition of the ops), and what each call sent, blocked, opened or
// logged is kept for the result.
type pageBridge struct {
	a  *Activities
	s  *liveSession
	rs *runState

	// takenOver holds the refusal of a page call a person's take-over
	// stopped: whatever the code did with it, the cell answers with it.
	takenOver atomic.Pointer[contract.Failure]
	// refused holds the last page call the reach guard refused (code
	// blocked): a cell stopped by that refusal answers it.
	refused atomic.Pointer[contract.Failure]

	mu    sync.Mutex
	calls jsengine.Counts
	// acted counts failed page calls that may have acted on the page
	// (their failure is possibly effected): one refused before it was
	// sent is not among them.
	acted    int
	sent     listed.List[contract.SentRequest]
	blocked  listed.List[contract.BlockedRequest]
	tabs     listed.List[contract.Tab]
	dialogs  listed.List[contract.Dialog]
	consoleE listed.List[string]
	failedRq listed.List[string]
	dls      listed.List[string]
	shots    int
}

func (p *pageBridge) counts() contract.PageCalls {
	p.mu.Lock()
	defer p.mu.Unlock()
	return contract.PageCalls(p.calls)
}

// mayHaveActed says whether a failed page call may have acted on the page.
func (p *pageBridge) mayHaveActed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.acted > 0
}

func (p *pageBridge) sentList() []contract.SentRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sent.Items()
}

// notListed counts what the cell's lists left out (Held's count is the
// run's journal's).
func (p *pageBridge) notListed() *contract.NotListed {
	p.mu.Lock()
	defer p.mu.Unlock()
	return contract.NotListed{Sent: p.sent.More(), Blocked: p.blocked.More(), TabsOpened: p.tabs.More(), Dialogs: p.dialogs.More(),
		ConsoleErrors: p.consoleE.More(), FailedRequests: p.failedRq.More(), Downloads: p.dls.More()}.OrNil()
}

// fill puts what the cell's calls collected into its result.
func (p *pageBridge) fill(res *contract.RunResult) {
	p.mu.Lock()
	defer p.mu.Unlock()
	res.Blocked, res.TabsOpened, res.Dialogs = p.blocked.Items(), p.tabs.Items(), p.dialogs.Items()
	res.ConsoleErrors, res.FailedRequests, res.Downloads = p.consoleE.Items(), p.failedRq.Items(), p.dls.Items()
}

// actionMethods are the page methods that are run actions.
var actionMethods = map[string]bool{"goto": true, "click": true, "fill": true, "type": true, "press": true,
	"select": true, "check": true, "uncheck": true, "scroll": true, "wait": true}

// Call implements jsengine.Page. The engine redacts what it hands the cell
// (jsengine.Options.Redactor): the cell never holds a secret's value, so it
// cannot put one in its output in another spelling (reversed, encoded)
// that no redaction of the output would find.
func (p *pageBridge) Call(ctx context.Context, method string, args map[string]any) (json.RawMessage, error) {
	p.mu.Lock()
	p.calls.Made++
	p.mu.Unlock()
	raw, f := p.call(ctx, method, args)
	p.mu.Lock()
	if f != nil {
		p.calls.Failed++
		if f.Effect == contract.EffectPossiblyEffected {
			p.acted++
		}
	} else {
		p.calls.Completed++
	}
	p.mu.Unlock()
	if f != nil {
		if f.Code == contract.CodeBlocked {
			p.refused.Store(&contract.Failure{Code: f.Code, Message: f.Message})
		}
		return nil, &jsengine.PageError{Code: string(f.Code), Message: f.Message}
	}
	return raw, nil
}

func (p *pageBridge) call(ctx context.Context, method string, args map[string]any) (json.RawMessage, *contract.Failure) {
	a, b := p.a, p.s.browser
	if p.s.hands != nil {
		// After a person took the browser, no page call of the cell goes on.
		if err := (takeoverGate{p.s}).Check(ctx); err != nil {
			f := personDriving(err)
			p.takenOver.CompareAndSwap(nil, f)
			return nil, f
		}
	}
	switch {
	case actionMethods[method]:
		return p.act(ctx, method, args)
	case method == "snapshot":
		var so contract.SnapshotArgs
		if f := p.validate(contract.ToolSnapshot, method, args, &so); f != nil {
			return nil, f
		}
		res, f := a.snapshot(ctx, p.s, so)
		if f != nil {
			return nil, f
		}
		return p.answer(res)
	case method == "screenshot":
		var so contract.ScreenshotArgs
		if f := p.validate(contract.ToolScreenshot, method, args, &so); f != nil {
			return nil, f
		}
		p.mu.Lock()
		p.shots++
		n := p.shots
		p.mu.Unlock()
		res, f := a.screenshot(ctx, p.s, so, fmt.Sprintf("cell%d", n))
		if f != nil {
			return nil, f
		}
		// The claim check, not the image: a cell returns it as it likes,
		// and the bytes stay out of its output. A shot showing part of
		// the region says so, as the tool's answer does.
		res.Evidence.Inline, res.Evidence.InlineEncoding = "", ""
		return p.answer(cellShot{ClaimCheck: res.Evidence, Cut: res.Cut})
	case method == "text":
		v, err := b.Text(ctx, fmt.Sprint(args["id"]))
		if err != nil {
			return nil, driverFailure(err)
		}
		return p.answer(v)
	case method == "attr":
		v, ok, err := b.Attr(ctx, fmt.Sprint(args["id"]), fmt.Sprint(args["name"]))
		if err != nil {
			return nil, driverFailure(err)
		}
		if !ok {
			return json.RawMessage("null"), nil
		}
		return p.answer(v)
	case method == "url":
		return p.answer(scrub.URL(b.URL(ctx)))
	case method == "title":
		return p.answer(b.Title(ctx))
	case method == "eval":
		src, _ := args["source"].(string)
		argv, _ := args["args"].(string)
		var v json.RawMessage
		var err error
		eval := func() error { v, err = b.Eval(ctx, src, argv); return nil }
		if p.s.hands != nil {
			// Page-side code can act as a click does: sent under the take-over gate.
			if ferr := (takeoverGate{p.s}).Dispatch(ctx, eval); ferr != nil {
				f := personDriving(ferr)
				p.takenOver.CompareAndSwap(nil, f)
				return nil, f
			}
		} else {
			_ = eval()
		}
		if errors.Is(err, driver.ErrSecretTyped) {
			// Refused before anything was sent to the page.
			return nil, contract.Fail(contract.CodeRefused, "%v", err)
		}
		if err != nil {
			f := driverFailure(err)
			if evalRan(err) {
				// The page function was sent: it may have acted before
				// it threw or ran out of time.
				f.Effected()
			}
			return nil, f
		}
		return v, nil
	}
	return nil, contract.Fail(contract.CodeRefused, "page.%s is not a page method", method)
}

// cellShot is page.screenshot's answer: the screenshot's claim check and,
// when the image shows only part of the region, the tool's cut.
type cellShot struct {
	contract.ClaimCheck
	Cut *contract.ScreenshotCut `json:"cut,omitempty"`
}

// validate holds a call's options to the tool's own schema and decodes them.
func (p *pageBridge) validate(tool, method string, args map[string]any, into any) *contract.Failure {
	raw, err := json.Marshal(args)
	if err != nil {
		return contract.Fail(contract.CodeRefused, "page.%s: the options are not JSON", method)
	}
	v, f := validate.Call(tool, raw)
	if f != nil {
		f.Message = strings.ReplaceAll(f.Message, tool+".", "page."+method+" option ")
		return f
	}
	b, _ := json.Marshal(v)
	_ = json.Unmarshal(b, into)
	return nil
}

// act runs one action through the batch path: the run schema, the
// driver's parse, secrets bound to origins, the stale check against the
// latest snapshot.
func (p *pageBridge) act(ctx context.Context, method string, args map[string]any) (json.RawMessage, *contract.Failure) {
	a := p.a
	action := map[string]any{"op": method}
	for k, v := range args {
		action[k] = v
	}
	raw, err := json.Marshal(map[string]any{"actions": []any{action}})
	if err != nil {
		return nil, contract.Fail(contract.CodeRefused, "page.%s: the arguments are not JSON", method)
	}
	if _, f := validate.Call(contract.ToolRun, raw); f != nil {
		f.Message = strings.ReplaceAll(f.Message, "run.actions[0].", "page."+method+" ")
		f.Message = strings.ReplaceAll(f.Message, "call run again", "call page."+method+" again")
		return nil, f
	}
	list, _ := json.Marshal([]any{action})
	actions, err := driver.ParseActions(list)
	if err != nil {
		return nil, contract.Fail(contract.CodeRefused, "page.%s: %v", method, err)
	}
	if f := a.expandSecrets(actions, 0); f != nil {
		f.Message = strings.Replace(f.Message, "action 1", "page."+method, 1)
		return nil, f
	}
	release := p.s.holdSecretFrames(actions)
	out, err := p.s.browser.Run(ctx, actions, driver.RunOptions{})
	release()
	if out != nil {
		a.redactRun(out)
		p.mu.Lock()
		var nl contract.NotListed
		if out.NotListed != nil {
			nl = *out.NotListed
		}
		p.sent.Merge(out.Sent, nl.Sent)
		p.blocked.Merge(out.Blocked, nl.Blocked)
		p.tabs.Merge(out.TabsOpened, nl.TabsOpened)
		p.dialogs.Merge(out.Dialogs, nl.Dialogs)
		p.consoleE.Merge(out.ConsoleErrors, nl.ConsoleErrors)
		p.failedRq.Merge(out.FailedRequests, nl.FailedRequests)
		p.dls.Merge(out.Downloads, nl.Downloads)
		p.mu.Unlock()
	}
	if err != nil {
		f := driverFailure(err)
		if f.Reason == contract.ReasonPersonDriving {
			p.takenOver.CompareAndSwap(nil, f)
		}
		// As a batch's failure: possibly effected when the action
		// completed, sent a request or its input reached the page.
		var ae *driver.ActionError
		if out != nil && (out.Completed > 0 || len(out.Sent) > 0) || errors.As(err, &ae) && ae.MayHaveActed {
			f.Effected()
		}
		return nil, f
	}
	return p.answer(out.Page)
}

// evalRan says whether a failed page.eval had sent its function to the
// page: not when it was refused before (its arguments, the page waiting
// on a server, a person driving, a secret typed).
func evalRan(err error) bool {
	var parse *driver.ParseError
	return !errors.As(err, &parse) && !errors.Is(err, driver.ErrPending) &&
		!errors.Is(err, liveview.ErrPersonDriving) && !errors.Is(err, driver.ErrSecretTyped)
}

// answer writes v as JSON for the cell (Call redacts it).
func (p *pageBridge) answer(v any) (json.RawMessage, *contract.Failure) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, contract.Fail(contract.CodeCommandFailed, "the answer could not be written as JSON")
	}
	return raw, nil
}
