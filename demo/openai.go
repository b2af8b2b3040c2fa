package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
	"go.temporal.io/sdk/temporal"
)

// ModelOptions say which model the model activity asks. The key stays in
// the demo's process: it never enters a workflow's history.
type ModelOptions struct {
	// OpenAIKey, when set, makes the activity call an OpenAI-compatible
	// chat completions API instead of the scripted stand-in.
	OpenAIKey string
	// OpenAIBaseURL points at any compatible server (default: OpenAI's).
	OpenAIBaseURL string
	// OpenAIModel names the model (default DefaultOpenAIModel).
	OpenAIModel string
	// AnthropicKey, when set (and no OpenAIKey), makes the activity call
	// Anthropic's messages API; AnthropicBaseURL and AnthropicModel as above.
	AnthropicKey, AnthropicBaseURL, AnthropicModel string
}

// DefaultOpenAIModel is asked when no model is named.
const DefaultOpenAIModel = "gpt-4.1-mini"

// NewModel returns the model activity for these options.
func NewModel(o ModelOptions) func(context.Context, ModelInput) (*Turn, error) {
	if o.OpenAIKey == "" && o.AnthropicKey != "" {
		return newAnthropic(o)
	}
	if o.OpenAIKey == "" {
		return Model
	}
	opts := []option.RequestOption{option.WithAPIKey(o.OpenAIKey), option.WithMaxRetries(1)}
	if o.OpenAIBaseURL != "" {
		opts = append(opts, option.WithBaseURL(o.OpenAIBaseURL))
	}
	if o.OpenAIModel == "" {
		o.OpenAIModel = DefaultOpenAIModel
	}
	c := openai.NewClient(opts...)
	return func(ctx context.Context, in ModelInput) (*Turn, error) { return askOpenAI(ctx, c, o.OpenAIModel, in) }
}

func system(site string) string {
	return "You drive a real browser through tools. Take a snapshot before acting; run takes ref actions ([id]s from the latest snapshot). " +
		"A failure answers {\"ok\":false,\"code\":...} with a message saying what to do; after effect_unknown, session_replaced or session_restored, look again before acting. " +
		"The shop is at " + site + "/shop/; its test account and password are shown on its sign-in page. " +
		"When the task is done, answer in one sentence with the order number and the evidence key and sha256 of a browser_read of the confirmation."
}

// askOpenAI replays the recent steps as the conversation so far and asks
// for the next tool calls.
func askOpenAI(ctx context.Context, c openai.Client, model string, in ModelInput) (*Turn, error) {
	msgs := []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(system(in.Site)), openai.UserMessage(in.Task)}
	for _, s := range in.Steps {
		msgs = append(msgs, openai.ChatCompletionMessageParamUnion{OfAssistant: &openai.ChatCompletionAssistantMessageParam{
			ToolCalls: []openai.ChatCompletionMessageToolCallUnionParam{{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
				ID:       s.Call.ID,
				Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: s.Call.Name, Arguments: string(s.Call.Args)},
			}}},
		}})
		msgs = append(msgs, openai.ToolMessage(s.forModel(), s.Call.ID))
	}
	tools := make([]openai.ChatCompletionToolUnionParam, 0, len(in.Tools))
	for _, t := range in.Tools {
		var params map[string]any
		if err := json.Unmarshal(t.Schema, &params); err != nil {
			return nil, temporal.NewNonRetryableApplicationError("a tool schema is not JSON", "schema", err)
		}
		tools = append(tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: t.Name, Description: openai.String(t.Description), Parameters: shared.FunctionParameters(params),
		}))
	}
	resp, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: shared.ChatModel(model), Messages: msgs, Tools: tools})
	if err != nil {
		var apiErr *openai.Error
		if errors.As(err, &apiErr) {
			err = refused(err, apiErr.StatusCode, "OPENAI_API_KEY, OPENAI_BASE_URL")
		}
		return nil, err
	}
	if len(resp.Choices) == 0 {
		return nil, errors.New("the model API answered no choice")
	}
	m := resp.Choices[0].Message
	turn := &Turn{Text: m.Content}
	for _, tc := range m.ToolCalls {
		if tc.Type != "function" {
			continue
		}
		args := json.RawMessage(tc.Function.Arguments)
		if !json.Valid(args) {
			// Keep the turn valid JSON; the schema refuses it and the model
			// reads why.
			args, _ = json.Marshal(map[string]string{"invalid_json_arguments": tc.Function.Arguments})
		}
		turn.Calls = append(turn.Calls, Call{ID: tc.ID, Name: tc.Function.Name, Args: args})
	}
	if len(turn.Calls) == 0 && turn.Text == "" {
		turn.Text = "(the model answered nothing)"
	}
	return turn, nil
}

// refused is err, a model API's answer with status, as the model activity
// returns it: a wrong key, model or request does not get better by
// retrying, so those statuses are a non-retryable error that names the
// variables (vars) to check.
func refused(err error, status int, vars string) error {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusBadRequest:
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("the model API refused the request (HTTP %d): check %s and the model name", status, vars), "model_refused", nil)
	}
	return err
}
