// Command durable-browser-worker runs the verbs that need the worker's
// libraries (Chromium through rod, the AWS SDK, html-to-markdown):
//
//	durable-browser-worker [flags]              the worker (`durable-browser worker`)
//	durable-browser-worker evidence get ...     `durable-browser evidence`
//	durable-browser-worker recording get ...    `durable-browser recording`
//	durable-browser-worker states list ...      `durable-browser states`
//	durable-browser-worker demo agent ...       `durable-browser demo`
//
// They live in a binary of their own so that the durable-browser binary's
// client verbs link none of that and start in a few milliseconds; its worker
// and evidence verbs exec this binary with the same arguments.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/durable-browser/durable-browser/cmd/internal/cli"
)

// cliEnv is what a verb may touch (cli.Env, shared by the four commands).
type cliEnv = cli.Env

// exitError carries a specific exit status.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	env := cli.OS()
	code := run(ctx, env, os.Args[1:])
	stop()
	os.Exit(code)
}

// run runs `evidence ...` when asked, else the worker with these flags.
func run(ctx context.Context, env *cliEnv, args []string) int {
	name, verb := "worker", runWorker
	if len(args) > 0 && args[0] == "evidence" {
		name, verb, args = "evidence", runEvidence, args[1:]
	}
	if len(args) > 0 && args[0] == "recording" {
		name, verb, args = "recording", runRecording, args[1:]
	}
	if len(args) > 0 && args[0] == "states" {
		name, verb, args = "states", runStates, args[1:]
	}
	if len(args) > 0 && args[0] == "demo" {
		name, verb, args = "demo", runDemo, args[1:]
	}
	err := verb(ctx, env, args)
	var ee exitError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ee):
		return ee.code
	default:
		fmt.Fprintf(env.Stderr, "durable-browser %s: %v\n", name, err)
		return 1
	}
}
