package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/rs/zerolog"

	dbclient "github.com/durable-browser/durable-browser/client"
	"github.com/durable-browser/durable-browser/cmd/internal/cli"
	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/config"
)

const scriptUsage = `Usage: durable-browser script [flags] <session-workflow-id> > script.json

Turns a session's history into a script of its calls that answered ok (not
snapshots, releases, relaunches, handoffs or use_website), with each element id
replaced by the locator {role, name} of the element the session's snapshots
showed under it. Run it again with durable-browser replay-script.

Flags:
`

// runScript prints a finished session's calls as a script to run again.
func runScript(ctx context.Context, env *cliEnv, args []string) error {
	fs := cli.Flags("script", env, scriptUsage)
	var tf cli.Client
	cli.BindClient(fs, &tf, time.Minute, "give up reading the history after this long", "")
	log, err := checkOneArg(env, fs, args, "<session-workflow-id>", &tf)
	if err != nil {
		return err
	}
	if err := contract.CheckSessionID(fs.Arg(0)); err != nil {
		return err
	}
	ctx, cancel, c, err := tf.Dial(ctx, log)
	if err != nil {
		return err
	}
	defer cancel()
	defer c.Close()
	s, err := dbclient.ScriptFromHistory(ctx, c, fs.Arg(0))
	if err != nil {
		return err
	}
	enc := json.NewEncoder(env.Stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(s)
}

const replayScriptUsage = `Usage: durable-browser replay-script [flags] FILE

Runs a script made by durable-browser script, step by step, in a BrowserSession
(created when missing), with no model: each locator is resolved on the page as
it is then. Prints what happened; exits 1 when a step stopped the script (a
locator matching nothing or several stops it with stale_snapshot). The session
is left open, so an agent can take over where the script stopped.

Flags:
`

// runReplayScript runs a script on a session with no model.
func runReplayScript(ctx context.Context, env *cliEnv, args []string) error {
	fs := cli.Flags("replay-script", env, replayScriptUsage)
	var tf cli.Client
	cli.BindClient(fs, &tf, 30*time.Minute, "give up after this long", "")
	var session string
	fs.String(&session, "session", "", "the session workflow id to run in (default: script-<time>)")
	log, err := checkOneArg(env, fs, args, "FILE", &tf)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	var s dbclient.Script
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("%s is not a script: %w", fs.Arg(0), err)
	}
	if session == "" {
		session = "script-" + time.Now().UTC().Format("20060102-150405")
	}
	ctx, cancel, c, err := tf.Dial(ctx, log)
	if err != nil {
		return err
	}
	defer cancel()
	defer c.Close()
	run, err := dbclient.RunScript(ctx, c, session, &s, dbclient.CallOptions{Config: contract.SessionConfig{SearchAttributes: true}})
	if err != nil {
		return err
	}
	enc := json.NewEncoder(env.Stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(run); err != nil {
		return err
	}
	if run.Stopped != nil {
		return cli.ExitError{Code: 1}
	}
	return nil
}

// checkOneArg parses the flags of a verb that takes one argument (want
// names it in the error) and checks them, answering the verb's logger.
func checkOneArg(env *cliEnv, fs *config.Set, args []string, want string, tf *cli.Client) (zerolog.Logger, error) {
	if err := fs.Parse(args); err != nil {
		return zerolog.Nop(), err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return zerolog.Nop(), fmt.Errorf("want %s, got %d arguments", want, fs.NArg())
	}
	return tf.Check(env.Stderr, "e.g. 1m")
}
