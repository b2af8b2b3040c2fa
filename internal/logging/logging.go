// Package logging builds the process's zerolog logger and the adapter that
// lets the Temporal SDK log through it (the embedded server's is in devstack).
package logging

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
)

// Options configures New.
type Options struct {
	// Level is one of trace, debug, info, warn, error (default info).
	Level string
	// Out defaults to stderr.
	Out io.Writer
	// Console forces human-readable output; nil means "when Out is a terminal".
	Console *bool
}

// ParseLevel reads a level name, naming the accepted ones when it cannot.
func ParseLevel(s string) (zerolog.Level, error) {
	if s == "" {
		return zerolog.InfoLevel, nil
	}
	switch strings.ToLower(s) {
	case "trace", "debug", "info", "warn", "error":
		l, _ := zerolog.ParseLevel(strings.ToLower(s))
		return l, nil
	}
	return zerolog.NoLevel, fmt.Errorf("unknown log level %q: use trace, debug, info, warn or error", s)
}

// New returns a logger: console lines on a terminal, JSON lines otherwise.
func New(o Options) (zerolog.Logger, error) {
	lvl, err := ParseLevel(o.Level)
	if err != nil {
		return zerolog.Nop(), err
	}
	out := o.Out
	if out == nil {
		out = os.Stderr
	}
	console := false
	if o.Console != nil {
		console = *o.Console
	} else if f, ok := out.(*os.File); ok {
		console = isatty.IsTerminal(f.Fd())
	}
	if console {
		out = zerolog.ConsoleWriter{Out: out, TimeFormat: time.TimeOnly}
	}
	return zerolog.New(out).Level(lvl).With().Timestamp().Logger(), nil
}
