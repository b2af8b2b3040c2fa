// Command durable-browser-worker runs the verbs that need the worker's
// libraries (Chromium through rod, the AWS SDK, html-to-markdown):
//
//	durable-browser-worker [flags]              the worker (`durable-browser worker`)
//	durable-browser-worker evidence get ...     `durable-browser evidence`
//	durable-browser-worker recording get ...    `durable-browser recording`
//	durable-browser-worker states list ...      `durable-browser states`
//	durable-browser-worker demo agent ...       `durable-browser demo`
//
// They live in a binary of their own so that the durable-browser binary's
// client verbs link none of that and start in a few milliseconds; its worker
// and evidence verbs exec this binary with the same arguments.
package main

import (
	"context"
	"os"

	"github.com/durable-browser/durable-browser/cmd/internal/cli"
)

// cliEnv is what a verb may touch (cli.Env, shared by the four commands).
type cliEnv = cli.Env

func main() { cli.Main(verb(os.Args[1:])) }

// run runs a verb as main does, in env: for tests.
func run(ctx context.Context, env *cliEnv, args []string) int {
	name, v, args := verb(args)
	return cli.Status(env, name, v(ctx, env, args))
}

// verb picks `evidence ...`, `recording ...`, `states ...` or `demo ...`
// when asked, else the worker with these flags.
func verb(args []string) (string, cli.Verb, []string) {
	for _, v := range []struct {
		name string
		run  cli.Verb
	}{{"evidence", runEvidence}, {"recording", runRecording}, {"states", runStates}, {"demo", runDemo}} {
		if len(args) > 0 && args[0] == v.name {
			return v.name, v.run, args[1:]
		}
	}
	return "worker", runWorker, args
}
