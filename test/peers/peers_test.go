//go:build linux

// Package peers does the tasks of test/tokens_test.go with the peers
// docs/benchmarks.md compares against, agent-browser's CLI and Playwright
// MCP, on the demo site on loopback with Debian's Chromium, and counts the
// calls a model makes and the characters it reads. The peers come from npm
// (scripts/install-peers.sh); without them the test skips.
package peers

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/durable-browser/durable-browser/internal/chrome"
	"github.com/durable-browser/durable-browser/internal/demosite"
	"github.com/durable-browser/durable-browser/test/tokencount"
)

// usage is what one way of doing a task cost: tool calls (a shell call
// for the CLI, however many commands it chains), commands run, and what the
// model reads, in characters and in o200k tokens (test/tokencount).
type usage struct {
	calls, commands, chars, tokens int
}

func (u *usage) read(t *testing.T, text string) {
	n, err := tokencount.O200K(text)
	if err != nil {
		t.Fatal(err)
	}
	u.calls++
	u.chars += utf8.RuneCountInString(text)
	u.tokens += n
}

// TestPeerTasks does each task two ways per peer: the plain way (one
// command or tool call at a time, looking with whole snapshots) and the
// peer's own economical way (agent-browser: the commands of one model turn
// chained in one shell call, as its help shows, looking with snapshot
// --delta; Playwright MCP: looking with browser_find after acting). It
// logs one line per way and fails when a task was not done.
//
//	scripts/install-peers.sh && go test -count=1 -run TestPeerTasks -v ./test/peers/
func TestPeerTasks(t *testing.T) {
	peer := os.Getenv("PEER_DIR")
	if peer == "" {
		peer = "/tmp/durable-browser-peers"
	}
	ab := filepath.Join(peer, "node_modules", "agent-browser", "bin", "agent-browser-linux-x64")
	pw := filepath.Join(peer, "node_modules", "@playwright", "mcp", "cli.js")
	chromium := os.Getenv("CHROME_PATH")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	for _, p := range []string{ab, pw, chromium} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("%s is missing (scripts/install-peers.sh installs the peers): %v", p, err)
		}
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is missing: Playwright MCP needs it")
	}
	site, err := demosite.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = site.Close() })
	base := site.URL()

	// What each task must have done, checked on the site and in what was read.
	signedUp := func(t *testing.T, read string) {
		t.Helper()
		subs := site.Submissions()
		if len(subs) == 0 || subs[len(subs)-1].Fields["email"] != "ada@example.com" || subs[len(subs)-1].Fields["plan"] != "pro" ||
			!strings.Contains(read, "Submission received") {
			t.Fatalf("not signed up: %+v", subs)
		}
	}
	checkedTwice := func(t *testing.T, read string) {
		t.Helper()
		if !strings.Contains(read, "Checked 2") {
			t.Fatalf("the last look does not show the second check:\n%.2000s", read)
		}
	}
	filled := func(t *testing.T, read string) {
		t.Helper()
		if !strings.Contains(read, "seven") {
			t.Fatalf("the last look does not show the value:\n%.2000s", read)
		}
	}

	var rows []string
	row := func(peer, task, way string, u usage) {
		rows = append(rows, fmt.Sprintf("%-14s %-8s %-44s %2d calls %2d commands %7d characters %6d o200k tokens", peer, task, way, u.calls, u.commands, u.chars, u.tokens))
	}

	t.Run("agent-browser", func(t *testing.T) {
		cli := startAgentBrowser(t, ab, chromium)
		for _, tc := range []struct {
			task, way string
			turns     [][][]string // calls, each a chain of commands
			done      func(*testing.T, string)
		}{
			{"sign-up", "one command a call", split(abSignUp(base)), signedUp},
			{"sign-up", "a turn's commands chained", abSignUp(base), signedUp},
			// Blind, as ours with the labels known: find has no select
			// action, so the plan goes by the page's only <select>.
			{"sign-up", "one chain by find, no look", [][][]string{{
				{"open", base + "/form.html"}, {"find", "label", "Email", "fill", "ada@example.com"}, {"select", "select", "Pro"},
				{"find", "label", "I agree", "check"}, {"find", "role", "button", "click", "--name", "Create account"},
				{"wait", "--text", "Submission received"}}}, signedUp},
			{"counter", "one command a call, whole snapshots", split([][][]string{{
				{"open", base + "/counter.html"}, {"snapshot"},
				{"click", `{ref:button "Check"}`}, {"snapshot"},
				{"click", `{ref:button "Check"}`}, {"snapshot"}}}), checkedTwice},
			{"counter", "chained, snapshot --delta", [][][]string{
				{{"open", base + "/counter.html"}, {"snapshot", "--delta"}},
				{{"click", `{ref:button "Check"}`}, {"snapshot", "--delta"}},
				{{"click", `{ref:button "Check"}`}, {"snapshot", "--delta"}}}, checkedTwice},
			{"big", "one command a call, snapshot -i", split([][][]string{{
				{"open", base + "/big.html"}, {"snapshot", "-i"},
				{"fill", `{ref:textbox "Field 7"}`, "seven"}, {"snapshot", "-i"}}}), filled},
			{"big", "chained, snapshot -i --delta", [][][]string{
				{{"open", base + "/big.html"}, {"snapshot", "-i", "--delta"}},
				{{"fill", `{ref:textbox "Field 7"}`, "seven"}, {"snapshot", "-i", "--delta"}}}, filled},
		} {
			var u usage
			seen, last := "", ""
			for _, chain := range tc.turns {
				out := ""
				for _, cmd := range chain {
					args := make([]string, len(cmd))
					for i, a := range cmd {
						args[i] = resolveRef(t, a, seen, abRef, "@")
					}
					o, err := cli(args...)
					out += o
					u.commands++
					if err != nil { // && stops the chain; the model would have read the failure
						t.Fatalf("%s %s: agent-browser %v: %v\n%s", tc.task, tc.way, args, err, o)
					}
				}
				u.read(t, out)
				seen += out
				last = out
			}
			tc.done(t, last)
			row("agent-browser", tc.task, tc.way, u)
		}
	})

	t.Run("playwright-mcp", func(t *testing.T) {
		call := startPlaywrightMCP(t, pw, chromium)
		type step struct {
			tool string
			args map[string]any
		}
		signUp := []step{
			{"browser_navigate", map[string]any{"url": base + "/form.html"}},
			{"browser_snapshot", map[string]any{}},
			{"browser_fill_form", map[string]any{"fields": []any{
				map[string]any{"name": "Email", "type": "textbox", "target": `{ref:textbox "Email"}`, "value": "ada@example.com"},
				map[string]any{"name": "Plan", "type": "combobox", "target": `{ref:combobox "Plan"}`, "value": "Pro"},
				map[string]any{"name": "I agree", "type": "checkbox", "target": `{ref:checkbox "I agree"}`, "value": "true"},
			}}},
			{"browser_click", map[string]any{"element": "Create account button", "target": `{ref:button "Create account"}`}},
			{"browser_wait_for", map[string]any{"text": "Submission received"}},
		}
		click := step{"browser_click", map[string]any{"element": "Check button", "target": `{ref:button "Check"}`}}
		fill := step{"browser_type", map[string]any{"element": "Field 7 textbox", "target": `{ref:textbox "Field 7"}`, "text": "seven"}}
		look := step{"browser_snapshot", map[string]any{}}
		for _, tc := range []struct {
			task, way string
			steps     []step
			done      func(*testing.T, string)
		}{
			{"sign-up", "one tool call per step, fill_form", signUp, signedUp},
			{"counter", "browser_snapshot after each click", []step{
				{"browser_navigate", map[string]any{"url": base + "/counter.html"}}, look, click, look, click, look}, checkedTwice},
			{"counter", "browser_find after each click", []step{
				{"browser_navigate", map[string]any{"url": base + "/counter.html"}}, look,
				click, {"browser_find", map[string]any{"text": "Checked"}},
				click, {"browser_find", map[string]any{"text": "Checked"}}}, checkedTwice},
			{"big", "browser_snapshot before and after", []step{
				{"browser_navigate", map[string]any{"url": base + "/big.html"}}, look, fill, look}, filled},
			{"big", "browser_find before and after", []step{
				{"browser_navigate", map[string]any{"url": base + "/big.html"}},
				{"browser_find", map[string]any{"text": "Field 7"}}, fill,
				{"browser_find", map[string]any{"text": "Field 7"}}}, filled},
		} {
			var u usage
			seen, last := "", ""
			for _, s := range tc.steps {
				out, err := call(s.tool, resolveArgs(t, s.args, seen))
				u.commands++
				if err != nil {
					t.Fatalf("%s %s: %s: %v\n%s", tc.task, tc.way, s.tool, err, out)
				}
				u.read(t, out)
				seen += out
				last = out
			}
			tc.done(t, last)
			row("playwright-mcp", tc.task, tc.way, u)
		}
	})
	for _, r := range rows {
		t.Log(r)
	}
}

// abSignUp is the sign-up as a model does it with agent-browser: look,
// then act and wait for the confirmation in the next turn.
func abSignUp(base string) [][][]string {
	return [][][]string{
		{{"open", base + "/form.html"}, {"snapshot", "-i"}},
		{{"fill", `{ref:textbox "Email"}`, "ada@example.com"}, {"select", `{ref:combobox "Plan"}`, "Pro"},
			{"check", `{ref:checkbox "I agree"}`}, {"click", `{ref:button "Create account"}`},
			{"wait", "--text", "Submission received"}},
	}
}

// split makes each command of the turns a call of its own.
func split(turns [][][]string) [][][]string {
	var out [][][]string
	for _, chain := range turns {
		for _, c := range chain {
			out = append(out, [][]string{c})
		}
	}
	return out
}

var placeholder = regexp.MustCompile(`^\{ref:(\w+) "(.*)"\}$`)

// abRef and pwRef find an element's ref in each peer's snapshot lines:
// `- button "Check" [ref=e16]`, `button "Check" [level=1] [ref=f1e6]`.
func abRef(role, name string) *regexp.Regexp {
	return regexp.MustCompile(regexp.QuoteMeta(role+` "`+name+`"`) + ` \[(?:[^\]]*, )?ref=(e\d+)\]`)
}

func pwRef(role, name string) *regexp.Regexp {
	return regexp.MustCompile(regexp.QuoteMeta(role+` "`+name+`"`) + `(?: \[[^\]]*\])*? \[ref=(\w+)\]`)
}

// resolveRef turns {ref:role "name"} into the ref the latest output that
// shows the element gave it (agent-browser's as @eN).
func resolveRef(t *testing.T, arg, seen string, find func(role, name string) *regexp.Regexp, prefix string) string {
	t.Helper()
	m := placeholder.FindStringSubmatch(arg)
	if m == nil {
		return arg
	}
	all := find(m[1], m[2]).FindAllStringSubmatch(seen, -1)
	if len(all) == 0 {
		t.Fatalf("no ref for %s %q in what was read:\n%.3000s", m[1], m[2], seen)
	}
	return prefix + all[len(all)-1][1]
}

func resolveArgs(t *testing.T, args map[string]any, seen string) map[string]any {
	out := map[string]any{}
	for k, v := range args {
		switch v := v.(type) {
		case string:
			out[k] = resolveRef(t, v, seen, pwRef, "")
		case []any:
			var list []any
			for _, e := range v {
				if m, ok := e.(map[string]any); ok {
					list = append(list, resolveArgs(t, m, seen))
				} else {
					list = append(list, e)
				}
			}
			out[k] = list
		default:
			out[k] = v
		}
	}
	return out
}

// startChromium starts Debian's Chromium headless with its DevTools on a
// loopback port and returns the port; it is killed with its process group.
func startChromium(t *testing.T, chromium string) int {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(chromium, "--headless=new", "--no-sandbox", "--no-first-run", "--no-default-browser-check",
		"--disable-gpu", "--user-data-dir="+filepath.Join(dir, "profile"), "--remote-debugging-address=127.0.0.1",
		"--remote-debugging-port=0", "--window-size=1280,720", "about:blank")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killGroup(cmd) })
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(dir, "profile", "DevToolsActivePort"))
		if err == nil {
			if port, _, err := chrome.ParseDevToolsActivePort(b); err == nil {
				return port
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("Chromium wrote no DevToolsActivePort in 30 s")
		}
		time.Sleep(50 * time.Millisecond) // polling a file Chromium writes: there is no event to wait on
	}
}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Wait()
}

// startAgentBrowser connects agent-browser to a Chromium of its own at
// 1280x720 and returns a function that runs one command and gives back
// what it printed. Its daemon lives under a HOME of the test's own and is
// closed, then killed by its pid, at the end.
func startAgentBrowser(t *testing.T, ab, chromium string) func(args ...string) (string, error) {
	t.Helper()
	port := startChromium(t, chromium)
	home := t.TempDir()
	const session = "peers"
	run := func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, ab, args...)
		cmd.Env = append(os.Environ(), "HOME="+home, "AGENT_BROWSER_SESSION="+session)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	t.Cleanup(func() {
		_, _ = run("close", "--all")
		if b, err := os.ReadFile(filepath.Join(home, ".agent-browser", session+".pid")); err == nil {
			var pid int
			if _, err := fmt.Sscan(string(b), &pid); err == nil && pid > 0 {
				if p, err := os.FindProcess(pid); err == nil && p.Signal(syscall.Signal(0)) == nil {
					_ = p.Kill()
				}
			}
		}
	})
	for _, setup := range [][]string{{"connect", fmt.Sprint(port)}, {"set", "viewport", "1280", "720"}} {
		if out, err := run(setup...); err != nil {
			t.Fatalf("agent-browser %v: %v\n%s", setup, err, out)
		}
	}
	return run
}

// startPlaywrightMCP starts Playwright MCP over stdio, headless on
// Debian's Chromium at 1280x720, and returns a function that calls one
// tool and gives back the text its answer holds.
func startPlaywrightMCP(t *testing.T, cli, chromium string) func(tool string, args map[string]any) (string, error) {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("node", cli, "--headless", "--isolated", "--no-sandbox", "--executable-path", chromium,
		"--viewport-size", "1280x720", "--output-dir", filepath.Join(dir, "out"))
	cmd.Dir = dir // it files snapshots it does not show under the working directory
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "durable-browser-peers", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("starting Playwright MCP: %v", err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		killGroup(cmd) // and the Chromium it started
	})
	return func(tool string, args map[string]any) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			return "", err
		}
		var sb strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				sb.WriteString(tc.Text)
			}
		}
		if res.IsError {
			return sb.String(), errors.New("the tool answered an error")
		}
		return sb.String(), nil
	}
}
