package test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/shlex"
)

// docCommand is one durable-browser command shown in README.md or docs/*.md.
type docCommand struct {
	file string
	line int
	args []string // after the binary
	// keys are the top-level keys of the JSON answer the docs show right
	// after the command, if any.
	keys []string
}

func (c docCommand) String() string {
	return c.file + ":" + strconv.Itoa(c.line) + ": durable-browser " + strings.Join(c.args, " ")
}

var fence = regexp.MustCompile("^\\s*```\\s*([a-z]*)\\s*$")

// docCommands reads every command a reader can copy: the lines of sh and
// bash code blocks that run durable-browser (joined across trailing
// backslashes), and inline code that is a whole command on its own (tools,
// sessions, version, or ending in --help). Commands with placeholders
// (<...>, KEY, [flags], alternatives a|b, ...), dev and worker (the stack
// itself) are left out, save "<that key>", which names the evidence key the
// command before printed.
func docCommands(t *testing.T) []docCommand {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join("..", "README.md")}, files...)
	var out []docCommand
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(path)
		lines := strings.Split(string(b), "\n")
		inBlock, lang, lastInBlock, blockEnd := false, "", -1, -1
		var pending string
		pendingLine := 0
		for i, line := range lines {
			if m := fence.FindStringSubmatch(line); m != nil {
				if !inBlock {
					inBlock, lang = true, m[1]
					// A JSON answer shown right after a block of commands
					// belongs to the block's last command.
					if (lang == "" || lang == "json") && lastInBlock >= 0 && i-blockEnd <= 2 && i+1 < len(lines) && strings.TrimSpace(lines[i+1]) == "{" {
						out[lastInBlock].keys = jsonKeys(lines[i+1:])
					}
				} else {
					inBlock = false
					if lang == "sh" || lang == "bash" {
						blockEnd = i
					}
				}
				continue
			}
			if inBlock && (lang == "sh" || lang == "bash") {
				if pending == "" {
					pendingLine = i + 1
				}
				pending += line
				if strings.HasSuffix(pending, "\\") {
					pending = strings.TrimSuffix(pending, "\\") + " "
					continue
				}
				if args, ok := runnable(pending, false); ok {
					out = append(out, docCommand{file: name, line: pendingLine, args: args})
					lastInBlock = len(out) - 1
				}
				pending = ""
				continue
			}
			if !inBlock {
				if strings.TrimSpace(line) != "" {
					lastInBlock = -1
				}
				for _, m := range inlineCode.FindAllStringSubmatch(line, -1) {
					if args, ok := runnable(m[1], true); ok {
						out = append(out, docCommand{file: name, line: i + 1, args: args})
					}
				}
			}
		}
	}
	return out
}

// thatKey stands for "<that key>": the evidence key the command before printed.
const thatKey = "THAT_KEY"

var inlineCode = regexp.MustCompile("`((?:bin/)?durable-browser [^`]+)`")

// runnable splits a shown command into its arguments, if it can run here.
func runnable(text string, inline bool) ([]string, bool) {
	text = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text), "$ "))
	if !strings.HasPrefix(text, "durable-browser ") && !strings.HasPrefix(text, "bin/durable-browser ") {
		return nil, false
	}
	words, err := shlex.Split(strings.ReplaceAll(text, "<that key>", thatKey))
	if err != nil || len(words) < 2 {
		return nil, false
	}
	args := words[1:]
	for _, a := range args {
		if a == thatKey || json.Valid([]byte(a)) {
			continue
		}
		if strings.ContainsAny(a, "<>[]|") || strings.Contains(a, "...") || a == "KEY" || a == "RECEIPT_KEY" || strings.HasPrefix(a, "~") {
			return nil, false
		}
	}
	switch args[0] {
	case "dev", "worker":
		// The stack under test is dev itself; `worker --help` still runs.
		if args[len(args)-1] != "--help" {
			return nil, false
		}
	}
	if inline {
		whole := slices.Contains([]string{"tools", "sessions", "version"}, args[0]) || args[len(args)-1] == "--help"
		if !whole {
			return nil, false
		}
	}
	return args, true
}

// jsonKeys reads the top-level keys of the JSON object starting at lines[0].
func jsonKeys(lines []string) []string {
	var obj strings.Builder
	for _, l := range lines {
		if fence.MatchString(l) {
			break
		}
		obj.WriteString(l + "\n")
	}
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(obj.String()), &m) != nil {
		return nil
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Every command the docs show that can run here runs against one `dev`
// stack as shown: it exits 0, and its JSON answer has the keys the docs
// show beside it. Each file's session id ("demo") is its own, as a reader
// following that page alone would start afresh.
func TestDocsCommands(t *testing.T) {
	cmds := docCommands(t)
	for _, c := range cmds {
		t.Logf("%s (keys %v)", c, c.keys)
	}
	if len(cmds) < 15 {
		t.Fatalf("found only %d runnable commands in the docs: %v", len(cmds), cmds)
	}
	addrs := freeDevAddrs(t)
	p := startDev(t, t.TempDir(), addrs.flags()...)
	p.waitOut(t, 3*time.Minute, "Press Ctrl-C to stop.")

	demoURL := "http://" + addrs.demo
	temporalVerbs := []string{"call", "sessions", "handoff", "approvals"}
	var lastOut []byte
	for _, c := range cmds {
		args := append([]string(nil), c.args...)
		for i, a := range args {
			a = strings.ReplaceAll(a, "http://127.0.0.1:8380", demoURL)
			if a == "demo" {
				a = "docs-" + strings.TrimSuffix(c.file, ".md") + "-demo"
			}
			if a == thatKey {
				var r struct {
					Evidence struct {
						Key string `json:"key"`
					} `json:"evidence"`
				}
				if json.Unmarshal(lastOut, &r) != nil || r.Evidence.Key == "" {
					t.Fatalf("%s: the command before printed no evidence.key:\n%s", c, lastOut)
				}
				a = r.Evidence.Key
			}
			args[i] = a
		}
		// The stack runs on free ports: point the command at it, flags first.
		switch {
		case slices.Contains(temporalVerbs, args[0]) && args[len(args)-1] != "--help":
			at := 1
			if args[0] == "handoff" || args[0] == "approvals" {
				at = 2
			}
			args = slices.Insert(args, min(at, len(args)), "--address", addrs.temporal)
		case args[0] == "evidence" && !slices.Contains(args, "--s3-bucket") && args[len(args)-1] != "--help":
			// With no bucket named, evidence reads the dev stack's S3.
			args = slices.Insert(args, 2, "--s3-endpoint", "http://"+addrs.s3)
		}
		dir := t.TempDir() // -o files land here
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, env.Bin, args...)
		cmd.Dir = dir
		cmd.Env = cleanEnv("AWS_EC2_METADATA_DISABLED=true")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		cancel()
		var ee *exec.ExitError
		code := 0
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		if code != 0 {
			t.Errorf("%s\n  ran as %q\n  exit %d\n  stdout: %s\n  stderr: %s", c, args, code, stdout.String(), stderr.String())
			continue
		}
		lastOut = stdout.Bytes()
		if len(c.keys) > 0 {
			var got map[string]json.RawMessage
			if err := json.Unmarshal(lastOut, &got); err != nil {
				t.Errorf("%s: the docs show a JSON answer; got %q", c, lastOut)
				continue
			}
			for _, k := range c.keys {
				if _, ok := got[k]; !ok {
					t.Errorf("%s: the docs show key %q; the answer has none:\n%s", c, k, lastOut)
				}
			}
		}
	}
	p.interrupt(t)
}
