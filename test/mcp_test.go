package test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/devstack"
	"github.com/durable-browser/durable-browser/test/harness"
)

// mcpServer is one `durable-browser mcp` child process and the SDK's client
// session connected to it.
type mcpServer struct {
	cmd    *exec.Cmd
	cs     *mcp.ClientSession
	stderr *devstack.SyncBuffer
}

// closeSessionAtEnd closes the BrowserSession the test's MCP calls made.
func closeSessionAtEnd(t *testing.T, id string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = env.Client.SignalWorkflow(ctx, id, "", contract.SignalClose, nil)
		_ = env.Client.GetWorkflow(ctx, id, "").Get(ctx, nil)
	})
}

// startMCPStdio runs `durable-browser mcp` with args over stdio and connects
// c (a new client when nil) to it. Cleanup closes both.
func startMCPStdio(t testing.TB, c *mcp.Client, args ...string) *mcpServer {
	t.Helper()
	if c == nil {
		c = mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	}
	full := append([]string{"mcp", "--address", env.Temporal.Address(), "--namespace", "default", "--log-level", "debug"}, args...)
	cmd := exec.Command(env.Bin, full...)
	buf := &devstack.SyncBuffer{}
	cmd.Stderr = buf
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("connecting to durable-browser mcp: %v\n%s", err, buf)
	}
	s := &mcpServer{cmd: cmd, cs: cs, stderr: buf}
	t.Cleanup(s.stop)
	return s
}

func (s *mcpServer) stop() {
	_ = s.cs.Close()
	if s.cmd.ProcessState == nil {
		_ = s.cmd.Process.Kill()
		_, _ = s.cmd.Process.Wait()
	}
}

// callMCP calls a tool and returns its first text content and whether the
// result was a tool error.
func callMCP(t *testing.T, cs *mcp.ClientSession, tool string, args any) (string, *mcp.CallToolResult) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if len(res.Content) == 0 {
		t.Fatalf("%s: no content", tool)
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("%s: first content is %T, want text", tool, res.Content[0])
	}
	return text.Text, res
}

// mustMCP calls a tool, fails the test on a tool error, decodes into v.
func mustMCP(t *testing.T, cs *mcp.ClientSession, tool string, args any, v any) *mcp.CallToolResult {
	t.Helper()
	text, res := callMCP(t, cs, tool, args)
	if res.IsError {
		t.Fatalf("%s failed: %s", tool, text)
	}
	if v != nil {
		if err := json.Unmarshal(fromModel(t, tool, text), v); err != nil {
			t.Fatalf("%s: %v in %s", tool, err, text)
		}
	}
	return res
}

// fromModel puts the page text a model reads after an answer's JSON
// (contract.ForModel) back where the answer had it, so the answer decodes
// into its result type.
func fromModel(t *testing.T, tool, text string) []byte {
	t.Helper()
	head, page, moved := strings.Cut(text, "\n<<page ")
	if !moved {
		return []byte(text)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(head), &obj); err != nil {
		t.Fatalf("%s: %v in %s", tool, err, text)
	}
	// The fence's last line, which the model form leaves to the end of the
	// answer.
	code, _, _ := strings.Cut(page, ">>\n")
	page = contract.Fence(code, page[len(code)+3:])
	switch tool {
	case contract.ToolSnapshot:
		obj["text"] = page
	case contract.ToolRun:
		observed, _ := obj["observed"].(map[string]any)
		if observed == nil {
			t.Fatalf("%s: page text without an observation: %s", tool, text)
		}
		observed["text"] = page
	default:
		obj["content"] = page
	}
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The tools as listed are the contract's, unchanged; calls work end to end;
// a screenshot carries its image; unknown tools and bad arguments answer
// clear errors.
func TestMCPStdio(t *testing.T) {
	env.StartWorker(t, harnessDefaults())
	id := "e2e-mcp-" + uuid.NewString()[:8]
	closeSessionAtEnd(t, id)
	s := startMCPStdio(t, nil, "--session", id)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	list, err := s.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defs := contract.Definitions()
	if len(list.Tools) != len(defs) {
		t.Fatalf("%d tools listed, want %d", len(list.Tools), len(defs))
	}
	for i, d := range defs {
		got := list.Tools[slices.IndexFunc(list.Tools, func(x *mcp.Tool) bool { return x.Name == d.Name })]
		schema, _ := json.Marshal(got.InputSchema)
		var a, b any
		_ = json.Unmarshal(schema, &a)
		_ = json.Unmarshal(d.Schema, &b)
		if got.Description != d.Description || fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("tool %d %s differs from the contract", i, d.Name)
		}
	}

	var run contract.RunResult
	mustMCP(t, s.cs, "run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/"}), &run)
	var snap contract.SnapshotResult
	sres := mustMCP(t, s.cs, "snapshot", map[string]any{"mode": "interactive"}, &snap)
	if !strings.Contains(snap.Text, "Create account") {
		t.Fatalf("snapshot: %s", snap.Text)
	}
	// The model reads the answer less its size and ok (contract.ForModel);
	// the size, for the host's budget, is in _meta.
	stext := sres.Content[0].(*mcp.TextContent).Text
	size, _ := sres.Meta["size"].(map[string]any)
	if strings.Contains(stext, `"size"`) || strings.Contains(stext, `"ok"`) || snap.URL == "" || size == nil || size["chars"].(float64) <= float64(len([]rune(stext))) {
		t.Fatalf("the snapshot's text %s, _meta %v: want the model's form, the size in _meta", stext, sres.Meta)
	}
	if st := state(t, id); st.Tag == "" || st.Calls < 2 {
		t.Fatalf("session %s state %+v: the calls did not go to it", id, st)
	}

	res := mustMCP(t, s.cs, "screenshot", map[string]any{}, nil)
	if len(res.Content) != 2 {
		t.Fatalf("screenshot has %d contents, want text and image: %+v", len(res.Content), res.Content)
	}
	img, ok := res.Content[1].(*mcp.ImageContent)
	if !ok || img.MIMEType != "image/png" || !bytes.HasPrefix(img.Data, []byte("\x89PNG")) {
		t.Fatalf("screenshot image content: %T %+v", res.Content[1], res.Content[1])
	}

	if _, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "browser_teleport", Arguments: map[string]any{}}); err == nil ||
		!strings.Contains(err.Error(), `unknown tool "browser_teleport"`) || !strings.Contains(err.Error(), "snapshot") {
		t.Fatalf("unknown tool: %v", err)
	}
	text, bad := callMCP(t, s.cs, "run", map[string]any{"actions": []any{map[string]any{"op": "fly"}}})
	var f contract.Failure
	if !bad.IsError || json.Unmarshal([]byte(text), &f) != nil || f.Code != contract.CodeRefused || f.Message == "" {
		t.Fatalf("invalid arguments: error=%v %s", bad.IsError, text)
	}
}

// Over streamable HTTP each MCP session gets a workflow of its own, and a
// client that names one (Durable-Browser-Session) is served on it.
func TestMCPHTTP(t *testing.T) {
	env.StartWorker(t, harnessDefaults())
	port, err := devstack.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(env.Bin, "mcp", "--address", env.Temporal.Address(), "--http", addr, "--log-level", "debug")
	buf := &devstack.SyncBuffer{}
	cmd.Stderr = buf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_, _ = cmd.Process.Wait()
	})
	harness.Eventually(t, 30*time.Second, func() bool { return strings.Contains(buf.String(), "serving MCP at") }, "mcp --http did not start:\n%s", buf)
	endpoint := "http://" + addr + "/mcp"
	// Every request carries the bearer token the server printed (refusals
	// of a missing or wrong one: TestMCPHTTPToken in cmd/durable-browser-mcp).
	token := regexp.MustCompile(`bearer token (\S+) `).FindStringSubmatch(buf.String())
	if token == nil {
		t.Fatalf("mcp --http printed no bearer token:\n%s", buf)
	}

	connect := func(header string) *mcp.ClientSession {
		hc := &http.Client{Transport: headerRT{headers: map[string]string{"Authorization": "Bearer " + token[1]}}}
		if header != "" {
			hc.Transport = headerRT{headers: map[string]string{"Authorization": "Bearer " + token[1], "Durable-Browser-Session": header}}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e-http", Version: "1"}, nil).
			Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc}, nil)
		if err != nil {
			t.Fatalf("connecting over HTTP: %v\n%s", err, buf)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}

	// No header: the workflow is named for the MCP session.
	cs := connect("")
	wfID := "mcp-" + cs.ID()
	closeSessionAtEnd(t, wfID)
	var run contract.RunResult
	mustMCP(t, cs, "run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/about.html"}), &run)
	if st := state(t, wfID); !strings.HasSuffix(st.URL, "/about.html") {
		t.Fatalf("session %s is at %q, want the about page", wfID, st.URL)
	}

	// A chosen session: two connections share its browser and page.
	chosen := "e2e-mcp-http-" + uuid.NewString()[:8]
	closeSessionAtEnd(t, chosen)
	first := connect(chosen)
	mustMCP(t, first, "run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/form.html"}), &run)
	second := connect(chosen)
	var snap contract.SnapshotResult
	mustMCP(t, second, "snapshot", map[string]any{"mode": "interactive"}, &snap)
	if !strings.Contains(snap.Text, "Create account") {
		t.Fatalf("the second connection did not find the first one's page:\n%s", snap.Text)
	}
	if st := state(t, wfID); !strings.HasSuffix(st.URL, "/about.html") {
		t.Fatalf("the chosen session moved the MCP session's browser: %q", st.URL)
	}
}

type headerRT struct{ headers map[string]string }

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// The MCP server is killed in the middle of a run that has made its effect.
// The run finishes on the worker; a new server on the same session, sent the
// same call with the same request id (a fresh client numbers its requests
// as the first did), answers the run's result, and the site saw one post.
func TestMCPRestartResume(t *testing.T) {
	env.StartWorker(t, harnessDefaults())
	id := "e2e-mcp-resume-" + uuid.NewString()[:8]
	closeSessionAtEnd(t, id)

	setup := startMCPStdio(t, nil, "--session", id)
	var run contract.RunResult
	mustMCP(t, setup.cs, "run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/form.html"}), &run)
	var snap contract.SnapshotResult
	mustMCP(t, setup.cs, "snapshot", map[string]any{"mode": "interactive"}, &snap)
	setup.stop()

	email := "mcp-" + uuid.NewString()[:8] + "@example.com"
	arrived := func() int {
		n := 0
		for _, sub := range env.Demo.Submissions() {
			if sub.Fields["email"] == email {
				n++
			}
		}
		return n
	}
	submit := actions(
		map[string]any{"op": "fill", "id": refFor(t, snap.Text, `textbox "Email"`), "value": email},
		map[string]any{"op": "click", "id": refFor(t, snap.Text, `button "Create account"`)},
		map[string]any{"op": "wait", "text": "Thanks"},
		map[string]any{"op": "wait", "ms": 3000},
	)

	doomed := startMCPStdio(t, nil, "--session", id)
	lost := make(chan error, 1)
	go func() {
		_, err := doomed.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run", Arguments: submit})
		lost <- err
	}()
	harness.Eventually(t, 60*time.Second, func() bool { return arrived() == 1 }, "the form never arrived:\n%s", doomed.stderr)
	// Killed mid-run: the post is made, the run is still waiting.
	_ = doomed.cmd.Process.Kill()
	if err := <-lost; err == nil {
		t.Fatal("the call of a killed server answered")
	}

	again := startMCPStdio(t, nil, "--session", id)
	text, res := callMCP(t, again.cs, "run", submit)
	if res.IsError {
		t.Fatalf("the resent call failed: %s\n%s", text, again.stderr)
	}
	if err := json.Unmarshal([]byte(text), &run); err != nil || run.Title != "Thanks" {
		t.Fatalf("the resent call answered %s, want the run's result on the Thanks page", text)
	}
	if n := arrived(); n != 1 {
		t.Fatalf("the site received %d posts, want 1", n)
	}
}

// Under the ask policy the held post is offered to the user through
// elicitation; the test client approves it, the run sends it, and progress
// notifications said what the call waited for.
func TestMCPElicitation(t *testing.T) {
	env.StartWorker(t, harnessDefaults())
	id := "e2e-mcp-ask-" + uuid.NewString()[:8]
	closeSessionAtEnd(t, id)
	var mu sync.Mutex
	var asked []string
	var progress []string
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e-approver", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			asked = append(asked, req.Params.Message)
			mu.Unlock()
			if strings.Contains(req.Params.Message, "asks a person") {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"outcome": contract.OutcomeCancelled, "note": "not today"}}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": contract.DecisionApprove}}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, req.Params.Message)
			mu.Unlock()
		},
	})
	s := startMCPStdio(t, c, "--session", id, "--policy", "ask")
	var run contract.RunResult
	mustMCP(t, s.cs, "run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/form.html"}), &run)
	var snap contract.SnapshotResult
	mustMCP(t, s.cs, "snapshot", map[string]any{"mode": "interactive"}, &snap)
	email := "mcp-ask-" + uuid.NewString()[:8] + "@example.com"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	params := &mcp.CallToolParams{Name: "run", Arguments: actions(
		map[string]any{"op": "fill", "id": refFor(t, snap.Text, `textbox "Email"`), "value": email},
		map[string]any{"op": "click", "id": refFor(t, snap.Text, `button "Create account"`)},
		map[string]any{"op": "wait", "text": "Thanks"},
	)}
	params.SetProgressToken("approve-1")
	res, err := s.cs.CallTool(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if res.IsError || json.Unmarshal([]byte(text), &run) != nil || run.Title != "Thanks" {
		t.Fatalf("the approved run answered %s\n%s", text, s.stderr)
	}
	n := 0
	for _, sub := range env.Demo.Submissions() {
		if sub.Fields["email"] == email {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d posts arrived, want the approved one", n)
	}
	mu.Lock()
	if len(asked) != 1 || !strings.Contains(asked[0], "POST") || !strings.Contains(asked[0], "/submit") {
		t.Fatalf("elicitations: %q", asked)
	}
	if !slices.ContainsFunc(progress, func(m string) bool { return strings.Contains(m, "waiting for a person to approve POST") }) {
		t.Fatalf("progress notifications: %q", progress)
	}
	if st := state(t, id); len(st.Holds) != 1 || st.Holds[0].Decision != contract.DecisionApprove || st.Holds[0].By != "mcp:e2e-approver" {
		t.Fatalf("holds: %+v", st.Holds)
	}
	mu.Unlock()

	// A handoff is offered the same way; the person's answer and note reach the agent.
	var h contract.HandoffResult
	mustMCP(t, s.cs, "browser_request_handoff", map[string]any{
		"instruction": "Press and hold the button until it says verified", "completion_condition": humanCondition,
	}, &h)
	if h.Outcome != contract.OutcomeCancelled || h.Note != "not today" || h.By != "mcp:e2e-approver" {
		t.Fatalf("handoff answered %+v", h)
	}
	mu.Lock()
	if len(asked) != 2 || !strings.Contains(asked[1], "Press and hold the button") {
		t.Fatalf("elicitations: %q", asked)
	}
	mu.Unlock()
}

// With Temporal down, a call answers a tool error naming the fix within
// --timeout instead of hanging.
func TestMCPTemporalDown(t *testing.T) {
	port, err := devstack.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cmd := exec.Command(env.Bin, "mcp", "--address", fmt.Sprintf("127.0.0.1:%d", port), "--timeout", "4s")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	start := time.Now()
	text, res := callMCP(t, cs, "snapshot", map[string]any{})
	var f contract.Failure
	if !res.IsError || json.Unmarshal([]byte(text), &f) != nil || f.Code != contract.CodeBrowserUnavailable ||
		!strings.Contains(f.Message, "durable-browser dev") {
		t.Fatalf("answered %s", text)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("took %s, want within --timeout", took)
	}
}
