package main

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/durable-browser/durable-browser/cmd/internal/cli"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func runVersion(_ context.Context, env *cliEnv, args []string) error {
	fs := cli.Flags("version", env, "Usage: durable-browser version\n\nPrints the version and the Temporal SDK it was built with.\n")
	if err := fs.Parse(args); err != nil {
		return err
	}
	sdk := "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "go.temporal.io/sdk" {
				sdk = d.Version
			}
		}
	}
	fmt.Fprintf(env.Stdout, "durable-browser %s (temporal sdk %s)\n", version, sdk)
	return nil
}
