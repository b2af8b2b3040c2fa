package cli

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
)

func TestHelpStatus(t *testing.T) {
	cases := []struct {
		args []string
		help bool
	}{
		{nil, false}, {[]string{"-h"}, true}, {[]string{"--help"}, true}, {[]string{"help"}, true}, {[]string{"get"}, false},
	}
	for _, c := range cases {
		if got := AsksHelp(c.args); got != c.help {
			t.Errorf("AsksHelp(%q) = %v", c.args, got)
		}
		err := HelpStatus(c.args)
		var ee ExitError
		if c.help && !errors.Is(err, flag.ErrHelp) || !c.help && (!errors.As(err, &ee) || ee.Code != 2) {
			t.Errorf("HelpStatus(%q) = %v", c.args, err)
		}
	}
}

func TestParseRefusesPositionalArguments(t *testing.T) {
	env := &Env{Stderr: io.Discard, Getenv: func(string) string { return "" }}
	cases := []struct {
		name  string
		parse func(args []string) error
		want  string
	}{
		{"flags only", func(a []string) error { return ParseFlagsOnly(Flags("tools", env, ""), a, "tools") }, "tools takes flags only"},
		{"no args", func(a []string) error { return ParseNoArgs(Flags("mcp", env, ""), a, "mcp") }, "mcp takes no arguments"},
	}
	for _, c := range cases {
		if err := c.parse(nil); err != nil {
			t.Errorf("%s: no arguments: %v", c.name, err)
		}
		if err := c.parse([]string{"extra"}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: an argument: %v, want %q", c.name, err, c.want)
		}
	}
}
