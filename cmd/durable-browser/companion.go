package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The verbs with heavy dependencies run from companion binaries, so this one
// (the client verbs) links neither Chromium's driver, nor the AWS SDK, nor
// the MCP SDK, nor the embedded Temporal server, and starts in a few
// milliseconds.
const (
	// workerBinary serves the tools (rod, html-to-markdown, the AWS SDK) and
	// runs `evidence`, which needs the AWS SDK: ~4 MiB more at every start.
	workerBinary = "durable-browser-worker"
	// devBinary is the worker plus the embedded Temporal server and UI.
	devBinary = "durable-browser-dev"
	// mcpBinary is the MCP server (the MCP Go SDK and its JSON schema
	// and jsonrpc packages): ~2 MiB more at every start.
	mcpBinary = "durable-browser-mcp"
)

func runWorker(ctx context.Context, env *cliEnv, args []string) error {
	return runCompanion(ctx, env, workerBinary, args)
}

func runEvidence(ctx context.Context, env *cliEnv, args []string) error {
	return runCompanion(ctx, env, workerBinary, append([]string{"evidence"}, args...))
}

func runStates(ctx context.Context, env *cliEnv, args []string) error {
	return runCompanion(ctx, env, workerBinary, append([]string{"states"}, args...))
}

// runDemo: `demo crash` starts a stack of its own (the embedded Temporal),
// so it runs from the dev binary; the other demos from the worker binary.
func runDemo(ctx context.Context, env *cliEnv, args []string) error {
	if len(args) > 0 && args[0] == "crash" {
		return runCompanion(ctx, env, devBinary, append([]string{"demo"}, args...))
	}
	return runCompanion(ctx, env, workerBinary, append([]string{"demo"}, args...))
}

func runDev(ctx context.Context, env *cliEnv, args []string) error {
	return runCompanion(ctx, env, devBinary, args)
}

func runMCP(ctx context.Context, env *cliEnv, args []string) error {
	return runCompanion(ctx, env, mcpBinary, args)
}

// runCompanion hands the whole command line to the named binary: its flags,
// help, output and exit status are the verb's own.
func runCompanion(ctx context.Context, env *cliEnv, name string, args []string) error {
	self, _ := os.Executable()
	path, err := findCompanion(name, self, exec.LookPath)
	if err != nil {
		return err
	}
	return execCompanion(ctx, env, path, companionArgv0(name, path, self, os.Args[0]), args)
}

// findCompanion looks for the named binary beside this executable (where
// `make build` puts them all), then on PATH.
func findCompanion(name, self string, lookPath func(string) (string, error)) (string, error) {
	if self != "" {
		if resolved, err := filepath.EvalSymlinks(self); err == nil {
			self = resolved
		}
		beside := filepath.Join(filepath.Dir(self), name)
		if fi, err := os.Stat(beside); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return beside, nil
		}
	}
	if p, err := lookPath(name); err == nil {
		return p, nil
	}
	where := "beside this binary"
	if self != "" {
		where = "in " + filepath.Dir(self)
	}
	return "", fmt.Errorf("%s is not installed: it is neither %s nor on PATH, and this verb runs from it. "+
		"Run `make build` (it builds bin/durable-browser and its companions bin/durable-browser-worker, bin/durable-browser-mcp and bin/durable-browser-dev), "+
		"or `go build -o <dir>/ ./cmd/%s` into this binary's directory: %w",
		name, where, name, fs.ErrNotExist)
}

// companionArgv0 is the name the companion is started under. When this binary
// was typed as a relative path (bin/durable-browser) and the companion was
// found beside it, it sees bin/durable-browser-dev, so the commands dev prints
// to try (bin/durable-browser call ...) work as typed.
func companionArgv0(name, path, self, typed string) string {
	if self == "" || !strings.Contains(typed, "/") || filepath.IsAbs(typed) {
		return path
	}
	if resolved, err := filepath.EvalSymlinks(self); err == nil {
		self = resolved
	}
	if filepath.Dir(path) != filepath.Dir(self) {
		return path
	}
	return typed[:strings.LastIndex(typed, "/")+1] + name
}
