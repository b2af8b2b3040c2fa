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
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/envelope"
	"github.com/durable-browser/durable-browser/workflows"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	client "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// CallOptions describe the session to create when none runs under the id.
type CallOptions struct {
	Config workflows.SessionConfig
	// UpdateID deduplicates the call: resending with the same id returns
	// the first call's result instead of running it again.
	UpdateID string
}

// Call sends one tool call to the BrowserSession with this workflow id,
// starting the session first when it is not running (update-with-start).
// It returns the tool's JSON answer: a result, or a failure envelope.
func Call(ctx context.Context, c client.Client, workflowID string, call contract.ToolCall, o CallOptions) (json.RawMessage, error) {
	// use_website is checked by the session, against the sites it was granted.
	if call.Name != contract.ToolUseWebsite {
		if _, f := contract.Validate(call.Name, call.Args); f != nil {
			return json.Marshal(f)
		}
	}
	// Most calls find their session running: a plain Update is the cheaper
	// round trip. Only when no session runs under the id is it started.
	upd := client.UpdateWorkflowOptions{
		UpdateID:     o.UpdateID,
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
	// No session runs under the id. If one ran and answered this update id,
	// the answer is in its result: a resend never runs the call again.
	if o.UpdateID != "" {
		if out, ok, err := answeredBefore(ctx, c, workflowID, o.UpdateID, call); err != nil || ok {
			return out, err
		}
	}
	start := c.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
		ID:                       workflowID,
		TaskQueue:                contract.SharedQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
	}, contract.WorkflowBrowserSession, o.Config)
	h, err := c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: start,
		UpdateOptions:          upd,
	})
	if err != nil {
		return rejection(err)
	}
	var out json.RawMessage
	if err := h.Get(ctx, &out); err != nil {
		return rejection(err)
	}
	return out, nil
}

// answeredBefore looks for updateID in the ledger of the session that last
// ran under workflowID and has completed.
func answeredBefore(ctx context.Context, c client.Client, workflowID, updateID string, call contract.ToolCall) (json.RawMessage, bool, error) {
	d, err := c.DescribeWorkflowExecution(ctx, workflowID, "")
	if err != nil {
		if isNotRunning(err) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("looking up the session's last run: %w", err)
	}
	info := d.GetWorkflowExecutionInfo()
	if info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		return nil, false, nil
	}
	var res contract.SessionResult
	if err := c.GetWorkflow(ctx, workflowID, info.GetExecution().GetRunId()).Get(ctx, &res); err != nil {
		return nil, false, fmt.Errorf("reading the ended session's result: %w", err)
	}
	for i := len(res.Answered) - 1; i >= 0; i-- {
		a := res.Answered[i]
		if a.UpdateID != updateID {
			continue
		}
		if a.Tool != call.Name || a.Hash != contract.CallHash(call.Name, call.Args) {
			out, err := json.Marshal(contract.Fail(contract.CodeRefused, "update id %q was already used for another call (%s) in the session that ended; send a new call with a new update id", updateID, a.Tool))
			return out, true, err
		}
		return a.Answer, true, nil
	}
	return nil, false, nil
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
			return json.Marshal(f)
		}
		return json.Marshal(contract.Fail(contract.CodeRefused, "%s", app.Message()))
	}
	return nil, fmt.Errorf("calling the session: %w", err)
}

// State asks a BrowserSession for its state.
func State(ctx context.Context, c client.Client, workflowID string) (*contract.SessionState, error) {
	v, err := c.QueryWorkflow(ctx, workflowID, "", contract.QueryState)
	if err != nil {
		return nil, err
	}
	var s contract.SessionState
	if err := v.Get(&s); err != nil {
		return nil, err
	}
	return &s, nil
}
