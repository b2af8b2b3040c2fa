package activities

import (
	"context"
	"encoding/json"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/driver"
)

// Browser is what the activities need of an attached browser: the calls
// the tools make, the page's address and title, the journal of requests a
// run let go, and Close. *driver.Browser is the real one; tests use a fake.
type Browser interface {
	Snapshot(ctx context.Context, o driver.SnapshotOptions) (*contract.SnapshotResult, error)
	Run(ctx context.Context, actions []driver.Action, o driver.RunOptions) (*contract.RunResult, error)
	Screenshot(ctx context.Context, o driver.ScreenshotOptions) (*driver.Shot, error)
	Read(ctx context.Context, o driver.ReadOptions) (*driver.ReadResult, error)
	Check(ctx context.Context, o driver.CheckOptions) (*driver.Checked, error)
	Downloads(ctx context.Context) ([]contract.Download, error)
	Upload(ctx context.Context, target driver.Target, file string) error
	// ActiveTarget is Chrome's id of the active tab (for a DevTools
	// address on the worker, a credential).
	ActiveTarget() (string, error)
	URL(ctx context.Context) string
	Title(ctx context.Context) string
	SentSoFar() []contract.SentRequest
	// For code cells: an element's text or attribute, page-side code, and
	// holding the request gate's context between a cell's calls.
	Text(ctx context.Context, id string) (string, error)
	Attr(ctx context.Context, id, name string) (string, bool, error)
	Eval(ctx context.Context, source, args string) (json.RawMessage, error)
	Hold(ctx context.Context) (release func())
	// Forget drops the latest snapshot's ids (a person drove the page).
	Forget()
	Close() error
}

var _ Browser = (*driver.Browser)(nil)

// AttachFunc attaches a driver to the browser a provider started for a
// session. o carries the session's CDP address, its download directory and,
// under the "ask" and "deny" policies, the request gate the driver must
// consult before every side-effecting request.
type AttachFunc func(ctx context.Context, o driver.Options) (Browser, error)

// AttachDriver is a worker's AttachFunc: driver.Attach, with page text
// passed through redact before the driver cuts it to a bound (a secret cut
// in half would escape a later match). The default (Options.Attach unset)
// is AttachDriver(nil). It never returns a non-nil interface holding a nil
// *driver.Browser.
func AttachDriver(redact func(string) string) AttachFunc {
	return func(ctx context.Context, o driver.Options) (Browser, error) {
		o.Redact = redact
		b, err := driver.Attach(ctx, o)
		if err != nil {
			return nil, err
		}
		return b, nil
	}
}
