package test

import (
	"context"
	"encoding/json"
	"testing"
	"time"
	"unicode/utf8"

	dbclient "github.com/durable-browser/durable-browser/client"

	"github.com/google/uuid"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/test/harness"
	"github.com/durable-browser/durable-browser/workflows"
)

// session is a BrowserSession a test drives through Updates, as `call` does.
type session struct {
	t   testing.TB
	id  string
	cfg workflows.SessionConfig
	// logAnswers logs every answer as the model reads it (go test -v).
	logAnswers bool
	// calls and read count the answers and their characters as the model
	// reads them (size field included).
	calls, read, tokens int
}

func newSession(t testing.TB, cfg workflows.SessionConfig) *session {
	t.Helper()
	cfg.SearchAttributes = true
	s := &session{t: t, id: "e2e-" + t.Name() + "-" + uuid.NewString()[:8], cfg: cfg}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = env.Client.SignalWorkflow(ctx, s.id, "", contract.SignalClose, nil)
		run := env.Client.GetWorkflow(ctx, s.id, "")
		_ = run.Get(ctx, nil)
	})
	return s
}

// call sends a tool call and returns the raw answer and whether it was ok.
func (s *session) call(tool string, args any) (json.RawMessage, bool) {
	s.t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		s.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := dbclient.Call(ctx, env.Client, s.id, contract.ToolCall{Name: tool, Args: raw}, dbclient.CallOptions{Config: s.cfg})
	if err != nil {
		s.t.Fatalf("%s: %v", tool, err)
	}
	s.calls++
	n := utf8.RuneCount(out)
	s.read += n
	s.tokens += (n + 3) / 4
	if s.logAnswers {
		s.t.Logf("%s %s\n%s", tool, raw, out)
	}
	var head struct {
		OK bool `json:"ok"`
	}
	if err := json.Unmarshal(out, &head); err != nil {
		s.t.Fatalf("%s answered non-JSON %q", tool, out)
	}
	return out, head.OK
}

// must calls and fails the test unless the answer is ok, decoding it into v.
func (s *session) must(tool string, args any, v any) {
	s.t.Helper()
	out, ok := s.call(tool, args)
	if !ok {
		s.t.Fatalf("%s failed: %s", tool, out)
	}
	if v != nil {
		if err := json.Unmarshal(out, v); err != nil {
			s.t.Fatal(err)
		}
	}
}

// failure calls and decodes a failure envelope, failing the test on success.
func (s *session) failure(tool string, args any) contract.Failure {
	s.t.Helper()
	out, ok := s.call(tool, args)
	if ok {
		s.t.Fatalf("%s should have failed, answered %s", tool, out)
	}
	var f contract.Failure
	if err := json.Unmarshal(out, &f); err != nil {
		s.t.Fatal(err)
	}
	return f
}

func actions(a ...map[string]any) map[string]any { return map[string]any{"actions": a} }

func harnessDefaults() harness.WorkerOptions { return harness.WorkerOptions{} }
