package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-browser/durable-browser/activities"
	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/contract/validate"
	"github.com/durable-browser/durable-browser/mcpserver"
	"github.com/durable-browser/durable-browser/workflows"
)

// sampleCalls holds one valid call per tool. A tool declared in the
// registry without one here fails TestEveryToolIsServed: adding a tool is
// declaring it, implementing its activity, and this line.
var sampleCalls = map[string]string{
	contract.ToolSnapshot:       `{}`,
	contract.ToolRun:            `{"actions":[{"op":"reload"}]}`,
	contract.ToolScreenshot:     `{}`,
	contract.ToolRead:           `{}`,
	contract.ToolCheck:          `{"expect_text":"Cart"}`,
	contract.ToolDownloads:      `{}`,
	contract.ToolUpload:         `{"id":"3","path":"/tmp/a.txt"}`,
	contract.ToolRelease:        `{}`,
	contract.ToolRelaunch:       `{}`,
	contract.ToolRequestHandoff: `{"instruction":"Sign in.","completion_condition":{"text":"Welcome"},"expires_in_s":60}`,
	contract.ToolWebFetch:       `{"url":"https://example.com/"}`,
	contract.ToolWebSearch:      `{"query":"durable browser"}`,
}

// names records what a registration function registers.
type names map[string]bool

func (n names) RegisterActivityWithOptions(_ any, o activity.RegisterOptions) { n[o.Name] = true }

// TestEveryToolIsServed walks the contract's tool registry and checks that
// each tool is served everywhere a user meets it: its activity is registered
// on the worker's queue the registry names, a call of it by name through the
// BrowserSession workflow (what `call` sends) is accepted and reaches that
// activity with the arguments given, the MCP server lists it with its schema,
// `call --help` names it and docs/tools.md documents it.
func TestEveryToolIsServed(t *testing.T) {
	acts := activities.New(activities.Options{})
	shared, host := names{}, names{}
	acts.RegisterShared(shared)
	acts.RegisterHost(host)

	var help bytes.Buffer
	_ = runCall(context.Background(), &cliEnv{Stdout: &help, Stderr: &help, Getenv: func(string) string { return "" }}, []string{"--help"})
	docs, err := os.ReadFile("../../docs/tools.md")
	if err != nil {
		t.Fatal(err)
	}
	listed := mcpTools(t)

	specs := contract.Specs()
	if len(specs) == 0 {
		t.Fatal("the registry declares no tools")
	}
	for _, s := range specs {
		t.Run(s.Name, func(t *testing.T) {
			queue := map[contract.Queue]names{contract.QueueShared: shared, contract.QueueHost: host}[s.Queue]
			if queue == nil {
				t.Fatalf("queue %q is neither shared nor host", s.Queue)
			}
			if !queue[s.Activity] {
				t.Errorf("activity %s is not registered on the %s queue", s.Activity, s.Queue)
			}
			if s.NewResult == nil {
				t.Error("no result type")
			}
			if !strings.Contains(help.String(), s.Name) {
				t.Error("`call --help` does not list it")
			}
			if !regexp.MustCompile(`(?m)^## ` + regexp.QuoteMeta(s.Name) + `\s*$`).Match(docs) {
				t.Errorf("docs/tools.md has no section \"## %s\"", s.Name)
			}
			if got, ok := listed[s.Name]; !ok {
				t.Error("the MCP server does not list it")
			} else if !jsonEqual(got, s.Schema) {
				t.Errorf("the MCP server lists another schema: %s", got)
			}
			sample, ok := sampleCalls[s.Name]
			if !ok {
				t.Fatalf("no sample call: add one to sampleCalls")
			}
			started := callThroughSession(t, acts, s.Name, sample)
			if s.Request == nil {
				return // served by steps of the workflow's own
			}
			in, ok := started[s.Activity]
			if !ok {
				t.Fatalf("the call never reached %s (started: %v)", s.Activity, keys(started))
			}
			args, f := validate.Call(s.Name, json.RawMessage(sample))
			if f != nil {
				t.Fatal(f)
			}
			want, _ := json.Marshal(s.Request(contract.Call{Session: contract.SessionRef{Tag: "tool-1", HostQueue: "host-A", Provider: "local"}}, args))
			var gotArgs, wantArgs struct{ Args json.RawMessage }
			_ = json.Unmarshal(in, &gotArgs)
			_ = json.Unmarshal(want, &wantArgs)
			if !jsonEqual(gotArgs.Args, wantArgs.Args) {
				t.Errorf("%s got arguments %s, want %s", s.Activity, gotArgs.Args, wantArgs.Args)
			}
		})
	}
}

// callThroughSession sends one tool call as the `tool` update of a
// BrowserSession, the way `call` does, with the real activities registered
// (session creation stubbed: no browser is started) and answers which
// activities started, with their inputs.
func callThroughSession(t *testing.T, acts *activities.Activities, name, args string) map[string]json.RawMessage {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(workflows.BrowserSession, workflow.RegisterOptions{Name: contract.WorkflowBrowserSession})
	acts.RegisterShared(env)
	acts.RegisterHost(env)
	env.OnActivity(contract.ActivityCreate, mock.Anything, mock.Anything).Return(&contract.CreateResult{
		Session: contract.SessionRef{Tag: "tool-1", Provider: "local", HostQueue: "host-A"}, URL: "about:blank"}, nil)
	started := map[string]json.RawMessage{}
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, in converter.EncodedValues) {
		var raw json.RawMessage
		_ = in.Get(&raw)
		started[info.ActivityType.Name] = raw
	})
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "tool", TaskQueue: contract.SharedQueue})
	var rejected error
	done := false
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(contract.UpdateTool, "u1", &testsuite.TestUpdateCallback{
			OnAccept:   func() {},
			OnReject:   func(err error) { rejected = err },
			OnComplete: func(any, error) { done = true; env.SignalWorkflow(contract.SignalClose, nil) },
		}, contract.ToolCall{Name: name, Args: json.RawMessage(args)})
	}, 0)
	env.ExecuteWorkflow(contract.WorkflowBrowserSession, workflows.SessionConfig{})
	if rejected != nil {
		t.Fatalf("the session refused the call: %v", rejected)
	}
	if !done {
		t.Fatal("the call never completed")
	}
	return started
}

// mcpTools lists the MCP server's tools by name, with their input schemas.
func mcpTools(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := mcpserver.New(mcpserver.Options{}).MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "registry-test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]json.RawMessage{}
	for _, tool := range res.Tools {
		b, _ := json.Marshal(tool.InputSchema)
		out[tool.Name] = b
	}
	return out
}

func jsonEqual(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

func keys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
