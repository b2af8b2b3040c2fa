package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"strings"
	"testing"
)

// The commands dev prints to try name the binary as it was started and
// dev's Temporal address when it is not the default.
func TestTryLines(t *testing.T) {
	cases := []struct {
		args []string
		self string
	}{
		{[]string{"durable-browser-dev"}, "durable-browser"},
		{[]string{"bin/durable-browser-dev"}, "bin/durable-browser"},
		{[]string{"/opt/db/bin/durable-browser-dev"}, "/opt/db/bin/durable-browser"},
	}
	for _, c := range cases {
		if got := selfName(c.args); got != c.self {
			t.Errorf("selfName(%q) = %q, want %q", c.args, got, c.self)
		}
	}
	for _, line := range tryLines("/opt/db/bin/durable-browser", "127.0.0.1:17233", "http://127.0.0.1:18380") {
		if !strings.HasPrefix(line, "/opt/db/bin/durable-browser ") || !strings.Contains(line, " --address 127.0.0.1:17233") {
			t.Errorf("try line %q does not name the binary and the address", line)
		}
	}
	for _, line := range tryLines("durable-browser", "127.0.0.1:7233", "http://127.0.0.1:8380") {
		if strings.Contains(line, "--address") {
			t.Errorf("try line %q names the default address", line)
		}
	}
}

// A word among dev's flags is refused before anything starts: the flags
// after it would be left out and dev would run on its defaults.
func TestDevRefusesAWordAmongItsFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	env := &cliEnv{Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }}
	err := runDev(context.Background(), env, []string{"dev", "--temporal-address", "127.0.0.1:1"})
	if err == nil || !strings.Contains(err.Error(), "dev takes flags only") || out.Len() != 0 {
		t.Fatalf("dev dev --temporal-address ...: %v, stdout %q", err, out.String())
	}
}

// Every flag of dev's --help shows its type, not a phrase of its usage
// (Go's flag package takes a `quoted` word in a usage as the argument's
// name: "-live-view-dir handoff list --show-url").
func TestDevHelpNamesFlagTypes(t *testing.T) {
	var out, errOut bytes.Buffer
	env := &cliEnv{Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }}
	if err := runDev(context.Background(), env, []string{"--help"}); !errors.Is(err, flag.ErrHelp) || !strings.Contains(errOut.String(), "-live-view-dir") {
		t.Fatalf("dev --help: %v\n%s", err, errOut.String())
	}
	for _, line := range strings.Split(errOut.String(), "\n") {
		if strings.HasPrefix(line, "  -") && len(strings.Fields(line)) > 2 {
			t.Errorf("a flag's usage names its argument: %q", line)
		}
	}
}
