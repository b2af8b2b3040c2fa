package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/durable-browser/durable-browser/cmd/internal/cli"
	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/config"
)

const toolsUsage = `Usage: durable-browser tools [--format neutral|openai|anthropic|prompt]

Prints the tool definitions as JSON, ready to hand to a model:
  neutral    [{name, description, schema, class, activity}]: the contract itself
  openai     [{type: "function", function: {name, description, parameters}}]
  anthropic  [{name, description, input_schema}]
  prompt     the text to add to the model's system prompt (contract.Prompt), not JSON
A model's tool call goes to a session with ` + "`durable-browser call`" + ` or workflows.CallTool.
Needs no Temporal.

Flags:
`

func runTools(_ context.Context, env *cliEnv, args []string) error {
	fs := cli.Flags("tools", env, toolsUsage)
	var format string
	fs.String(&format, "format", "neutral", "neutral (name, description, schema, replay class, activity), openai, anthropic, or prompt (the system prompt section, as text)")
	if err := cli.ParseFlagsOnly(fs, args, "tools"); err != nil {
		return err
	}
	if format == "prompt" {
		_, err := fmt.Fprintln(env.Stdout, contract.Prompt())
		return err
	}
	defs := contract.Definitions()
	var raw []byte
	switch format {
	case "neutral":
		b, err := json.Marshal(defs)
		if err != nil {
			return err
		}
		raw = b
	case "openai":
		raw = contract.OpenAITools(defs)
	case "anthropic":
		raw = contract.AnthropicTools(defs)
	default:
		return &config.Error{Flag: "format", Problem: fmt.Sprintf("%q is not a format", format), Fix: "use neutral, openai, anthropic or prompt"}
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err := env.Stdout.Write(out.Bytes())
	return err
}
