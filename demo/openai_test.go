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

// The OpenAI path against a fake chat completions server on loopback (the
// remote API is the one part faked): the request carries every tool with its
// schema and the steps so far as tool calls and their answers; the answer's
// tool call becomes the turn.
func TestOpenAIModel(t *testing.T) {
	var got struct {
		Model    string `json:"model"`
		Messages []struct {
			Role       string `json:"role"`
			Content    any    `json:"content"`
			ToolCallID string `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct{ Name, Arguments string }
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools []struct {
			Type     string `json:"type"`
			Function struct {
				Name       string         `json:"name"`
				Parameters map[string]any `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/chat/completions" || r.Header.Get("Authorization") != "Bearer test-key" {
			t.Errorf("request %s %s auth %q", r.Method, r.URL.Path, r.Header.Get("Authorization"))
		}
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &got); err != nil {
			t.Errorf("request body: %v", err)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		if status != http.StatusOK {
			_, _ = io.WriteString(w, `{"error":{"message":"bad key","type":"invalid_request_error"}}`)
			return
		}
		_, _ = io.WriteString(w, `{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"tool_calls",
			"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_9","type":"function","function":{"name":"snapshot","arguments":"{\"mode\":\"interactive\"}"}},
			{"id":"call_10","type":"function","function":{"name":"run","arguments":"{not json"}}]}}]}`)
	}))
	defer srv.Close()

	ask := NewModel(ModelOptions{OpenAIKey: "test-key", OpenAIBaseURL: srv.URL, OpenAIModel: "test-model"})
	in := ModelInput{Task: "buy a lamp", Site: "http://shop.test", Tools: contract.Definitions(), Steps: []Step{{
		Call:   Call{ID: "call_1", Name: "run", Args: json.RawMessage(`{"actions":[{"op":"goto","url":"http://shop.test/shop/"}]}`)},
		Output: json.RawMessage(`{"ok":true,"url":"http://shop.test/shop/","title":"Sign in","completed":1,"total":1,"size":{"chars":78,"tokens":20}}`),
	}}}
	turn, err := ask(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if got.Model != "test-model" || len(got.Tools) != len(contract.Definitions()) || got.Tools[0].Function.Parameters["type"] != "object" {
		t.Fatalf("request: model %q, %d tools %+v", got.Model, len(got.Tools), got.Tools[0])
	}
	roles := []string{}
	for _, m := range got.Messages {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, ",") != "system,user,assistant,tool" || got.Messages[2].ToolCalls[0].Function.Name != "run" ||
		got.Messages[3].ToolCallID != "call_1" || got.Messages[3].Content.(string) != `{"title":"Sign in"}` { // as the model reads it (contract.ForModel)
		t.Fatalf("messages: %+v", got.Messages)
	}
	if len(turn.Calls) != 2 || turn.Calls[0].Name != "snapshot" || string(turn.Calls[0].Args) != `{"mode":"interactive"}` ||
		!json.Valid(turn.Calls[1].Args) || !strings.Contains(string(turn.Calls[1].Args), "invalid_json_arguments") {
		t.Fatalf("turn: %+v", turn)
	}

	status = http.StatusUnauthorized
	if _, err := ask(context.Background(), in); err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Fatalf("a refused key: %v", err)
	}
}

// Without a key the activity is the scripted stand-in.
func TestScriptedModelFirstTurn(t *testing.T) {
	turn, err := NewModel(ModelOptions{})(context.Background(), ModelInput{Site: "http://shop.test"})
	if err != nil || len(turn.Calls) != 1 || turn.Calls[0].Name != contract.ToolRun || !strings.Contains(string(turn.Calls[0].Args), "http://shop.test/shop/") {
		t.Fatalf("turn %+v, %v", turn, err)
	}
}
