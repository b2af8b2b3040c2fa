// Package workflows is the Go API an orchestrator's Temporal workflow uses to
// give its model a browser, and the BrowserSession custody workflow. All of
// it is deterministic workflow code: it schedules activities by their stable
// names (contract.Activity*), so it does not depend on their implementation.
//
// # Two ways to use it
//
// Inline, from the orchestrator's own workflow: Open creates (or finds, by
// tag) the browser at once and returns a *Browser with one method per tool,
// CallTool for a model's call by name, and Close:
//
//	b, err := workflows.Open(ctx, workflows.Config{Session: contract.SessionOptions{Provider: "local"}})
//	if err != nil {
//		return err // *contract.Failure: no browser could be opened
//	}
//	defer b.Close(ctx)
//	for _, call := range modelCalls {
//		out, err := b.CallTool(ctx, call.Name, call.Args) // result JSON or {"ok":false,"code":...}
//		if err != nil {
//			return err // the workflow was cancelled: not the model's to handle
//		}
//		feedBack(out)
//	}
//
// Typed methods (Snapshot, Run, ...) return a tool failure as an
// *contract.Failure error (errors.As); it never fails the workflow unless
// the caller returns it. Open also registers the handoff, hold and approval
// signals and the hold query on the orchestrator's workflow (set
// Config.SkipHumanHandlers on all but one Browser if a workflow opens several).
// To continue as new, carry Browser.State() into Config.Resume.
//
// As a child workflow or a standalone session: BrowserSession (registered
// under WorkflowBrowserSession) holds one conversation's browser. The caller
// picks its workflow id and sends each tool call as the UpdateTool update
// (ToolCall in, result or failure envelope JSON out); update-with-start
// creates it on the first call. It creates the browser on the first call,
// serves calls one at a time, and releases the browser after the idle window
// (never mid-call), at its maximum lifetime, on SignalClose or on
// browser_release, continuing as new when Temporal suggests it.
//
//	w.RegisterWorkflowWithOptions(workflows.BrowserSession, workflow.RegisterOptions{Name: workflows.WorkflowBrowserSession})
//
// # Replay classes and lost workers
//
// ActivityOptions maps each replay class to activity options: reads retry
// (3 attempts, backoff) and stop on a non-retryable code; run and
// browser_upload run once; custody calls retry. Browser calls go to the
// session's host queue with a schedule-to-start bound. A call that never
// started (schedule-to-start timeout) did nothing: its worker is gone, so a
// new session is opened under the next tag and the call answers
// session_replaced. An effect call that started and went silent (heartbeat or
// start-to-close timeout) answers effect_unknown with the last URL and the
// requests it had sent, read from its heartbeats; the identical run is then
// refused once, the identical upload until a snapshot. A call that failed
// twice in a row with the same code is refused without running.
//
// # People
//
// browser_request_handoff notifies a person (handoff.notify on the host),
// marks the session waiting_for_human (other calls answer that code), waits
// for SignalHandoff or the expiry, then snapshots and checks the completion
// condition. Under the "ask" action policy, browser.run reports each held
// request with SignalHold and polls QueryHold; people decide with
// SignalApproval.
package workflows
