package workflows

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/durable-browser/durable-browser/contract"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

// behaviour answers the n-th call (from 1) of one activity.
type behaviour func(n int, in json.RawMessage) (any, error)

// fakeWorker stands in for the activities, registered under their names.
type fakeWorker struct {
	mu     sync.Mutex
	count  map[string]int
	inputs map[string][]json.RawMessage
	behave map[string]behaviour
}

var fakeActivityNames = []string{
	contract.ActivityCreate, contract.ActivitySnapshot, contract.ActivityRun, contract.ActivityScreenshot,
	contract.ActivityRead, contract.ActivityDownloads, contract.ActivityUpload, contract.ActivityRelease,
	contract.ActivityReconcile, contract.ActivityNotify, contract.ActivityWebFetch, contract.ActivityWebSearch,
	contract.ActivityCheck, contract.ActivityJudge,
}

const testURL = "https://shop.example/cart"

func newFakeWorker() *fakeWorker {
	f := &fakeWorker{count: map[string]int{}, inputs: map[string][]json.RawMessage{}, behave: map[string]behaviour{}}
	f.behave[contract.ActivityCreate] = func(n int, in json.RawMessage) (any, error) {
		var req contract.CreateRequest
		_ = json.Unmarshal(in, &req)
		return contract.CreateResult{Session: contract.SessionRef{Tag: req.Tag, Provider: "local",
			HostQueue: "host-" + string(rune('A'+n-1))}, URL: "about:blank"}, nil
	}
	page := contract.Page{URL: testURL, Title: "Cart"}
	f.behave[contract.ActivitySnapshot] = func(int, json.RawMessage) (any, error) {
		return contract.SnapshotResult{OK: true, Page: page, Observation: contract.Observation{Text: "[1] heading \"Cart\"\n  [2] button \"Pay now\""}}, nil
	}
	f.behave[contract.ActivityRun] = func(int, json.RawMessage) (any, error) {
		return contract.RunResult{OK: true, Page: page, Completed: 1, Total: 1}, nil
	}
	f.behave[contract.ActivityRead] = func(int, json.RawMessage) (any, error) {
		return contract.ReadResult{OK: true, Page: page, What: "text", Content: "Cart"}, nil
	}
	f.behave[contract.ActivityUpload] = func(int, json.RawMessage) (any, error) {
		return contract.UploadResult{OK: true, Page: page, Name: "a.txt", Bytes: 1}, nil
	}
	f.behave[contract.ActivityRelease] = func(_ int, in json.RawMessage) (any, error) {
		var req contract.ReleaseRequest
		_ = json.Unmarshal(in, &req)
		return contract.ReleaseResult{OK: true, Tag: req.Session.Tag, Released: true}, nil
	}
	f.behave[contract.ActivityJudge] = func(_ int, in json.RawMessage) (any, error) {
		var req contract.JudgeRequest
		_ = json.Unmarshal(in, &req)
		res := contract.JudgeResult{Pages: make([]contract.PageJudgement, len(req.Pages))}
		for i := range res.Pages {
			res.Pages[i].Kind = contract.PageNone
		}
		return res, nil
	}
	ok := func(int, json.RawMessage) (any, error) { return map[string]bool{"ok": true}, nil }
	for _, n := range fakeActivityNames {
		if f.behave[n] == nil {
			f.behave[n] = ok
		}
	}
	return f
}

func (f *fakeWorker) register(env *testsuite.TestWorkflowEnvironment) {
	for _, name := range fakeActivityNames {
		name := name
		env.RegisterActivityWithOptions(func(ctx context.Context, in json.RawMessage) (json.RawMessage, error) {
			f.mu.Lock()
			f.count[name]++
			n := f.count[name]
			f.inputs[name] = append(f.inputs[name], in)
			b := f.behave[name]
			f.mu.Unlock()
			out, err := b(n, in)
			if err != nil {
				return nil, err
			}
			return json.Marshal(out)
		}, activity.RegisterOptions{Name: name})
	}
}

func (f *fakeWorker) calls(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.count[name]
}

// input decodes the i-th input (from 0) of an activity.
func (f *fakeWorker) input(t *testing.T, name string, i int, v any) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if i >= len(f.inputs[name]) {
		t.Fatalf("%s has %d inputs, want index %d", name, len(f.inputs[name]), i)
	}
	if err := json.Unmarshal(f.inputs[name][i], v); err != nil {
		t.Fatal(err)
	}
}

// step is one model tool call in a scripted workflow.
type step struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args,omitempty"`
}

// scriptWorkflow opens a Browser inline and makes the calls through CallTool.
func scriptWorkflow(ctx workflow.Context, cfg Config, steps []step) ([]json.RawMessage, error) {
	b, err := Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	out := make([]json.RawMessage, 0, len(steps))
	for _, s := range steps {
		r, err := b.CallTool(ctx, s.Tool, s.Args)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// runScript runs the steps against the fake worker and returns the envelopes.
func runScript(t *testing.T, f *fakeWorker, steps ...step) []map[string]any {
	t.Helper()
	return runScriptWith(t, f, Config{}, steps...)
}

// runScriptWith runs steps on a Browser opened with cfg.
func runScriptWith(t *testing.T, f *fakeWorker, cfg Config, steps ...step) []map[string]any {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	f.register(env)
	env.RegisterWorkflow(scriptWorkflow)
	env.SetStartWorkflowOptions(startOptions("conv-1"))
	env.ExecuteWorkflow(scriptWorkflow, cfg, steps)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("workflow failed: %v", err)
	}
	var raws []json.RawMessage
	if err := env.GetWorkflowResult(&raws); err != nil {
		t.Fatal(err)
	}
	out := make([]map[string]any, len(raws))
	for i, r := range raws {
		if err := json.Unmarshal(r, &out[i]); err != nil {
			t.Fatalf("step %d: %v in %s", i, err, r)
		}
	}
	return out
}

func code(m map[string]any) string {
	if ok, _ := m["ok"].(bool); ok {
		return "ok"
	}
	c, _ := m["code"].(string)
	return c
}

func startOptions(id string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{ID: id, TaskQueue: "orchestrator"}
}
