//go:build !unix

package main

import (
	"context"
	"os"
	"os/exec"
)

// execDev runs durable-browser-dev as a child with this process's streams and
// environment (no exec(2) here), passes an interrupt on and returns its exit
// status.
func execDev(ctx context.Context, env *cliEnv, path, argv0 string, args []string) error {
	cmd := exec.Command(path, args...)
	cmd.Args[0] = argv0
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, env.stdout, env.stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return devExitError(err)
	case <-ctx.Done():
		_ = cmd.Process.Signal(os.Interrupt)
		return devExitError(<-done)
	}
}
