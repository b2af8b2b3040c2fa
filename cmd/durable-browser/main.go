// Command durable-browser runs browser tools for AI agents as durable
// Temporal activities: `dev` for everything on one machine, `worker` for
// production, and operator verbs for sessions, handoffs, approvals and evidence.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/durable-browser/durable-browser/cmd/internal/cli"
)

// verb is one subcommand.
type verb struct {
	name    string
	summary string
	run     cli.Verb
}

// cliEnv is what a verb may touch (cli.Env, shared by the four commands).
type cliEnv = cli.Env

func verbs() []verb {
	return []verb{
		{"dev", "run everything on this machine: Temporal, its UI, S3, a worker and the demo site", runDev},
		{"worker", "run a worker against an existing Temporal and S3", runWorker},
		{"call", "call a tool in a BrowserSession workflow (created when missing)", runCall},
		{"script", "turn a finished session's history into a script to run again", runScript},
		{"replay-script", "run a script on a session with no model", runReplayScript},
		{"mcp", "serve the tools to MCP clients (Claude, Cursor, VS Code) on stdio or streamable HTTP", runMCP},
		{"sessions", "list BrowserSession workflows", runSessions},
		{"handoff", "list and answer handoffs waiting for a person", runHandoff},
		{"approvals", "list, approve and deny held actions", runApprovals},
		{"evidence", "fetch filed evidence by key, verified against its hash", runEvidence},
		{"recording", "export a workflow's recorded sessions as a WebM with its index", runRecording},
		{"states", "list and delete named browser states (sign-ins kept in S3)", runStates},
		{"demo", "run an agent on the demo site (demo agent, demo handoff, demo crash)", runDemo},
		{"tools", "print the tool definitions (neutral, openai or anthropic)", runTools},
		{"version", "print the version", runVersion},
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "durable-browser: browser tools for AI agents as durable Temporal activities")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: durable-browser <verb> [flags]")
	fmt.Fprintln(w)
	for _, v := range verbs() {
		fmt.Fprintf(w, "  %-10s %s\n", v.name, v.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run `durable-browser <verb> --help` for a verb's flags. Docs: docs/.")
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := cli.OS()
	os.Exit(run(ctx, env, os.Args[1:]))
}

func run(ctx context.Context, env *cliEnv, args []string) int {
	if len(args) == 0 || cli.AsksHelp(args) {
		usage(env.Stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, v := range verbs() {
		if v.name != args[0] {
			continue
		}
		return cli.Status(env, v.name, v.run(ctx, env, args[1:]))
	}
	fmt.Fprintf(env.Stderr, "durable-browser: unknown verb %q\n\n", args[0])
	usage(env.Stderr)
	return 2
}
