package devstack

import (
	"sync/atomic"

	"github.com/rs/zerolog"
	serverlog "go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
)

// ServerLogger adapts zerolog to the embedded Temporal server's logger, so the
// server's lines share the process's format and level.
type ServerLogger struct {
	l zerolog.Logger
	// quiet silences the server while it shuts down, when its peers
	// vanishing one by one is expected and not worth an error line.
	quiet *atomic.Bool
}

var _ serverlog.Logger = ServerLogger{}
var _ serverlog.WithLogger = ServerLogger{}

// NewServerLogger returns a server logger writing through l.
func NewServerLogger(l zerolog.Logger) ServerLogger {
	return ServerLogger{l: l.With().Str("component", "temporal-server").Logger(), quiet: new(atomic.Bool)}
}

// Quiet stops all further lines; call it when stopping the server.
func (s ServerLogger) Quiet() { s.quiet.Store(true) }

// event writes one line; a level the logger leaves out (zerolog's nil event)
// returns before reading the tags' values, which the server passes on every
// call, debug lines on its hot paths included.
func (s ServerLogger) event(e *zerolog.Event, msg string, tags []tag.Tag) {
	if e == nil || s.quiet.Load() {
		return
	}
	for _, t := range tags {
		e = e.Interface(t.Key(), t.Value())
	}
	e.Msg(msg)
}

func (s ServerLogger) Debug(msg string, tags ...tag.Tag) { s.event(s.l.Debug(), msg, tags) }
func (s ServerLogger) Info(msg string, tags ...tag.Tag)  { s.event(s.l.Info(), msg, tags) }
func (s ServerLogger) Warn(msg string, tags ...tag.Tag)  { s.event(s.l.Warn(), msg, tags) }
func (s ServerLogger) Error(msg string, tags ...tag.Tag) { s.event(s.l.Error(), msg, tags) }

// DPanic, Panic and Fatal are logged as errors: the embedded server must never
// take the dev process down by itself.
func (s ServerLogger) DPanic(msg string, tags ...tag.Tag) { s.event(s.l.Error(), msg, tags) }
func (s ServerLogger) Panic(msg string, tags ...tag.Tag)  { s.event(s.l.Error(), msg, tags) }
func (s ServerLogger) Fatal(msg string, tags ...tag.Tag)  { s.event(s.l.Error(), msg, tags) }

// With returns a logger that adds tags to every line.
func (s ServerLogger) With(tags ...tag.Tag) serverlog.Logger {
	c := s.l.With()
	for _, t := range tags {
		c = c.Interface(t.Key(), t.Value())
	}
	return ServerLogger{l: c.Logger(), quiet: s.quiet}
}
