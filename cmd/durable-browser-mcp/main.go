// Command durable-browser-mcp is `durable-browser mcp`: the MCP server over
// the tools, on stdio or streamable HTTP. It is a binary of its own so that
// the durable-browser binary's other client verbs do not link the MCP SDK
// (about 2 MiB more resident at every start); `durable-browser mcp` execs
// it with the same arguments. Run it either way: the flags are the same.
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

// cliEnv is what runMCP may touch.
type cliEnv struct {
	stdout, stderr io.Writer
	getenv         func(string) string
}

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	env := &cliEnv{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
	err := runMCP(ctx, env, os.Args[1:])
	stop()
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return
	default:
		fmt.Fprintf(os.Stderr, "durable-browser mcp: %v\n", err)
		os.Exit(1)
	}
}
