package local

import (
	"os/exec"

	"github.com/durable-browser/durable-browser/internal/proctie"
)

// startTied starts cmd so that it is killed (SIGKILL) when this worker
// process dies, however it dies.
//
// Why: a request the request gate holds for approval is paused in Chrome by
// the DevTools Fetch domain, and Chrome sends it, unapproved, the moment the
// DevTools connection closes (driver TestHeldRequestReleasedWhenConnectionDrops).
// A browser that outlived its worker would do exactly that.
//
// Only Linux can tie a child's life to its parent's (internal/proctie says
// how); elsewhere a browser outlives a worker that dies, until a worker
// reaps it.
func startTied(cmd *exec.Cmd) error { return proctie.Start(cmd) }
