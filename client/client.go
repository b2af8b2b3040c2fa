// Package client reaches BrowserSession workflows from outside workflow code:
// a service, a CLI, a test, or an orchestrator's activity. Call sends one tool
// call to the session with a given workflow id (starting it when none runs)
// and State asks it for its state.
//
// It uses a Temporal client.Client and makes network calls, so it must not be
// used inside workflow code: a workflow uses package workflows instead
// (workflows.Open and Browser.CallTool, or an Update through a child
// BrowserSession). Nothing here links a browser, an S3 client or a server.
//
//	c, _ := tclient.Dial(tclient.Options{HostPort: "127.0.0.1:7233"})
//	out, err := client.Call(ctx, c, "conv-42", contract.ToolCall{Name: "snapshot"}, client.CallOptions{UpdateID: "turn-7"})
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/envelope"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	client "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// CallOptions describe the session to create when none runs under the id.
type CallOptions struct {
	Config contract.SessionConfig
	// UpdateID deduplicates the call: resending the same call with the same
	// id returns the first call's result instead of running it again. The
	// same id with another tool or other arguments is refused as a conflict.
	UpdateID string
	// New starts a new session under the workflow id after the last one
	// there ended (released, idle, maximum lifetime, closed); its tag takes
	// the next number. Without it such a call answers session_ended, so a
	// caller never lands on a fresh browser unawares. It changes nothing
	// while a session runs.
	New bool
	// Expect names options of Config.Session the caller set on purpose
	// (contract.MadeOptions entries, or contract.OptionState). A session that already runs and was
	// made otherwise in one of them refuses the call, naming each.
	Expect []string
	// Caller names who opens the session when this call starts it (a
	// workflow id, "durable-browser call"): the Temporal UI shows it in the
	// session's summary.
	Caller string
}

// Call sends one tool call to the BrowserSession with this workflow id,
// starting the session first when it is not running (update-with-start).
// It returns the tool's JSON answer: a result, or a failure envelope, as
// the session wrote it (<, > and & as themselves: the session counted them
// so in the answer's size).
func Call(ctx context.Context, c client.Client, workflowID string, call contract.ToolCall, o CallOptions) (json.RawMessage, error) {
	out, err := callSession(ctx, c, workflowID, call, o)
	return unescapeHTML(out), err
}

func callSession(ctx context.Context, c client.Client, workflowID string, call contract.ToolCall, o CallOptions) (json.RawMessage, error) {
	if err := contract.CheckSessionID(workflowID); err != nil {
		return nil, err
	}
	// Arguments that are not JSON at all cannot be sent (the SDK's encoder
	// refuses them with its own error): refuse them as the session refuses
	// arguments that are not an object.
	if len(bytes.TrimSpace(call.Args)) == 0 {
		call.Args = json.RawMessage("{}")
	} else if !json.Valid(call.Args) {
		var v any
		return answer(contract.ArgsNotJSON(call.Name, json.Unmarshal(call.Args, &v)))
	}
	// The session checks the arguments (its update validator, the one
	// check there is): a call it refuses leaves no history, and this
	// package does not link the schema validator, whose initialisation
	// would cost every program that only calls sessions.
	if len(o.Expect) > 0 {
		call.Expect = &contract.Expected{Options: o.Config.Session, Fields: o.Expect}
	}
	// A running session someone else started with other approvers or
	// granted sites refuses this call instead of serving it under theirs.
	call.Join = &contract.Joined{Approvers: o.Config.Approvers, Sites: o.Config.Sites}
	// Most calls find their session running: a plain Update is the cheaper
	// round trip. Only when no session runs under the id is it started.
	upd := client.UpdateWorkflowOptions{
		UpdateID:     contract.UpdateIDFor(o.UpdateID, call),
		WorkflowID:   workflowID,
		UpdateName:   contract.UpdateTool,
		Args:         []any{call},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	}
	if h, err := c.UpdateWorkflow(ctx, upd); err == nil {
		var out json.RawMessage
		if err := h.Get(ctx, &out); err != nil {
			return rejection(err)
		}
		return out, nil
	} else if !isNotRunning(err) {
		return rejection(err)
	}
	// No session runs under the id. Most often none ever ran: start one
	// at once, refusing the start where an ended run is (one round trip,
	// not a look-up first).
	out, err := startSession(ctx, c, workflowID, o.Config, o.Caller, upd, enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE)
	var ended *serviceerror.WorkflowExecutionAlreadyStarted
	if !errors.As(err, &ended) {
		return out, err
	}
	// One ran and ended. If it answered this update id, the answer is in
	// its result: a resend never runs the call again. Otherwise a new one
	// starts only when asked for.
	last, err := lastSession(ctx, c, workflowID)
	if err != nil {
		return nil, err
	}
	cfg := o.Config
	if last != nil {
		if out, ok, err := answeredBefore(last, o.UpdateID, call); err != nil || ok {
			return out, err
		}
		if !o.New {
			if call.Name == contract.ToolRelease {
				// Releasing is safe to repeat: the browser is gone already.
				return answer(contract.ReleaseResult{OK: true, Tag: last.Tag, Released: false})
			}
			return answer(contract.SessionEnded(last.Tag, last.Reason))
		}
		cfg.Previous = &contract.Previous{Tag: last.Tag, Seq: seqOf(last), Reason: last.Reason}
	}
	return startSession(ctx, c, workflowID, cfg, o.Caller, upd, enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE)
}

// startSession starts the session workflow with the call as its first
// update (or sends the update to one started meanwhile). A start the reuse
// policy refuses is the server's error as it is (the caller looks for
// WorkflowExecutionAlreadyStarted); other errors are as rejection says.
func startSession(ctx context.Context, c client.Client, workflowID string, cfg contract.SessionConfig, caller string,
	upd client.UpdateWorkflowOptions, reuse enumspb.WorkflowIdReusePolicy) (json.RawMessage, error) {
	summary, details := contract.StartSummary(cfg, caller)
	start := c.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
		StaticSummary:            summary,
		StaticDetails:            details,
		ID:                       workflowID,
		TaskQueue:                contract.SharedQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    reuse,
	}, contract.WorkflowBrowserSession, cfg)
	h, err := c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: start,
		UpdateOptions:          upd,
	})
	var refused *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &refused) {
		return nil, err
	}
	if err != nil {
		return rejection(err)
	}
	var out json.RawMessage
	if err := h.Get(ctx, &out); err != nil {
		return rejection(err)
	}
	return out, nil
}

// lastSession is the result of the session that last ran under workflowID,
// when it ended by completing (released, idle, lifetime, closed); nil when
// none ran or it ended otherwise (failed, terminated, cancelled).
func lastSession(ctx context.Context, c client.Client, workflowID string) (*contract.SessionResult, error) {
	d, err := c.DescribeWorkflowExecution(ctx, workflowID, "")
	if err != nil {
		if isNotRunning(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("looking up the session's last run: %w", err)
	}
	info := d.GetWorkflowExecutionInfo()
	if info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		return nil, nil
	}
	var res contract.SessionResult
	if err := c.GetWorkflow(ctx, workflowID, info.GetExecution().GetRunId()).Get(ctx, &res); err != nil {
		return nil, fmt.Errorf("reading the ended session's result: %w", err)
	}
	return &res, nil
}

// answeredBefore looks for updateID in the ledger of the ended session.
func answeredBefore(res *contract.SessionResult, updateID string, call contract.ToolCall) (json.RawMessage, bool, error) {
	if updateID == "" {
		return nil, false, nil
	}
	for i := len(res.Answered) - 1; i >= 0; i-- {
		a := res.Answered[i]
		if a.UpdateID != updateID {
			continue
		}
		if a.Tool != call.Name || a.Hash != contract.CallHash(call.Name, call.Args) {
			out, err := answer(contract.Fail(contract.CodeRefused, "update id %q was already used for another call (%s) in the session that ended; send a new call with a new update id", updateID, a.Tool))
			return out, true, err
		}
		return a.Answer, true, nil
	}
	return nil, false, nil
}

// seqOf is the ended session's number: its result's, or its tag's -<n>
// (results from before Seq was kept), 0 when it opened no browser.
func seqOf(res *contract.SessionResult) int {
	if res.Seq > 0 || res.Tag == "" {
		// A session that never opened a browser used no number.
		return res.Seq
	}
	if i := strings.LastIndexByte(res.Tag, '-'); i >= 0 {
		if n, err := strconv.Atoi(res.Tag[i+1:]); err == nil && n > 0 {
			return n
		}
	}
	return 1
}

// isNotRunning reports that no workflow runs under the id (none yet, or it
// has ended), so the call should start a session.
func isNotRunning(err error) bool {
	var nf *serviceerror.NotFound
	return errors.As(err, &nf)
}

// rejection turns an update the session's validator rejected into the same
// refused envelope a model would see; other errors stay errors.
func rejection(err error) (json.RawMessage, error) {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		if f, ok := envelope.From(err); ok {
			return answer(f)
		}
		return answer(contract.Fail(contract.CodeRefused, "%s", app.Message()))
	}
	return nil, fmt.Errorf("calling the session: %w", err)
}

// answer is an answer this package gives itself (a refusal before the
// session ran the call, a session that ended), encoded as the session
// encodes its own: < > & as themselves, and its size as the last field.
func answer(v any) (json.RawMessage, error) {
	out, _, err := contract.EncodeAnswer(v)
	return out, err
}

// State asks a BrowserSession for its state.
func State(ctx context.Context, c client.Client, workflowID string) (*contract.SessionState, error) {
	return query(ctx, c, workflowID, contract.QueryState)
}

// BrowserState asks a workflow with a browser, a BrowserSession or one
// that opened its browser inline (workflows.Open), for what people
// deciding need of it (contract.QueryBrowserState): its tag, page,
// pending handoff, holds, approvers and refused decisions. A
// BrowserSession on a worker that predates that query is asked for its
// state instead.
func BrowserState(ctx context.Context, c client.Client, workflowID string) (*contract.SessionState, error) {
	s, err := query(ctx, c, workflowID, contract.QueryBrowserState)
	var qf *serviceerror.QueryFailed
	if errors.As(err, &qf) {
		if st, err2 := query(ctx, c, workflowID, contract.QueryState); err2 == nil {
			return st, nil
		}
	}
	return s, err
}

func query(ctx context.Context, c client.Client, workflowID, name string) (*contract.SessionState, error) {
	v, err := c.QueryWorkflow(ctx, workflowID, "", name)
	if err != nil {
		return nil, err
	}
	var s contract.SessionState
	if err := v.Get(&s); err != nil {
		return nil, err
	}
	return &s, nil
}
