package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recording get refuses what it cannot do before any request, naming the fix.
func TestRecordingGetRefusals(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no verb", []string{"recording"}, 2, "recording get"},
		{"unknown verb", []string{"recording", "put"}, 2, `unknown recording verb "put"`},
		{"help", []string{"recording", "--help"}, 0, "recording get"},
		{"output a directory by its slash", []string{"recording", "get", "wf", "-o", "/tmp/"}, 1, "-o: /tmp/ ends with a separator: it names a file to write, not a directory"},
		{"output a directory", []string{"recording", "get", "wf", "-o", "."}, 1, "-o: . is a directory"},
		{"output in no directory", []string{"recording", "get", "wf", "-o", "no-such-dir/x.webm"}, 1, "the directory no-such-dir does not exist"},
		{"index a directory", []string{"recording", "get", "wf", "-o", "x.webm", "--index", "/tmp"}, 1, "--index (DURABLE_BROWSER_INDEX): /tmp is a directory"},
		{"no workflow", []string{"recording", "get", "-o", "x.webm"}, 1, "want exactly one"},
		{"no output", []string{"recording", "get", "wf"}, 1, "-o"},
		{"bad timeout", []string{"recording", "get", "wf", "-o", "x.webm", "--timeout", "0s"}, 1, "timeout"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, map[string]string{}, c.args...)
			if code != c.code || !strings.Contains(stderr, c.want) {
				t.Fatalf("exit %d, stderr %q; want exit %d mentioning %q", code, stderr, c.code, c.want)
			}
		})
	}
}

// badFlagLines are the flag lines of a --help whose argument name is not a
// type: Go's flag package takes a `quoted` word in a flag's usage as the
// argument's name, so "-live-view-dir handoff list --show-url" would show.
func badFlagLines(help string) []string {
	var bad []string
	for _, line := range strings.Split(help, "\n") {
		if strings.HasPrefix(line, "  -") && len(strings.Fields(line)) > 2 {
			bad = append(bad, line)
		}
	}
	return bad
}

// Every flag of the worker's --help (and its verbs') shows its type, not a
// phrase of its usage.
func TestHelpNamesFlagTypes(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"states", "list", "--help"}, {"evidence", "get", "--help"}, {"recording", "get", "--help"}, {"demo", "agent", "--help"}} {
		code, _, stderr := runCLI(t, map[string]string{}, args...)
		if code != 0 || !strings.Contains(stderr, "  -") {
			t.Fatalf("%q: exit %d\n%s", args, code, stderr)
		}
		if bad := badFlagLines(stderr); len(bad) > 0 {
			t.Errorf("%q: flags whose usage names their argument: %q", args, bad)
		}
	}
}

// Every command with verbs ends a command line that names none, or one it
// does not have, as a missing verb does: the usage, exit status 2.
func TestMissingOrUnknownVerbIsAUsageError(t *testing.T) {
	for _, args := range [][]string{{"states"}, {"states", "frob"}, {"evidence"}, {"evidence", "frob"}, {"recording"}, {"recording", "frob"}, {"demo"}, {"demo", "frob"}} {
		code, _, stderr := runCLI(t, map[string]string{}, args...)
		if code != 2 || !strings.Contains(stderr, "Usage:") {
			t.Errorf("%q: exit %d, want 2 with the usage:\n%s", args, code, stderr)
		}
	}
	for _, args := range [][]string{{"states", "--help"}, {"evidence", "help"}, {"demo", "-h"}} {
		if code, _, stderr := runCLI(t, map[string]string{}, args...); code != 0 || !strings.Contains(stderr, "Usage:") {
			t.Errorf("%q: exit %d, want 0 with the usage:\n%s", args, code, stderr)
		}
	}
}

// A WebM that cannot be put where -o says leaves nothing behind: not the
// index beside it either.
func TestRecordingCommitLeavesNothingOnFailure(t *testing.T) {
	dir := t.TempDir()
	tmp := filepath.Join(dir, ".run.tmp.webm")
	if err := os.WriteFile(tmp, []byte("webm"), 0o644); err != nil {
		t.Fatal(err)
	}
	// -o names a directory that is not empty: the rename cannot replace it.
	out := filepath.Join(dir, "out")
	if err := os.MkdirAll(filepath.Join(out, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(dir, ".index.json")
	err := commitRecording(tmp, out, index, []byte("{}\n"))
	if err == nil || !strings.Contains(err.Error(), "-o names the WebM file to write") {
		t.Fatalf("commit onto a directory: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "out" && e.Name() != ".run.tmp.webm" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	// A good commit writes both.
	out = filepath.Join(dir, "run.webm")
	index = filepath.Join(dir, "run.index.json")
	if err := commitRecording(tmp, out, index, []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(index); err != nil || string(b) != "{}\n" {
		t.Fatalf("index: %q %v", b, err)
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatal(err)
	}
}
