package demo

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/contract"
)

// The Anthropic path against a fake messages API on loopback: tools carry
// their schemas, steps become tool_use and tool_result blocks, and the
// answer's tool_use blocks become the turn.
func TestAnthropicModel(t *testing.T) {
	var got struct {
		Model    string `json:"model"`
		System   []struct{ Text string }
		Messages []struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name        string         `json:"name"`
			InputSchema map[string]any `json:"input_schema"`
		} `json:"tools"`
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/messages" || r.Header.Get("X-Api-Key") != "test-key" && r.Header.Get("Authorization") != "Bearer test-key" {
			t.Errorf("request %s %s without the key", r.Method, r.URL.Path)
		}
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &got); err != nil {
			t.Errorf("request body: %v", err)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"m1","type":"message","role":"assistant","model":"m","stop_reason":"tool_use",
			"usage":{"input_tokens":1,"output_tokens":1},
			"content":[{"type":"text","text":"Looking."},{"type":"tool_use","id":"toolu_2","name":"snapshot","input":{"mode":"interactive"}}]}`)
	}))
	defer srv.Close()

	ask := NewModel(ModelOptions{AnthropicKey: "test-key", AnthropicBaseURL: srv.URL, AnthropicModel: "test-model"})
	in := ModelInput{Task: "buy a lamp", Site: "http://shop.test", Tools: contract.Definitions(), Steps: []Step{{
		Call:   Call{ID: "toolu_1", Name: "run", Args: json.RawMessage(`{"actions":[{"op":"goto","url":"http://shop.test/shop/"}]}`)},
		Output: json.RawMessage(`{"ok":false,"code":"blocked","message":"no"}`),
	}}}
	turn, err := ask(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if got.Model != "test-model" || len(got.Tools) != len(contract.Definitions()) || got.Tools[0].InputSchema["type"] != "object" ||
		got.Tools[0].InputSchema["properties"] == nil || len(got.System) != 1 {
		t.Fatalf("request: model %q, %d tools %+v, system %d", got.Model, len(got.Tools), got.Tools[0], len(got.System))
	}
	if len(got.Messages) != 3 || got.Messages[1].Role != "assistant" || !strings.Contains(string(got.Messages[1].Content[0]), `"tool_use"`) ||
		!strings.Contains(string(got.Messages[2].Content[0]), `"is_error":true`) {
		t.Fatalf("messages: %+v", got.Messages)
	}
	if turn.Text != "Looking." || len(turn.Calls) != 1 || turn.Calls[0].ID != "toolu_2" || string(turn.Calls[0].Args) != `{"mode":"interactive"}` {
		t.Fatalf("turn: %+v", turn)
	}
}
