// Command durable-browser-dev is `durable-browser dev`: an embedded Temporal
// server, its Web UI, an S3 server, a worker and the demo site, on loopback.
// It also runs `durable-browser demo crash`, which starts a stack of its own.
// It is a binary of its own so that the durable-browser binary (the worker
// and the client verbs) does not link the Temporal server and UI server;
// `durable-browser dev` execs it. Run it either way: the flags are the same.
package main

import (
	"os"

	"github.com/durable-browser/durable-browser/cmd/internal/cli"
)

// cliEnv is what a verb may touch (cli.Env, shared by the four commands).
type cliEnv = cli.Env

func main() {
	name, verb, args := "dev", runDev, os.Args[1:]
	if len(args) > 0 && args[0] == "demo" {
		name, verb, args = "demo", runDemo, args[1:]
	}
	cli.Main(name, verb, args)
}
