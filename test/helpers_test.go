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
	"github.com/durable-browser/durable-browser/test/tokencount"
	"github.com/durable-browser/durable-browser/workflows"
)

// session is a BrowserSession a test drives through Updates, as `call` does.
type session struct {
	t   testing.TB
	id  string
	cfg workflows.SessionConfig
	// logAnswers logs every answer as the model reads it (go test -v).
	logAnswers bool
	// measure counts what a model reads of each answer (contract.ForModel)
	// in read (characters) and tokens (o200k tokens); whole counts the
	// characters of the answers themselves (size field included).
	measure                    bool
	calls, read, tokens, whole int
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
	s.whole += utf8.RuneCount(out)
	var model string
	if s.measure || s.logAnswers { // rendered only where it is read
		model = string(contract.ForModel(contract.ToolCall{Name: tool, Args: raw}, out))
	}
	if s.measure {
		s.read += utf8.RuneCountInString(model)
		n, err := tokencount.O200K(model)
		if err != nil {
			s.t.Fatal(err)
		}
		s.tokens += n
	}
	if s.logAnswers {
		s.t.Logf("%s %s\n%s\nas the model reads it:\n%s", tool, raw, out, model)
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
