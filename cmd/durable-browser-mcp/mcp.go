package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/durable-browser/durable-browser/cmd/internal/cli"
	"github.com/durable-browser/durable-browser/cmd/internal/sessionflags"
	"github.com/durable-browser/durable-browser/internal/config"
	"github.com/durable-browser/durable-browser/internal/dial"
	"github.com/durable-browser/durable-browser/mcpserver"
)

const mcpUsage = `Usage: durable-browser mcp [flags]

An MCP server over the durable-browser tools, on stdio (the default) or
streamable HTTP (--http 127.0.0.1:8931, served at /mcp). It is a Temporal
client: every tool call is an Update to a BrowserSession workflow, so the
browser lives on the workers and survives this process, the client and the
worker restarting. An effect re-sent with the same MCP request id is
answered from the session's record, never made twice.

Sessions: on stdio every call goes to --session (default: a new id, printed
on stderr). Over HTTP each MCP session gets a workflow of its own, unless the
client names one with the Durable-Browser-Session header.

Over HTTP every request must carry "Authorization: Bearer <token>": the token
given in DURABLE_BROWSER_HTTP_TOKEN (or --http-token), else a new one made at
start and printed on stderr.

A held request (--policy ask) or a handoff is offered to the user through MCP
elicitation when the client supports it; otherwise answer it with
` + "`durable-browser approvals`" + ` or ` + "`durable-browser handoff`" + `. See docs/mcp.md.

Flags:
`

func runMCP(ctx context.Context, env *cliEnv, args []string) error {
	fs := cli.Flags("mcp", env, mcpUsage)
	var sf sessionflags.Flags
	sessionflags.Bind(fs, &sf, 10*time.Minute, "bound on each tool call, waiting for approvals and handoffs included", "trace, debug, info, warn or error (logs go to stderr)")
	var (
		session, httpAddr, token string
		connect                  time.Duration
		maxImage                 int
	)
	fs.String(&session, "session", "", "stdio: the session (BrowserSession workflow id) every call goes to; default a new one, printed on stderr. Give the same id after a restart to return to the same browser and page")
	fs.String(&httpAddr, "http", "", "serve streamable HTTP on this host:port (at /mcp) instead of stdio")
	fs.String(&token, "http-token", "", "HTTP: the bearer token every request must carry (Authorization: Bearer ...), at least 16 characters; default a new one, printed on stderr. Prefer the environment variable: a flag shows in the process list")
	fs.Duration(&connect, "connect-timeout", 10*time.Second, "bound on connecting to Temporal (within --timeout)")
	fs.Int(&maxImage, "max-image-bytes", 384<<10, "largest screenshot attached as image content (at most 384 KiB)")
	if err := cli.ParseNoArgs(fs, args, "mcp"); err != nil {
		return err
	}
	log, err := sf.Check(env.Stderr, "e.g. 10m")
	if err != nil {
		return err
	}
	log = log.With().Timestamp().Str("component", "mcp").Logger()
	cfg, err := sf.Config()
	if err != nil {
		return err
	}
	if connect <= 0 {
		return &config.Error{Flag: "connect-timeout", Problem: "must be positive", Fix: "e.g. 10s"}
	}
	if maxImage <= 0 {
		return &config.Error{Flag: "max-image-bytes", Problem: "must be positive", Fix: "e.g. 393216"}
	}
	if httpAddr != "" && session != "" {
		return &config.Error{Flag: "session", Problem: "is for stdio", Fix: "over HTTP a client names its session with the " + mcpserver.HeaderSession + " header"}
	}
	if httpAddr != "" && token != "" {
		if err := mcpserver.CheckToken(token); err != nil {
			return &config.Error{Flag: "http-token", Problem: err.Error()}
		}
	}
	if httpAddr == "" && session == "" {
		session = newSessionID()
		fmt.Fprintf(env.Stderr, "durable-browser mcp: session %s (start with --session %s to come back to this browser)\n", session, session)
	}
	srv := mcpserver.New(mcpserver.Options{
		Dial: func(ctx context.Context) (client.Client, error) {
			ctx, cancel := context.WithTimeout(ctx, connect)
			defer cancel()
			return dial.Temporal(ctx, sf.Temporal, log, nil)
		},
		Address:       sf.Temporal.Address,
		WorkflowID:    session,
		Session:       cfg,
		Timeout:       sf.Timeout,
		MaxImageBytes: int64(maxImage),
		Version:       version,
		Log:           log,
	})
	defer srv.Close()
	if httpAddr == "" {
		return srv.Run(ctx, mcpserver.Stdio(os.Stdin, os.Stdout))
	}
	ln, err := net.Listen("tcp", httpAddr)
	if err != nil {
		return &config.Error{Flag: "http", Problem: err.Error(), Fix: "give a free host:port, e.g. 127.0.0.1:8931"}
	}
	mux := http.NewServeMux()
	if token == "" {
		token = mcpserver.NewToken()
		fmt.Fprintf(env.Stderr, "durable-browser mcp: bearer token %s (clients send the header \"Authorization: Bearer %s\"; set %s to keep one across restarts)\n",
			token, token, config.EnvName("http-token"))
	}
	mux.Handle("/mcp", srv.HTTPHandler(token))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(env.Stderr, "durable-browser mcp: serving MCP at http://%s/mcp (Temporal %s; requests need the bearer token)\n", ln.Addr(), sf.Temporal.Address)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// newSessionID names a new stdio session.
func newSessionID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "mcp-" + hex.EncodeToString(b)
}
