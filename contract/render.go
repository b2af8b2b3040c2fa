package contract

import "encoding/json"

// openAITool is one entry of an OpenAI Chat Completions "tools" list.
type openAITool struct {
	Type     string         `json:"type"`
	Function openAIFunction `json:"function"`
}

type openAIFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// anthropicTool is one entry of an Anthropic Messages API "tools" list.
type anthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// OpenAITools renders tools as an OpenAI-style list:
// [{"type":"function","function":{"name","description","parameters"}}].
// Strict mode is not set: it would require every field, and our optional
// fields and per-action forms are not expressible under it.
func OpenAITools(defs []Tool) json.RawMessage {
	out := make([]openAITool, 0, len(defs))
	for _, d := range defs {
		out = append(out, openAITool{Type: "function", Function: openAIFunction{
			Name: d.Name, Description: d.Description, Parameters: schemaOrEmpty(d.Schema),
		}})
	}
	return mustRender(out)
}

// AnthropicTools renders tools as an Anthropic-style list:
// [{"name","description","input_schema"}].
func AnthropicTools(defs []Tool) json.RawMessage {
	out := make([]anthropicTool, 0, len(defs))
	for _, d := range defs {
		out = append(out, anthropicTool{Name: d.Name, Description: d.Description, InputSchema: schemaOrEmpty(d.Schema)})
	}
	return mustRender(out)
}

// schemaOrEmpty keeps a rendering valid JSON even for a hand-made Tool
// whose schema is missing or malformed.
func schemaOrEmpty(s json.RawMessage) json.RawMessage {
	if len(s) == 0 || !json.Valid(s) {
		return json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
	}
	return s
}

func mustRender(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		// Only strings and valid raw JSON go in, so this cannot happen.
		return json.RawMessage("[]")
	}
	return b
}
