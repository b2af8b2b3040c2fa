package cli

import (
	"context"
	"io"
	"time"

	"github.com/rs/zerolog"
	"go.temporal.io/sdk/client"

	"github.com/durable-browser/durable-browser/internal/config"
	"github.com/durable-browser/durable-browser/internal/dial"
	"github.com/durable-browser/durable-browser/internal/logging"
)

// Client is the flags of a verb that is a Temporal client: where Temporal
// is, how long the verb may take, and how much it logs.
type Client struct {
	Temporal config.Temporal
	Timeout  time.Duration
	LogLevel string
}

// BindClient declares the Temporal flags, --timeout (default timeout,
// timeoutHelp saying what it bounds) and --log-level (default warn) with
// logHelp; a verb with no logHelp has no --log-level and logs warnings.
func BindClient(fs *config.Set, c *Client, timeout time.Duration, timeoutHelp, logHelp string) {
	config.BindTemporal(fs, &c.Temporal)
	fs.Duration(&c.Timeout, "timeout", timeout, timeoutHelp)
	c.LogLevel = "warn"
	if logHelp != "" {
		fs.String(&c.LogLevel, "log-level", "warn", logHelp)
	}
}

// Check validates the flags (fix is an example of a good --timeout) and
// answers the logger --log-level asks for, writing to w.
func (c *Client) Check(w io.Writer, fix string) (zerolog.Logger, error) {
	if err := config.ValidateTemporal(c.Temporal); err != nil {
		return zerolog.Nop(), err
	}
	if c.Timeout <= 0 {
		return zerolog.Nop(), &config.Error{Flag: "timeout", Problem: "must be positive", Fix: fix}
	}
	lvl, err := logging.ParseLevel(c.LogLevel)
	if err != nil {
		return zerolog.Nop(), &config.Error{Flag: "log-level", Problem: err.Error()}
	}
	return zerolog.New(w).Level(lvl), nil
}

// Dial connects to Temporal; the context it answers carries --timeout, and
// cancel is for the caller once the client is closed.
func (c *Client) Dial(ctx context.Context, log zerolog.Logger) (context.Context, context.CancelFunc, client.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	tc, err := dial.Temporal(ctx, c.Temporal, log, nil)
	if err != nil {
		cancel()
		return nil, nil, nil, err
	}
	return ctx, cancel, tc, nil
}
