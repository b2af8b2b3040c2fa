package main

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/config"
)

func opsCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	env := &cliEnv{Stdout: &o, Stderr: &e, Getenv: func(string) string { return "" }}
	code = run(context.Background(), env, args)
	return o.String(), e.String(), code
}

func TestToolsFormats(t *testing.T) {
	n := len(contract.Definitions())
	for _, tc := range []struct {
		format string
		key    string // a key every entry has
	}{
		{"neutral", "class"},
		{"openai", "function"},
		{"anthropic", "input_schema"},
	} {
		t.Run(tc.format, func(t *testing.T) {
			out, errOut, code := opsCLI(t, "tools", "--format", tc.format)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var got []map[string]any
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, out)
			}
			if len(got) != n {
				t.Fatalf("%d tools, want %d", len(got), n)
			}
			for _, g := range got {
				if _, ok := g[tc.key]; !ok {
					t.Fatalf("entry without %q: %v", tc.key, g)
				}
			}
		})
	}
}

// Every operator verb refuses bad input with exit 1 and a message naming the
// fix, before it dials anything; --help exits 0 and shows the raw Temporal CLI.
func TestOperatorVerbsRefuse(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string // in stderr
	}{
		{[]string{"tools", "--format", "xml"}, 1, "use neutral, openai, anthropic or prompt"},
		{[]string{"tools", "extra"}, 1, "takes flags only"},
		{[]string{"sessions", "extra"}, 1, "takes flags only"},
		{[]string{"sessions", "extra", "--all"}, 1, "--all comes after the positional arguments; flags go first: durable-browser sessions [flags]"},
		{[]string{"call", "demo", "snapshot", "{}", "--policy", "ask"}, 1, "--policy comes after the positional arguments; flags go first"},
		{[]string{"sessions", "--limit", "0"}, 1, "--limit"},
		// A missing or unknown verb of a command with verbs is a usage
		// error, exit 2 as a missing or unknown verb (docs/configuration.md).
		{[]string{"handoff"}, 2, "handoff wants a verb: list, done or cancel"},
		{[]string{"handoff", "--by", "ann"}, 2, "handoff wants a verb"},
		{[]string{"handoff", "finish", "a", "b"}, 2, `unknown handoff verb "finish": use list, done or cancel`},
		{[]string{"handoff", "frob"}, 2, `unknown handoff verb "frob"`},
		{[]string{"handoff", "done", "wf"}, 1, "want handoff done <session-workflow-id> <request-id>"},
		{[]string{"handoff", "list", "x"}, 1, "takes no arguments"},
		{[]string{"approvals"}, 2, "approvals wants a verb: list, approve, deny or keygen"},
		{[]string{"approvals", "approve", "wf"}, 1, "want approvals approve <session-workflow-id> <hold-id>"},
		{[]string{"approvals", "ok", "wf", "h"}, 2, `unknown approvals verb "ok"`},
		{[]string{"approvals", "frob"}, 2, `unknown approvals verb "frob"`},
		{[]string{"approvals", "help"}, 0, "approvals keygen"},
		{[]string{"call"}, 2, "want <session-workflow-id> <tool> [json-args], got 0 arguments"},
		{[]string{"call", "wf"}, 2, "got 1 arguments"},
		{[]string{"call", "help"}, 0, "Usage: durable-browser call"},
		{[]string{"frob"}, 2, `unknown verb "frob"`},
		{[]string{"approvals", "list", "--address", "nohost"}, 1, "--address"},
		{[]string{"sessions", "--help"}, 0, "temporal workflow query --workflow-id <session-workflow-id> --type state"},
		{[]string{"handoff", "--help"}, 0, "temporal workflow signal --workflow-id <session-workflow-id> --name handoff"},
		{[]string{"approvals", "--help"}, 0, "temporal workflow signal --workflow-id <session-workflow-id> --name approval"},
		{[]string{"tools", "--help"}, 0, "--format"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, errOut, code := opsCLI(t, tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d (want %d), stderr lacks %q:\n%s", code, tc.code, tc.want, errOut)
			}
		})
	}
}

func TestParseInterleaved(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		pos       []string
		note, by_ string
	}{
		{[]string{"done", "wf", "h-1"}, []string{"done", "wf", "h-1"}, "", ""},
		{[]string{"done", "wf", "h-1", "--note", "ok", "--by", "ann"}, []string{"done", "wf", "h-1"}, "ok", "ann"},
		{[]string{"--by", "ann", "done", "wf", "--note=x y", "h-1"}, []string{"done", "wf", "h-1"}, "x y", "ann"},
		{[]string{"done", "--", "wf", "--note"}, []string{"done", "wf", "--note"}, "", ""},
		{nil, nil, "", ""},
	} {
		fs := config.NewSet("t", func(string) string { return "" })
		var note, by string
		fs.String(&note, "note", "", "")
		fs.String(&by, "by", "", "")
		pos, err := parseInterleaved(fs, tc.args)
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if !reflect.DeepEqual(pos, tc.pos) || note != tc.note || by != tc.by_ {
			t.Fatalf("%q: got %q note %q by %q", tc.args, pos, note, by)
		}
	}
}

func FuzzParseInterleaved(f *testing.F) {
	f.Add("done wf h-1 --note ok")
	f.Add("-- --by x")
	f.Add("--note")
	f.Fuzz(func(t *testing.T, line string) {
		fs := config.NewSet("t", func(string) string { return "" })
		fs.SetOutput(&bytes.Buffer{})
		var note string
		fs.String(&note, "note", "", "")
		args := strings.Fields(line)
		pos, err := parseInterleaved(fs, args)
		if err == nil && len(pos) > len(args) {
			t.Fatalf("more positionals than arguments: %q -> %q", args, pos)
		}
	})
}
