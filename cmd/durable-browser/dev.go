package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// devBinary is the program `durable-browser dev` runs. The embedded Temporal
// server and UI server live only there, so this binary (the worker and the
// client verbs) stays small and starts fast.
const devBinary = "durable-browser-dev"

// runDev hands the whole command line to durable-browser-dev: its flags, help
// and exit status are dev's own.
func runDev(ctx context.Context, env *cliEnv, args []string) error {
	self, _ := os.Executable()
	path, err := findDev(self, exec.LookPath)
	if err != nil {
		return err
	}
	return execDev(ctx, env, path, devArgv0(path, self, os.Args[0]), args)
}

// findDev looks for durable-browser-dev beside this executable (where `make
// build` puts both), then on PATH.
func findDev(self string, lookPath func(string) (string, error)) (string, error) {
	if self != "" {
		if resolved, err := filepath.EvalSymlinks(self); err == nil {
			self = resolved
		}
		beside := filepath.Join(filepath.Dir(self), devBinary)
		if fi, err := os.Stat(beside); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return beside, nil
		}
	}
	if p, err := lookPath(devBinary); err == nil {
		return p, nil
	}
	where := "beside this binary"
	if self != "" {
		where = "in " + filepath.Dir(self)
	}
	return "", fmt.Errorf("%s is not installed: it is not %s nor on PATH. `dev` runs the embedded Temporal server from that separate binary; "+
		"run `make build` (it builds bin/durable-browser and bin/durable-browser-dev), or `go build -o <dir> ./cmd/durable-browser-dev` into this binary's directory: %w",
		devBinary, where, fs.ErrNotExist)
}

// devArgv0 is the name durable-browser-dev is started under. When this binary
// was typed as a relative path (bin/durable-browser) and dev was found beside
// it, dev sees bin/durable-browser-dev, so the commands it prints to try
// (bin/durable-browser call ...) work as typed.
func devArgv0(path, self, typed string) string {
	if self == "" || !strings.Contains(typed, "/") || filepath.IsAbs(typed) {
		return path
	}
	if resolved, err := filepath.EvalSymlinks(self); err == nil {
		self = resolved
	}
	if filepath.Dir(path) != filepath.Dir(self) {
		return path
	}
	return typed[:strings.LastIndex(typed, "/")+1] + devBinary
}

// devExitError carries dev's exit status through run.
func devExitError(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if code := ee.ExitCode(); code > 0 {
			return exitError{code: code}
		}
		return exitError{code: 1}
	}
	return err
}
