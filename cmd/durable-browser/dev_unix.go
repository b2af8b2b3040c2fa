//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"syscall"
)

// execDev replaces this process with durable-browser-dev, keeping its pid,
// environment, standard streams and process group: Ctrl-C and SIGTERM reach
// the dev stack directly, and its exit status is the command's.
func execDev(_ context.Context, _ *cliEnv, path, argv0 string, args []string) error {
	err := syscall.Exec(path, append([]string{argv0}, args...), os.Environ())
	return fmt.Errorf("starting %s: %w", path, err)
}
