package mcpserver

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
	tclient "go.temporal.io/sdk/client"

	dbclient "github.com/durable-browser/durable-browser/client"
	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/oneline"
)

// watch follows one call in flight by reading its session's state every
// Poll: it sends progress notifications when the client asked for them, and
// offers what waits for a person (a held request, a handoff) through
// elicitation when the client supports it and the session takes unsigned
// answers, otherwise it tells the user which CLI command answers it.
type watch struct {
	s     *Server
	c     tclient.Client
	req   *mcp.CallToolRequest
	wfID  string
	tool  string
	start time.Time
	log   zerolog.Logger

	asked map[string]bool
	wg    sync.WaitGroup
}

func (w *watch) run(ctx context.Context) {
	w.asked = map[string]bool{}
	defer w.wg.Wait()
	tick := time.NewTicker(w.s.o.Poll)
	defer tick.Stop()
	token := w.req.Params.GetProgressToken()
	n := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		msg := fmt.Sprintf("%s: running for %s", w.tool, time.Since(w.start).Round(time.Second))
		if st, err := w.state(ctx); err == nil {
			if m := w.people(ctx, st); m != "" {
				msg = m
			}
		}
		if token != nil {
			n++
			if err := w.req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(n), Message: msg}); err != nil && ctx.Err() == nil {
				w.log.Debug().Err(err).Msg("progress notification not sent")
			}
		}
	}
}

func (w *watch) state(ctx context.Context) (*contract.SessionState, error) {
	qctx, cancel := context.WithTimeout(ctx, max(w.s.o.Poll, 2*time.Second))
	defer cancel()
	return dbclient.State(qctx, w.c, w.wfID)
}

// people offers each new hold and handoff once, and returns what the call
// waits for ("" when nothing waits for a person).
func (w *watch) people(ctx context.Context, st *contract.SessionState) string {
	msg := ""
	for _, h := range st.Holds {
		if h.Decision != "" {
			continue
		}
		what := fmt.Sprintf("%s %s%s", h.Method, h.Origin, h.Path)
		cli := fmt.Sprintf("durable-browser approvals approve %s %s (or deny)", w.wfID, h.HoldID)
		msg = fmt.Sprintf("waiting for a person to approve %s: %s", what, cli)
		if w.asked["hold/"+h.HoldID] {
			continue
		}
		w.asked["hold/"+h.HoldID] = true
		if w.canElicit(st) {
			h := h
			w.wg.Go(func() { w.askHold(ctx, h, what, cli) })
		} else {
			w.tell(ctx, msg)
		}
	}
	if p := st.PendingHandoff; p != nil && p.Answer == nil {
		cli := fmt.Sprintf("durable-browser handoff done %s %s (or cancel)", w.wfID, p.RequestID)
		msg = fmt.Sprintf("waiting for a person: %s; when it is done: %s", oneline.Cut(p.Instruction, 200), cli)
		if !w.asked["handoff/"+p.RequestID] {
			w.asked["handoff/"+p.RequestID] = true
			if w.canElicit(st) {
				p := *p
				w.wg.Go(func() { w.askHandoff(ctx, p, cli) })
			} else {
				w.tell(ctx, msg)
			}
		}
	}
	return msg
}

// canElicit: the client takes form elicitation, and the session acts on
// unsigned answers (signed ones need the approver's key: the CLI).
func (w *watch) canElicit(st *contract.SessionState) bool {
	if len(st.Approvers) > 0 {
		return false
	}
	p := w.req.Session.InitializeParams()
	if p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil {
		return false
	}
	e := p.Capabilities.Elicitation
	return e.Form != nil || e.URL == nil
}

// tell sends a log notification to the client (shown to the user by most
// hosts) and logs it here.
func (w *watch) tell(ctx context.Context, msg string) {
	w.log.Warn().Msg(msg)
	// Deprecated only from revision 2026-07-28, which this server does not
	// negotiate; it is how a client without elicitation hears of a person's step.
	//lint:ignore SA1019 served revisions (up to 2025-11-25) have logging
	_ = w.req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "notice", Logger: "durable-browser", Data: msg})
}

// by names the client as the one who answered.
func (w *watch) by() string {
	if ci := w.req.Session.InitializeParams(); ci != nil && ci.ClientInfo != nil && ci.ClientInfo.Name != "" {
		return "mcp:" + oneline.Cut(ci.ClientInfo.Name, 60)
	}
	return "mcp"
}

func (w *watch) askHold(ctx context.Context, h contract.Hold, what, cli string) {
	res, err := w.req.Session.Elicit(ctx, &mcp.ElicitParams{
		Mode: "form",
		Message: fmt.Sprintf("The agent's browser (session %s) wants to send %s, a request with side effects. Approve it?",
			w.wfID, what),
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"decision": map[string]any{"type": "string", "title": "Decision", "enum": []string{contract.DecisionApprove, contract.DecisionDeny}},
			},
			"required": []string{"decision"},
		},
	})
	if err != nil {
		if ctx.Err() == nil {
			w.tell(ctx, fmt.Sprintf("could not ask in the client (%v); answer with %s", err, cli))
		}
		return
	}
	decision := ""
	switch res.Action {
	case "accept":
		decision, _ = res.Content["decision"].(string)
	case "decline":
		decision = contract.DecisionDeny
	}
	if decision != contract.DecisionApprove && decision != contract.DecisionDeny {
		w.tell(ctx, "the request is still held; answer with "+cli)
		return
	}
	sig := contract.ApprovalSignal{HoldID: h.HoldID, Decision: decision, By: w.by(), Note: "answered in the MCP client"}
	if err := w.c.SignalWorkflow(ctx, w.wfID, "", contract.SignalApproval, sig); err != nil && ctx.Err() == nil {
		w.tell(ctx, fmt.Sprintf("sending the decision failed (%v); answer with %s", err, cli))
	}
}

func (w *watch) askHandoff(ctx context.Context, p contract.PendingHandoff, cli string) {
	res, err := w.req.Session.Elicit(ctx, &mcp.ElicitParams{
		Mode: "form",
		Message: fmt.Sprintf("The agent (session %s) asks a person to do this in its browser: %s\n\nThe way to reach the browser went to the worker's handoff notice. Answer when it is done, or cancel.",
			w.wfID, oneline.Cut(p.Instruction, 2000)),
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"outcome": map[string]any{"type": "string", "title": "Outcome", "enum": []string{contract.OutcomeDone, contract.OutcomeCancelled}},
				"note":    map[string]any{"type": "string", "title": "Note for the agent", "maxLength": 500},
			},
			"required": []string{"outcome"},
		},
	})
	if err != nil {
		if ctx.Err() == nil {
			w.tell(ctx, fmt.Sprintf("could not ask in the client (%v); answer with %s", err, cli))
		}
		return
	}
	if res.Action != "accept" {
		w.tell(ctx, "the handoff still waits; answer with "+cli)
		return
	}
	outcome, _ := res.Content["outcome"].(string)
	note, _ := res.Content["note"].(string)
	if outcome != contract.OutcomeDone && outcome != contract.OutcomeCancelled {
		w.tell(ctx, "the handoff still waits; answer with "+cli)
		return
	}
	sig := contract.HandoffSignal{RequestID: p.RequestID, Outcome: outcome, Note: note, By: w.by()}
	if err := w.c.SignalWorkflow(ctx, w.wfID, "", contract.SignalHandoff, sig); err != nil && ctx.Err() == nil {
		w.tell(ctx, fmt.Sprintf("sending the answer failed (%v); answer with %s", err, cli))
	}
}
