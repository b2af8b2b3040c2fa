// Command durable-browser-dev is `durable-browser dev`: an embedded Temporal
// server, its Web UI, an S3 server, a worker and the demo site, on loopback.
// It is a binary of its own so that the durable-browser binary (the worker
// and the client verbs) does not link the Temporal server and UI server;
// `durable-browser dev` execs it. Run it either way: the flags are the same.
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

// cliEnv is what runDev may touch.
type cliEnv struct {
	stdout, stderr io.Writer
	getenv         func(string) string
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := &cliEnv{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
	err := runDev(ctx, env, os.Args[1:])
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return
	default:
		fmt.Fprintf(os.Stderr, "durable-browser dev: %v\n", err)
		os.Exit(1)
	}
}
