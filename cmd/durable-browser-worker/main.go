// Command durable-browser-worker is `durable-browser worker`: it serves the
// browser tools (Chromium through rod, evidence to S3, web fetch) as Temporal
// activities. It is a binary of its own so that the durable-browser binary's
// client verbs link none of that and start fast; `durable-browser worker`
// execs it. Run it either way: the flags are the same.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// cliEnv is what runWorker may touch.
type cliEnv struct {
	stdout, stderr io.Writer
	getenv         func(string) string
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := &cliEnv{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
	err := runWorker(ctx, env, os.Args[1:])
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return
	default:
		fmt.Fprintf(os.Stderr, "durable-browser worker: %v\n", err)
		os.Exit(1)
	}
}
