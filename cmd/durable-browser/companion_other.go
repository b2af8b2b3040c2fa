//go:build !unix

package main

import (
	"context"
	"errors"
	"os"
	"os/exec"

	"github.com/durable-browser/durable-browser/cmd/internal/cli"
)

// execCompanion runs the companion as a child with this process's streams and
// environment (there is no exec(2) here), passes an interrupt on and returns
// its exit status.
func execCompanion(ctx context.Context, env *cliEnv, path, argv0 string, args []string) error {
	cmd := exec.Command(path, args...)
	cmd.Args[0] = argv0
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, env.Stdout, env.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return companionExitError(err)
	case <-ctx.Done():
		_ = cmd.Process.Signal(os.Interrupt)
		return companionExitError(<-done)
	}
}

// companionExitError carries the companion's exit status through run.
func companionExitError(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if code := ee.ExitCode(); code > 0 {
			return cli.ExitError{Code: code}
		}
		return cli.ExitError{Code: 1}
	}
	return err
}
