package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/durable-browser/durable-browser/demo"
	"github.com/durable-browser/durable-browser/internal/config"
	"github.com/durable-browser/durable-browser/internal/dial"
	"github.com/durable-browser/durable-browser/internal/logging"
)

const demoUsage = `Usage: durable-browser demo agent|handoff [flags]

Runs an agent on the demo site's shop, against a running stack (after
` + "`make run`" + ` it needs no flags): an orchestrator workflow (DemoAgent) runs the
agent loop over the tool definitions and the Go API, with the model as an
activity. With OPENAI_API_KEY set it asks that model (OPENAI_BASE_URL for any
compatible server, OPENAI_MODEL or --openai-model to pick one); else with
ANTHROPIC_API_KEY, Anthropic's (ANTHROPIC_BASE_URL, ANTHROPIC_MODEL); with
neither, or with --scripted, a scripted stand-in that reads each page and
picks the next tool call, so it runs offline.

The task: sign in with the test account, search, add a desk lamp to the cart,
check out, read the confirmation and cite it with its evidence. The browser
runs under the ask policy: every request with side effects waits for a
person. The demo approves the sign-in and the cart for you and prints them;
the order waits for you, and the demo prints the command that approves it
(--approve approves it too).

demo handoff: the agent opens a page only a person can pass (the demo site's
"press and hold" check), tries, then asks for a person with
browser_request_handoff and waits; the demo prints the command that answers
it (the way to reach the browser goes to the worker's handoff notice: dev
prints it). The agent then says how it went.

This process runs the demo's own worker (task queue durable-browser-demo);
the browser tools run on the stack's workers.

demo crash (run by durable-browser-dev: see durable-browser demo crash
--help) is the same task on a stack of its own, with the browser worker
killed mid-run; the agent must end with one order, not two.

Flags:
`

func runDemo(ctx context.Context, env *cliEnv, args []string) error {
	if len(args) == 0 || args[0] != "agent" && args[0] != "handoff" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprint(env.stderr, demoUsage)
			return flag.ErrHelp
		}
		fmt.Fprint(env.stderr, demoUsage)
		return fmt.Errorf("want `demo agent` or `demo handoff` (`demo crash` runs from durable-browser-dev: `durable-browser demo crash`)")
	}
	kind := demo.KindShop
	if args[0] == "handoff" {
		kind = demo.KindHandoff
	}
	fs := config.NewSet("demo "+args[0], env.getenv)
	fs.SetOutput(env.stderr)
	var (
		t                           config.Temporal
		site, logLevel, openaiModel string
		approve, scriptedOnly       bool
		timeout                     time.Duration
	)
	config.BindTemporal(fs, &t)
	fs.String(&site, "site", "http://127.0.0.1:8380", "the demo site's address (durable-browser dev serves it there)")
	fs.Bool(&approve, "approve", false, "approve the order too, without waiting for you")
	fs.Bool(&scriptedOnly, "scripted", false, "use the scripted stand-in even when OPENAI_API_KEY or ANTHROPIC_API_KEY is set")
	fs.String(&openaiModel, "openai-model", env.getenv("OPENAI_MODEL"), "the OpenAI-compatible model to ask (default "+demo.DefaultOpenAIModel+"; also $OPENAI_MODEL)")
	fs.Duration(&timeout, "timeout", 10*time.Minute, "give up after this long")
	fs.String(&logLevel, "log-level", "warn", "trace, debug, info, warn or error")
	fs.Usage = func() {
		fmt.Fprint(env.stderr, demoUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return fmt.Errorf("demo %s takes no arguments, got %q", args[0], fs.Args())
	}
	if err := config.ValidateTemporal(t); err != nil {
		return err
	}
	if timeout <= 0 {
		return &config.Error{Flag: "timeout", Problem: "must be positive", Fix: "e.g. 10m"}
	}
	site = strings.TrimRight(site, "/")
	lvl, err := logging.ParseLevel(logLevel)
	if err != nil {
		return &config.Error{Flag: "log-level", Problem: err.Error()}
	}
	log := zerolog.New(env.stderr).Level(lvl).With().Timestamp().Logger()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := dial.Temporal(ctx, t, log, nil)
	if err != nil {
		return err
	}
	defer c.Close()
	mo := demo.ModelOptions{OpenAIKey: env.getenv("OPENAI_API_KEY"), OpenAIBaseURL: env.getenv("OPENAI_BASE_URL"), OpenAIModel: openaiModel,
		AnthropicKey: env.getenv("ANTHROPIC_API_KEY"), AnthropicBaseURL: env.getenv("ANTHROPIC_BASE_URL"), AnthropicModel: env.getenv("ANTHROPIC_MODEL")}
	if scriptedOnly {
		mo.OpenAIKey, mo.AnthropicKey = "", ""
	}
	_, err = demo.Run(ctx, demo.RunOptions{Client: c, Kind: kind, Site: site, Model: mo, ApproveOrder: approve,
		Name: args[0], Timeout: timeout, Out: env.stdout})
	if errors.Is(err, demo.ErrNotFinished) {
		return exitError{code: 1}
	}
	return err
}
