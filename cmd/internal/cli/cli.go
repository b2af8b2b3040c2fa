// Package cli holds what the four command binaries share: the environment a
// verb may touch, so tests run verbs in-process with their own, a verb's
// flag set, and how a verb's error becomes the process's exit status.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/durable-browser/durable-browser/internal/config"
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

// Status is the exit status of the verb name's err: 0 for none or -h, an
// ExitError's code, else 1 with "durable-browser NAME: ERR" on stderr.
func Status(env *Env, name string, err error) int {
	var ee ExitError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
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

// HelpStatus is how a command that took no verb it knows ends once it has
// printed its usage: flag.ErrHelp when args ask for help, else exit status 2.
func HelpStatus(args []string) error {
	if AsksHelp(args) {
		return flag.ErrHelp
	}
	return ExitError{Code: 2}
}

// Subverbs runs the verb of command (evidence, states) that args[0] names,
// with the rest. With none, or asked for help, it prints usage; an unknown
// verb prints usage and is refused, the error saying what to use.
func Subverbs(ctx context.Context, env *Env, args []string, command, usage, use string, verbs map[string]Verb) error {
	if len(args) == 0 || AsksHelp(args) {
		fmt.Fprint(env.Stderr, usage)
		return HelpStatus(args)
	}
	if v, ok := verbs[args[0]]; ok {
		return v(ctx, env, args[1:])
	}
	fmt.Fprint(env.Stderr, usage)
	return fmt.Errorf("unknown %s verb %q: use %s", command, args[0], use)
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
