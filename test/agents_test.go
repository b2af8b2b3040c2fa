package test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/workflows"
)

// agentRuns counts the runs of the scripted agent per request id.
type agentRuns struct {
	mu sync.Mutex
	n  map[string]int
}

// begin counts a run; a task asking to fail once fails its first run.
func (r *agentRuns) begin(_ context.Context, task contract.AgentTask) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n[task.RequestID]++
	if strings.Contains(task.Task, "fail once") && r.n[task.RequestID] == 1 {
		return 0, errors.New("the site was down")
	}
	return r.n[task.RequestID], nil
}

func (r *agentRuns) count(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n[id]
}

type agentReport struct {
	Title string `json:"title"`
	Run   int    `json:"run"`
	Tag   string `json:"tag"`
}

// demoAgent is a host's agent for the demo site, scripted: it opens a
// browser of its own, goes to the URL at the end of its task and reports
// the page's title.
func demoAgent(ctx workflow.Context, task contract.AgentTask) (*agentReport, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}})
	var run int
	if err := workflow.ExecuteActivity(actx, "test.agent-begin", task).Get(ctx, &run); err != nil {
		return nil, err
	}
	b, err := workflows.Open(ctx, workflows.Config{SkipHumanHandlers: true})
	if err != nil {
		return nil, err
	}
	defer func() { _ = b.Close(ctx) }()
	fields := strings.Fields(task.Task)
	r, err := b.Run(ctx, contract.RunArgs{Actions: []byte(`[{"op":"goto","url":"` + fields[len(fields)-1] + `"}]`)})
	if err != nil {
		return nil, err
	}
	return &agentReport{Title: r.Title, Run: run, Tag: b.Session().Tag}, nil
}

// TestUseWebsite hands tasks to a scripted agent workflow through
// use_website: the tool is offered only with granted sites; a request runs
// as a child with its own browser; asking again with the same request id
// answers the finished result without a second run; a failed request runs
// again.
func TestUseWebsite(t *testing.T) {
	env.StartWorker(t, harnessDefaults())
	queue := "agents-" + uuid.NewString()[:8]
	runs := &agentRuns{n: map[string]int{}}
	w := sdkworker.New(env.Client, queue, sdkworker.Options{})
	w.RegisterWorkflowWithOptions(demoAgent, workflow.RegisterOptions{Name: "DemoAgent"})
	w.RegisterActivityWithOptions(runs.begin, activity.RegisterOptions{Name: "test.agent-begin"})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	grants := []contract.SiteGrant{{Site: "demo", Workflow: "DemoAgent", TaskQueue: queue}}

	// Offered only with grants.
	if _, listed := lookupTool(contract.Definitions(), contract.ToolUseWebsite); listed {
		t.Fatal("use_website listed without grants")
	}
	if _, listed := lookupTool(contract.DefinitionsFor(grants), contract.ToolUseWebsite); !listed {
		t.Fatal("use_website not listed with grants")
	}
	plain := newSession(t, workflows.SessionConfig{})
	if f := plain.failure(contract.ToolUseWebsite, map[string]any{"site": "demo", "task": "x", "request_id": "r1"}); f.Code != contract.CodeRefused {
		t.Fatalf("use_website without grants: %+v", f)
	}

	s := newSession(t, workflows.SessionConfig{Sites: grants})
	about := env.Demo.URL() + "/about.html"
	ask := map[string]any{"site": "demo", "task": "report the title of " + about, "request_id": "about-1"}
	var first contract.UseWebsiteResult
	s.must(contract.ToolUseWebsite, ask, &first)
	var rep agentReport
	if err := json.Unmarshal(first.Report, &rep); err != nil || rep.Run != 1 || !strings.Contains(rep.Title, "About") || first.Reused {
		t.Fatalf("first request: %+v %s", first, first.Report)
	}
	if !strings.Contains(first.WorkflowID, "/use_website/demo/about-1") || !strings.HasSuffix(rep.Tag, "about-1-1") {
		t.Fatalf("the agent's workflow and browser: %+v %+v", first, rep)
	}
	var again contract.UseWebsiteResult
	s.must(contract.ToolUseWebsite, ask, &again)
	if !again.Reused || string(again.Report) != string(first.Report) || runs.count("about-1") != 1 {
		t.Fatalf("asked again: %+v, %d runs", again, runs.count("about-1"))
	}
	if f := s.failure(contract.ToolUseWebsite, map[string]any{"site": "elsewhere", "task": "x", "request_id": "r2"}); f.Code != contract.CodeRefused || !strings.Contains(f.Message, "demo") {
		t.Fatalf("ungranted site: %+v", f)
	}

	// A failed request runs again.
	flaky := map[string]any{"site": "demo", "task": "fail once, then report the title of " + about, "request_id": "flaky-1"}
	if f := s.failure(contract.ToolUseWebsite, flaky); f.Code != contract.CodeCommandFailed || !strings.Contains(f.Message, "same request_id") {
		t.Fatalf("failed request: %+v", f)
	}
	var retried contract.UseWebsiteResult
	s.must(contract.ToolUseWebsite, flaky, &retried)
	if retried.Reused || runs.count("flaky-1") != 2 {
		t.Fatalf("failed request asked again: %+v, %d runs", retried, runs.count("flaky-1"))
	}
	s.must("browser_release", map[string]any{}, nil)
	recordHistory(t, s.id, "use-website")
}

func lookupTool(defs []contract.Tool, name string) (contract.Tool, bool) {
	for _, d := range defs {
		if d.Name == name {
			return d, true
		}
	}
	return contract.Tool{}, false
}
