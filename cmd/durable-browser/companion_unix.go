//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"syscall"
)

// execCompanion replaces this process with the companion binary, keeping its
// pid, environment, standard streams and process group: Ctrl-C and SIGTERM
// reach it directly (no forwarding needed, nothing in between to reap), and
// its exit status is the command's.
func execCompanion(_ context.Context, _ *cliEnv, path, argv0 string, args []string) error {
	err := syscall.Exec(path, append([]string{argv0}, args...), os.Environ())
	return fmt.Errorf("starting %s: %w", path, err)
}
