// Package cli holds what the four command binaries share: the environment a
// verb may touch, so tests run verbs in-process with their own, a verb's
// flag set, and how a verb's error becomes the process's exit status.
package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/durable-browser/durable-browser/internal/config"
	"github.com/durable-browser/durable-browser/internal/oneline"
)

// Env is what a verb may touch.
type Env struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// StdoutTerminal says stdout is a terminal, where binary bytes are
	// not written unasked.
	StdoutTerminal bool
}

// OS is the process's own environment.
func OS() *Env {
	return &Env{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, StdoutTerminal: isTerminal(os.Stdout)}
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Flags is verb name's flag set: defaults from env's environment, help and
// errors on env's stderr. Its usage (for -h, a flag error or fs.Usage()) is
// usage, then the flags' defaults.
func Flags(name string, env *Env, usage string) *config.Set {
	fs := config.NewSet(name, env.Getenv)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, usage)
		fs.PrintDefaults()
	}
	return fs
}

// Verb runs one verb of a command with its arguments (the verb's name
// already taken off).
type Verb func(ctx context.Context, env *Env, args []string) error

// ExitError ends a verb with a specific exit status and nothing printed
// (the verb has said why).
type ExitError struct{ Code int }

func (e ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// UsageError is a command line that names no verb (of a command with
// sub-verbs: states, evidence, recording, approvals, handoff, demo; or
// call's tool) or one that does not exist: its usage was printed, and it
// ends with exit status 2, as a command line naming no top-level verb
// does (docs/configuration.md). Err, when set, says what was wrong.
type UsageError struct{ Err error }

func (e *UsageError) Error() string {
	if e.Err == nil {
		return "usage"
	}
	return e.Err.Error()
}

func (e *UsageError) Unwrap() error { return e.Err }

// Status is the exit status of the verb name's err: 0 for none or -h, an
// ExitError's code, 2 for a UsageError (its message, if any, on stderr),
// else 1 with "durable-browser NAME: ERR" on stderr.
func Status(env *Env, name string, err error) int {
	var ee ExitError
	var ue *UsageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		if ue.Err != nil {
			fmt.Fprintf(env.Stderr, "durable-browser %s: %v\n", name, ue.Err)
		}
		return 2
	case errors.As(err, &ee):
		return ee.Code
	default:
		fmt.Fprintf(env.Stderr, "durable-browser %s: %v\n", name, err)
		return 1
	}
}

// Main runs verb in the process's environment until it returns, cancelling
// its context on SIGINT or SIGTERM, and exits with its Status.
func Main(name string, verb Verb, args []string) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	env := OS()
	code := Status(env, name, verb(ctx, env, args))
	stop()
	os.Exit(code)
}

// AsksHelp says args begin with -h, --help or help.
func AsksHelp(args []string) bool {
	return len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help")
}

// Subverb is the one place that decides how a command with sub-verbs
// (states, evidence, recording, approvals, handoff, demo) reads the one
// args[0] names, among names. Asked for help (-h, --help, help) it calls
// usage and returns flag.ErrHelp (exit status 0). With no sub-verb, or one
// the command does not have, it calls usage and returns a *UsageError
// (exit status 2) saying so and what to use; else the sub-verb's name.
func Subverb(args []string, command, use string, usage func(), names ...string) (string, error) {
	switch {
	case AsksHelp(args):
		usage()
		return "", flag.ErrHelp
	case len(args) == 0:
		usage()
		return "", &UsageError{Err: fmt.Errorf("%s wants a verb: %s", command, use)}
	case slices.Contains(names, args[0]):
		return args[0], nil
	}
	usage()
	return "", &UsageError{Err: fmt.Errorf("unknown %s verb %q: use %s", command, args[0], use)}
}

// Subverbs runs the verb of command (evidence, states) that args[0] names,
// with the rest, as Subverb reads it; usage goes to stderr.
func Subverbs(ctx context.Context, env *Env, args []string, command, usage, use string, verbs map[string]Verb) error {
	names := make([]string, 0, len(verbs))
	for n := range verbs {
		names = append(names, n)
	}
	name, err := Subverb(args, command, use, func() { fmt.Fprint(env.Stderr, usage) }, names...)
	if err != nil {
		return err
	}
	return verbs[name](ctx, env, args[1:])
}

// PrintJSON writes v as indented JSON for a person to read: no HTML
// escaping (& < > stay as they are, as in tool answers), and every
// character oneline.Unsafe names (a control or bidi/format character a
// page or a model wrote) escaped as \uXXXX, so the output is valid JSON
// decoding to the same values and nothing in it acts on a terminal.
func PrintJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(EscapeUnsafe(buf.Bytes()))
	return err
}

// EscapeUnsafe escapes, in JSON that encoding/json wrote, every
// oneline.Unsafe character as \uXXXX (a surrogate pair beyond the BMP).
// encoding/json writes valid UTF-8 and escapes controls below U+0020 in
// strings itself, so a raw tab or newline is layout and stays; what
// remains (DEL, C1 controls, format characters such as U+202E) can only
// stand inside a string, where the escape means the same.
func EscapeUnsafe(b []byte) []byte {
	var out []byte
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == '\t' || r == '\n' || r == '\r' || !oneline.Unsafe(r) {
			if out != nil {
				out = append(out, b[i:i+n]...)
			}
			i += n
			continue
		}
		if out == nil {
			out = append(make([]byte, 0, len(b)+16), b[:i]...)
		}
		if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
			out = fmt.Appendf(out, "\\u%04x\\u%04x", r1, r2)
		} else {
			out = fmt.Appendf(out, "\\u%04x", r)
		}
		i += n
	}
	if out == nil {
		return b
	}
	return out
}

// ParseFlagsOnly parses the flags of a verb that takes no positional
// arguments (flags first, as config.Set.ParseFlagsFirst) and refuses any.
func ParseFlagsOnly(fs *config.Set, args []string, verb string) error {
	if err := fs.ParseFlagsFirst(args, "durable-browser "+verb+" [flags]"); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("%s takes flags only, not %q; see `durable-browser %s --help`", verb, fs.Args(), verb)
	}
	return nil
}

// ParseNoArgs parses the flags of verb name, which takes no positional
// arguments: given any, it prints the usage and refuses them.
func ParseNoArgs(fs *config.Set, args []string, name string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return fmt.Errorf("%s takes no arguments, got %q", name, fs.Args())
	}
	return nil
}
