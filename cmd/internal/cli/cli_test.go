package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
)

// Subverb is the one place that reads a command's verb: help is exit 0,
// a missing or unknown verb a usage error (exit 2, as a missing verb), a
// known one its name. The usage is printed unless the verb is known.
func TestSubverb(t *testing.T) {
	cases := []struct {
		args []string
		code int
		want string // the verb, or what stderr says
	}{
		{nil, 2, "states wants a verb: list or delete"},
		{[]string{"-h"}, 0, ""}, {[]string{"--help"}, 0, ""}, {[]string{"help"}, 0, ""},
		{[]string{"frob"}, 2, `unknown states verb "frob": use list or delete`},
		{[]string{"list", "x"}, -1, "list"},
	}
	for _, c := range cases {
		usage := 0
		name, err := Subverb(c.args, "states", "list or delete", func() { usage++ }, "list", "delete")
		if c.code < 0 {
			if err != nil || name != c.want || usage != 0 {
				t.Errorf("Subverb(%q) = %q, %v (usage printed %d times)", c.args, name, err, usage)
			}
			continue
		}
		var stderr strings.Builder
		code := Status(&Env{Stderr: &stderr}, "states", err)
		if code != c.code || !strings.Contains(stderr.String(), c.want) || usage != 1 {
			t.Errorf("Subverb(%q): exit %d, stderr %q, usage printed %d times; want exit %d saying %q", c.args, code, stderr.String(), usage, c.code, c.want)
		}
	}
	// An unnamed usage error prints nothing more; other errors stay 1.
	var stderr strings.Builder
	if code := Status(&Env{Stderr: &stderr}, "x", &UsageError{}); code != 2 || stderr.Len() != 0 {
		t.Errorf("UsageError{}: exit %d, stderr %q", code, stderr.String())
	}
	if code := Status(&Env{Stderr: io.Discard}, "x", errors.New("boom")); code != 1 {
		t.Errorf("an error: exit %d", code)
	}
	if code := Status(&Env{Stderr: io.Discard}, "x", flag.ErrHelp); code != 0 {
		t.Errorf("help: exit %d", code)
	}
}

// PrintJSON: valid JSON decoding to the same values, no HTML escaping,
// and no control or bidi/format character left raw (inside the BMP and
// beyond it).
func TestPrintJSON(t *testing.T) {
	in := map[string]string{"a": "x\x1b[2Jy\u202ez\u0085\u007f <b>&</b>\U000e0001 \u2028 é 日本", "b": "plain\ttab\nline"}
	var out strings.Builder
	if err := PrintJSON(&out, in); err != nil {
		t.Fatal(err)
	}
	raw := out.String()
	for _, bad := range []string{"\x1b", "\u202e", "\u0085", "\u007f", "\U000e0001", "\u2028", `\u0026`, `\u003c`} {
		if strings.Contains(raw, bad) {
			t.Errorf("output holds %q raw:\n%s", bad, raw)
		}
	}
	for _, esc := range []string{`\u001b`, `\u202e`, `\u0085`, `\u007f`, `\udb40\udc01`, `\u2028`, "<b>&</b>", "é 日本"} {
		if !strings.Contains(raw, esc) {
			t.Errorf("output lacks %q:\n%s", esc, raw)
		}
	}
	var back map[string]string
	if err := json.Unmarshal([]byte(raw), &back); err != nil || back["a"] != in["a"] || back["b"] != in["b"] {
		t.Fatalf("does not decode to the input (%v): %q", err, back)
	}
	if !strings.HasPrefix(raw, "{\n  \"a\"") || !strings.HasSuffix(raw, "}\n") {
		t.Errorf("not indented JSON ending with a newline: %q", raw)
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
