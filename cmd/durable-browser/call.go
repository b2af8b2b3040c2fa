package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	dbclient "github.com/durable-browser/durable-browser/client"

	"github.com/durable-browser/durable-browser/cmd/internal/cli"
	"github.com/durable-browser/durable-browser/cmd/internal/sessionflags"
	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/config"
)

// callUsage is built when `call` runs: listing the tools builds their
// definitions, which every other verb's start would otherwise pay for.
func callUsage() string {
	return `Usage: durable-browser call [flags] <session-workflow-id> <tool> [json-args]

Sends one tool call to the BrowserSession workflow with that id, as an Update,
creating the session (update-with-start) when none is running. Prints the
tool's JSON answer on stdout; exits 0 when it is ok and 1 for a failure
envelope ({"ok":false,"code":...}). Flags go before the positional arguments.

The session flags (--provider, --stealth, --headed, --profile, --policy,
--allow-hosts, --viewport, ...) apply when the call starts a session. Given to a session
that already runs and was made otherwise, the call is refused, naming each.
Once a session has ended (browser_release, idle, maximum lifetime, close),
calls under its id answer session_ended until one is sent with --new.

Examples:
  durable-browser call demo run '{"actions":[{"op":"goto","url":"http://127.0.0.1:8380/"}]}'
  durable-browser call demo snapshot '{"mode":"interactive"}'
  durable-browser call demo browser_release

The same call with the Temporal CLI:
  temporal workflow execute-update-with-start --workflow-id demo --type BrowserSession \
    --task-queue durable-browser --id-conflict-policy UseExisting --update-name tool \
    --input '{"session":{"provider":"local"}}' --update-input '{"name":"snapshot","args":{}}'

Tools: ` + strings.Join(contract.ToolNames(), ", ") + `

Flags:
`
}

func runCall(ctx context.Context, env *cliEnv, args []string) error {
	fs := cli.Flags("call", env, callUsage())
	var sf sessionflags.Flags
	sessionflags.Bind(fs, &sf, 10*time.Minute, "give up waiting after this long", "trace, debug, info, warn or error")
	var (
		updateID          string
		newSession, model bool
	)
	fs.String(&updateID, "update-id", "", "deduplicate: the same call repeated with the same id returns the first result; another call under a used id is refused")
	fs.Bool(&newSession, "new", false, "start a new session (the next tag, at about:blank) when the last one under this id has ended; without it such a call answers session_ended")
	fs.Bool(&model, "for-model", false, "print the answer as a model reads it (contract.ForModel, what the MCP server sends): less the fields that tell it nothing new")
	if err := fs.ParseFlagsFirst(args, "durable-browser call [flags] <session-workflow-id> <tool> [json-args]"); err != nil {
		return err
	}
	if fs.NArg() == 1 && cli.AsksHelp(fs.Args()) {
		fs.Usage()
		return flag.ErrHelp
	}
	if fs.NArg() < 2 || fs.NArg() > 3 {
		fs.Usage()
		err := fmt.Errorf("want <session-workflow-id> <tool> [json-args], got %d arguments", fs.NArg())
		if fs.NArg() < 2 {
			// No tool named: call's verb is missing, a usage error as
			// a missing verb or sub-verb is (exit status 2).
			return &cli.UsageError{Err: err}
		}
		return err
	}
	log, err := sf.Check(env.Stderr, "e.g. 10m")
	if err != nil {
		return err
	}
	cfg, err := sf.Config()
	if err != nil {
		return err
	}
	raw := json.RawMessage("{}")
	if fs.NArg() == 3 {
		raw = json.RawMessage(fs.Arg(2))
	}
	ctx, cancel, c, err := sf.Dial(ctx, log)
	if err != nil {
		return err
	}
	defer cancel()
	defer c.Close()
	call := contract.ToolCall{Name: fs.Arg(1), Args: raw}
	out, err := dbclient.Call(ctx, c, fs.Arg(0), call, dbclient.CallOptions{
		Config:   cfg,
		UpdateID: updateID,
		New:      newSession,
		Expect:   givenOptions(fs),
		Caller:   "durable-browser call",
	})
	if err != nil && ctx.Err() == context.DeadlineExceeded {
		// The Update may still be running in the session: say how to get
		// its answer instead of only that the wait ended.
		if updateID != "" {
			return fmt.Errorf("no answer within --timeout %s; the call may still be running in the session: send it again with the same --update-id %s to collect its answer (it does not run twice), with a longer --timeout", sf.Client.Timeout, updateID)
		}
		return fmt.Errorf("no answer within --timeout %s; the call may still be running in the session, and without --update-id its answer cannot be collected: give a longer --timeout, and send calls with --update-id so a resend collects the first answer instead of running again", sf.Client.Timeout)
	}
	if err != nil {
		return err
	}
	if model {
		// As the model reads it: compact, its page text after the JSON.
		fmt.Fprintln(env.Stdout, contract.ForModel(call, out))
		return exitStatus(out)
	}
	return printEnvelope(env, out)
}

// givenOptions names the session options whose flags were given, so a
// running session made otherwise refuses the call instead of ignoring them.
func givenOptions(fs *config.Set) []string {
	var out []string
	for _, o := range []struct{ option, flag string }{
		{contract.OptionProvider, "provider"}, {contract.OptionStealth, "stealth"}, {contract.OptionHeaded, "headed"},
		{contract.OptionProfile, "profile"}, {contract.OptionProfile, "save-profile"},
		{contract.OptionActionPolicy, "policy"}, {contract.OptionAllowHosts, "allow-hosts"}, {contract.OptionViewport, "viewport"},
		{contract.OptionState, "state"},
	} {
		if fs.Given(o.flag) && !slices.Contains(out, o.option) {
			out = append(out, o.option)
		}
	}
	return out
}

// printEnvelope prints a tool answer as indented JSON and maps it to the
// exit status.
func printEnvelope(env *cliEnv, out json.RawMessage) error {
	shown := out
	var pretty bytes.Buffer
	if json.Indent(&pretty, out, "", "  ") == nil {
		// Page text may hold control and bidi characters encoding/json
		// leaves raw (U+202E, C1): escaped, the JSON means the same.
		shown = cli.EscapeUnsafe(pretty.Bytes())
	}
	fmt.Fprintln(env.Stdout, string(shown))
	return exitStatus(out)
}

// exitStatus is 0 for an ok answer, 1 for a failure envelope.
func exitStatus(out json.RawMessage) error {
	var head struct {
		OK bool `json:"ok"`
	}
	if json.Unmarshal(out, &head) != nil || !head.OK {
		return cli.ExitError{Code: 1}
	}
	return nil
}
