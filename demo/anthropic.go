package demo

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"go.temporal.io/sdk/temporal"
)

// DefaultAnthropicModel is asked when no model is named.
const DefaultAnthropicModel = "claude-sonnet-4-5"

func newAnthropic(o ModelOptions) func(context.Context, ModelInput) (*Turn, error) {
	opts := []option.RequestOption{option.WithAPIKey(o.AnthropicKey), option.WithMaxRetries(1)}
	if o.AnthropicBaseURL != "" {
		opts = append(opts, option.WithBaseURL(o.AnthropicBaseURL))
	}
	model := o.AnthropicModel
	if model == "" {
		model = DefaultAnthropicModel
	}
	c := anthropic.NewClient(opts...)
	return func(ctx context.Context, in ModelInput) (*Turn, error) { return askAnthropic(ctx, c, model, in) }
}

// askAnthropic replays the recent steps as tool_use and tool_result blocks
// and asks for the next tool calls.
func askAnthropic(ctx context.Context, c anthropic.Client, model string, in ModelInput) (*Turn, error) {
	msgs := []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(in.Task))}
	for _, s := range in.Steps {
		var input any
		if json.Unmarshal(s.Call.Args, &input) != nil {
			input = map[string]any{}
		}
		msgs = append(msgs,
			anthropic.NewAssistantMessage(anthropic.NewToolUseBlock(s.Call.ID, input, s.Call.Name)),
			anthropic.NewUserMessage(anthropic.NewToolResultBlock(s.Call.ID, s.forModel(), !ok(s.Output))))
	}
	tools := make([]anthropic.ToolUnionParam, 0, len(in.Tools))
	for _, t := range in.Tools {
		var schema map[string]any
		if err := json.Unmarshal(t.Schema, &schema); err != nil {
			return nil, temporal.NewNonRetryableApplicationError("a tool schema is not JSON", "schema", err)
		}
		props := schema["properties"]
		var required []string
		if r, ok := schema["required"].([]any); ok {
			for _, x := range r {
				if s, ok := x.(string); ok {
					required = append(required, s)
				}
			}
		}
		// The rest of the schema ($defs, additionalProperties, ...) rides as is.
		delete(schema, "properties")
		delete(schema, "required")
		delete(schema, "type")
		tools = append(tools, anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{
			Name: t.Name, Description: anthropic.String(t.Description),
			InputSchema: anthropic.ToolInputSchemaParam{Properties: props, Required: required, ExtraFields: schema},
		}})
	}
	resp, err := c.Messages.New(ctx, anthropic.MessageNewParams{
		Model: anthropic.Model(model), MaxTokens: 2048, Messages: msgs, Tools: tools,
		System: []anthropic.TextBlockParam{{Text: system(in.Site)}},
	})
	if err != nil {
		var apiErr *anthropic.Error
		if errors.As(err, &apiErr) {
			err = refused(err, apiErr.StatusCode, "ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL")
		}
		return nil, err
	}
	turn := &Turn{}
	for _, b := range resp.Content {
		switch b.Type {
		case "text":
			turn.Text += b.Text
		case "tool_use":
			args := b.Input
			if !json.Valid(args) {
				args = json.RawMessage(`{}`)
			}
			turn.Calls = append(turn.Calls, Call{ID: b.ID, Name: b.Name, Args: args})
		}
	}
	if len(turn.Calls) == 0 && turn.Text == "" {
		turn.Text = "(the model answered nothing)"
	}
	return turn, nil
}
