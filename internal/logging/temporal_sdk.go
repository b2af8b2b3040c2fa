package logging

import (
	"fmt"

	"github.com/rs/zerolog"
	sdklog "go.temporal.io/sdk/log"
)

// SDKLogger adapts zerolog to the Temporal SDK's logger. The SDK adds the
// workflow, run and activity ids as key-values, so lines about a call carry them.
type SDKLogger struct {
	l zerolog.Logger
}

var _ sdklog.Logger = SDKLogger{}
var _ sdklog.WithLogger = SDKLogger{}

// NewSDKLogger returns an SDK logger writing through l.
func NewSDKLogger(l zerolog.Logger) SDKLogger { return SDKLogger{l: l} }

func fields(e *zerolog.Event, keyvals []any) *zerolog.Event {
	for i := 0; i < len(keyvals); i += 2 {
		k := fmt.Sprint(keyvals[i])
		if i+1 >= len(keyvals) {
			e = e.Interface("extra", keyvals[i])
			break
		}
		switch v := keyvals[i+1].(type) {
		case error:
			e = e.AnErr(k, v)
		default:
			e = e.Interface(k, v)
		}
	}
	return e
}

func (s SDKLogger) Debug(msg string, kv ...any) { fields(s.l.Debug(), kv).Msg(msg) }
func (s SDKLogger) Info(msg string, kv ...any)  { fields(s.l.Info(), kv).Msg(msg) }
func (s SDKLogger) Warn(msg string, kv ...any)  { fields(s.l.Warn(), kv).Msg(msg) }
func (s SDKLogger) Error(msg string, kv ...any) { fields(s.l.Error(), kv).Msg(msg) }

// With returns a logger adding keyvals to every line.
func (s SDKLogger) With(kv ...any) sdklog.Logger {
	c := s.l.With()
	for i := 0; i+1 < len(kv); i += 2 {
		c = c.Interface(fmt.Sprint(kv[i]), kv[i+1])
	}
	return SDKLogger{l: c.Logger()}
}
