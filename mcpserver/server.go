// Package mcpserver serves the contract's tools over the Model Context
// Protocol (the official Go SDK), for agent hosts that speak MCP. It is a
// Temporal client only: every tool call is an Update to a BrowserSession
// workflow (package client), so the browser lives on the workers and a
// session outlives this process. Nothing here links a browser, S3 or a
// server.
//
// The update id of an effect or custody call is derived from the MCP request
// id, so a client that lost an answer (this process was killed mid-call) and
// re-sends the same call with the same request id gets the first answer from
// the session's ledger instead of a second effect.
package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
	tclient "go.temporal.io/sdk/client"

	dbclient "github.com/durable-browser/durable-browser/client"
	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/contract/validate"
	"github.com/durable-browser/durable-browser/internal/envelope"
	"github.com/durable-browser/durable-browser/workflows"
)

// HeaderSession names the session (the BrowserSession workflow id) an HTTP
// client chose. Without it, each MCP session gets a workflow of its own.
const HeaderSession = "Durable-Browser-Session"

// maxWorkflowID bounds a client-chosen session id.
const maxWorkflowID = 200

// Options configure a Server.
type Options struct {
	// Dial connects to Temporal. It is called on the first tool call and
	// again after a failed one, so the server starts while Temporal is down
	// and says so per call.
	Dial func(ctx context.Context) (tclient.Client, error)
	// Address names Temporal in messages.
	Address string
	// WorkflowID, when set, is the one session every call goes to (stdio).
	// Unset, an HTTP client's HeaderSession or its MCP session id decides.
	WorkflowID string
	// Session is the configuration of a session created on first use.
	Session workflows.SessionConfig
	// Timeout bounds each tool call, connecting included (default 10m).
	Timeout time.Duration
	// Poll is how often a call in flight reads its session's state, for
	// progress notifications, held requests and handoffs (default 1s).
	Poll time.Duration
	// MaxImageBytes bounds the screenshot attached as image content
	// (default and at most contract.MaxEvidenceResult).
	MaxImageBytes int64
	Version       string
	Log           zerolog.Logger
}

// Server is an MCP server over the contract's tools.
type Server struct {
	o   Options
	mcp *mcp.Server

	mu sync.Mutex
	c  tclient.Client
}

// New builds a server; it connects to Temporal on the first call.
func New(o Options) *Server {
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Minute
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.MaxImageBytes <= 0 || o.MaxImageBytes > contract.MaxEvidenceResult {
		o.MaxImageBytes = contract.MaxEvidenceResult
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	s := &Server{o: o}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "durable-browser", Version: o.Version}, &mcp.ServerOptions{
		Instructions:              instructions,
		SupportedProtocolVersions: protocolVersions(),
	})
	for _, t := range contract.Definitions() {
		s.mcp.AddTool(&mcp.Tool{
			Name:        t.Name,
			Description: t.Description,
			InputSchema: t.Schema,
			Annotations: annotations(t.Class),
		}, s.handler(t))
	}
	s.mcp.AddReceivingMiddleware(unknownTools)
	return s
}

const instructions = `A real browser that outlives this server: every tool call runs as a durable Temporal activity on a durable-browser worker. Take a snapshot before acting; run takes ref actions from the latest snapshot. A failure is a JSON envelope {"ok":false,"code":...} whose message says what to do next. Reads are filed as evidence (evidence.key in results).`

// newestProtocol is the newest MCP revision served. The next one
// (2026-07-28) forbids server-initiated elicitation in favour of
// multi-round-trip results, which this server does not offer yet; clients
// negotiate down to this one.
const newestProtocol = "2025-11-25"

func protocolVersions() []string {
	var out []string
	for _, v := range mcp.SupportedProtocolVersions() {
		if v <= newestProtocol {
			out = append(out, v)
		}
	}
	return out
}

// annotations hint the replay class to the client.
func annotations(c contract.ReplayClass) *mcp.ToolAnnotations {
	no := false
	switch c {
	case contract.ClassRead:
		return &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}
	case contract.ClassCustody:
		return &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: &no}
	}
	return nil
}

// unknownTools answers a call of a tool the contract does not have with an
// error that lists the ones it has.
func unknownTools(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if r, ok := req.(*mcp.CallToolRequest); ok && method == "tools/call" {
			if _, known := contract.Lookup(r.Params.Name); !known {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(
					"unknown tool %q: durable-browser serves %s (tools/list describes them)", clipID(r.Params.Name), strings.Join(contract.ToolNames(), ", "))}
			}
		}
		return next(ctx, method, req)
	}
}

// MCP is the SDK server, for transports this package does not wrap.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Run serves one client over t (stdio: &mcp.StdioTransport{}) until it
// disconnects or ctx ends.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	return s.mcp.Run(ctx, requestIDs{t})
}

// HTTPHandler serves MCP over streamable HTTP to requests that carry
// "Authorization: Bearer <token>" (an empty token refuses every one). A
// browser page of another origin cannot drive it (cross-origin requests are
// refused), and the SDK refuses a loopback request whose Host is not
// loopback (DNS rebinding).
func (s *Server) HTTPHandler(token string) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, nil)
	return requireBearer(token, http.NewCrossOriginProtection().Handler(tagHTTP(h)))
}

// Close drops the Temporal connection.
func (s *Server) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.c != nil {
		s.c.Close()
		s.c = nil
	}
}

// client connects once; a failed dial is tried again on the next call.
func (s *Server) client(ctx context.Context) (tclient.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.c != nil {
		return s.c, nil
	}
	c, err := s.o.Dial(ctx)
	if err != nil {
		return nil, err
	}
	s.c = c
	return c, nil
}

// workflowID is the session a call goes to.
func (s *Server) workflowID(req *mcp.CallToolRequest) (string, error) {
	if s.o.WorkflowID != "" {
		return s.o.WorkflowID, nil
	}
	if req.Extra != nil && req.Extra.Header != nil {
		if id := strings.TrimSpace(req.Extra.Header.Get(HeaderSession)); id != "" {
			if len(id) > maxWorkflowID || strings.ContainsFunc(id, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				return "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(
					"the %s header must be a printable session id of at most %d characters", HeaderSession, maxWorkflowID)}
			}
			return id, nil
		}
	}
	if req.Session != nil && req.Session.ID() != "" {
		return "mcp-" + req.Session.ID(), nil
	}
	return "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf(
		"no session: send the %s header naming one, or use an MCP session (the Mcp-Session-Id the server gave)", HeaderSession)}
}

// updateID deduplicates a call by the client's request id. Reads get none:
// running a read again is harmless, and a restarted client that reuses a
// request id must not be answered with an old page. The call's hash is part
// of the id, so a reused request id for another call is a new call.
func updateID(req *mcp.CallToolRequest, t contract.Tool, args json.RawMessage) string {
	if t.Class == contract.ClassRead {
		return ""
	}
	id, ok := requestID(req.Params.Meta)
	if !ok {
		return ""
	}
	return fmt.Sprintf("mcp-%s-%s", id, contract.CallHash(t.Name, args)[:16])
}

func (s *Server) handler(t contract.Tool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		wfID, err := s.workflowID(req)
		if err != nil {
			return nil, err
		}
		args := req.Params.Arguments
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage("{}")
		}
		if _, f := validate.Call(t.Name, args); f != nil {
			return failure(f), nil
		}
		ctx, cancel := context.WithTimeout(ctx, s.o.Timeout)
		defer cancel()
		start := time.Now()
		c, err := s.client(ctx)
		if err != nil {
			return failure(contract.Fail(contract.CodeBrowserUnavailable,
				"cannot reach Temporal at %s: %v. Start it (`durable-browser dev` runs everything on this machine) or point `durable-browser mcp --address` at it, then call again",
				s.o.Address, err)), nil
		}
		log := s.o.Log.With().Str("session", wfID).Str("tool", t.Name).Logger()
		w := &watch{s: s, c: c, req: req, wfID: wfID, tool: t.Name, start: start, log: log}
		wctx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() { w.run(wctx) })
		out, err := dbclient.Call(ctx, c, wfID, contract.ToolCall{Name: t.Name, Args: args}, dbclient.CallOptions{
			Config:   s.o.Session,
			UpdateID: updateID(req, t, args),
			Caller:   "the MCP server",
		})
		stop()
		wg.Wait()
		if err != nil {
			log.Warn().Err(err).Msg("tool call failed")
			return failure(s.callFailure(ctx, c, t, wfID, err)), nil
		}
		log.Debug().Dur("took", time.Since(start)).Msg("tool call answered")
		return s.result(ctx, c, contract.ToolCall{Name: t.Name, Args: args}, out), nil
	}
}

// callFailure says why a call got no answer, and what to do.
func (s *Server) callFailure(ctx context.Context, c tclient.Client, t contract.Tool, wfID string, err error) *contract.Failure {
	if ctx.Err() != nil {
		effected := func(f *contract.Failure) *contract.Failure {
			if t.Class == contract.ClassRead {
				return f
			}
			return f.Effected()
		}
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			// The client cancelled it (notifications/cancelled), not the
			// --timeout: say so, not that a timeout passed.
			return effected(contract.Fail(contract.CodeAborted,
				"the call to session %s was cancelled by the client; it may still be running on a worker. Send the same call again to wait for its answer, or take a snapshot to see the page", wfID))
		}
		hctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if _, herr := c.CheckHealth(hctx, &tclient.CheckHealthRequest{}); herr != nil {
			return effected(contract.Fail(contract.CodeBrowserUnavailable,
				"Temporal at %s stopped answering (%v); the call may have run on a worker. Once Temporal is back, send the same call again: an effect already made is answered from the session's record, not made twice",
				s.o.Address, herr))
		}
		return effected(contract.Fail(contract.CodeTimeout,
			"no answer from session %s within %s (durable-browser mcp --timeout); the call may still be running on a worker. Send the same call again to wait for its answer, or take a snapshot to see the page",
			wfID, s.o.Timeout))
	}
	if f, ok := envelope.From(err); ok {
		return f
	}
	return contract.Fail(contract.CodeBrowserUnavailable, "calling session %s through Temporal at %s: %v", wfID, s.o.Address, err)
}

// failure is a tool error carrying the envelope.
func failure(f *contract.Failure) *mcp.CallToolResult {
	b, _ := json.Marshal(f)
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
}

// result is the tool's answer as its model should read it
// (contract.ForModel), with the answer's size, which only the host reads,
// in _meta; a failure envelope is a tool error; a screenshot also carries
// its image.
func (s *Server) result(ctx context.Context, c tclient.Client, call contract.ToolCall, out json.RawMessage) *mcp.CallToolResult {
	var head struct {
		OK   bool           `json:"ok"`
		Size *contract.Size `json:"size"`
	}
	_ = json.Unmarshal(out, &head)
	res := &mcp.CallToolResult{IsError: !head.OK, Content: []mcp.Content{&mcp.TextContent{Text: string(contract.ForModel(call, out))}}}
	if head.Size != nil {
		res.Meta = mcp.Meta{"size": head.Size}
	}
	if head.OK && call.Name == contract.ToolScreenshot {
		if img, note := s.image(ctx, c, out); img != nil {
			res.Content = append(res.Content, img)
		} else if note != "" {
			res.Content = append(res.Content, &mcp.TextContent{Text: note})
		}
	}
	return res
}

// image is a screenshot's bytes as image content: the inline copy when the
// result carries one, else fetched through the workers (the EvidenceGet
// workflow) when it is within MaxImageBytes. Otherwise a note says why not.
func (s *Server) image(ctx context.Context, c tclient.Client, out json.RawMessage) (*mcp.ImageContent, string) {
	var r contract.ScreenshotResult
	if err := json.Unmarshal(out, &r); err != nil {
		return nil, ""
	}
	ev := r.Evidence
	mime := ev.ContentType
	if !strings.HasPrefix(mime, "image/") {
		return nil, ""
	}
	if ev.InlineEncoding == "base64" && ev.Inline != "" {
		if b, err := base64.StdEncoding.DecodeString(ev.Inline); err == nil {
			return &mcp.ImageContent{Data: b, MIMEType: mime}, ""
		}
	}
	if ev.Size > s.o.MaxImageBytes {
		return nil, fmt.Sprintf("image not attached: %d bytes is over the %d-byte bound (durable-browser mcp --max-image-bytes); fetch it with `durable-browser evidence get -o shot.png %s`, or take a smaller screenshot (a region or an element)", ev.Size, s.o.MaxImageBytes, ev.Key)
	}
	run, err := c.ExecuteWorkflow(ctx, tclient.StartWorkflowOptions{
		ID:                       "mcp-evidence-" + uuid.NewString(),
		TaskQueue:                contract.SharedQueue,
		WorkflowExecutionTimeout: time.Minute,
	}, contract.WorkflowEvidence, contract.GetEvidenceRequest{Key: ev.Key})
	var got contract.GetEvidenceResult
	if err == nil {
		err = run.Get(ctx, &got)
	}
	if err != nil {
		msg := err.Error()
		if f, ok := envelope.From(err); ok {
			msg = f.Message
		}
		return nil, fmt.Sprintf("image not attached: fetching %s failed: %s", ev.Key, msg)
	}
	return &mcp.ImageContent{Data: got.Body, MIMEType: mime}, ""
}

// clipID keeps client-chosen names short in messages.
func clipID(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
