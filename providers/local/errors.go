package local

import (
	"errors"
	"fmt"
	"strings"

	"github.com/durable-browser/durable-browser/internal/tags"
)

// ErrStartFailed is wrapped by *StartError.
var ErrStartFailed = errors.New("chrome did not start")

// ErrProfileBusy is wrapped by *ProfileBusyError.
var ErrProfileBusy = errors.New("profile is in use by another session")

// ErrBadTag is wrapped by the error for a tag tags.Valid rejects; it is
// tags.ErrInvalid.
var ErrBadTag = tags.ErrInvalid

// ErrNotReleased is wrapped when release could not confirm the browser is gone.
var ErrNotReleased = errors.New("browser not confirmed gone")

// StartError says why Chrome failed to open its DevTools port.
type StartError struct {
	// Path is the executable that was run.
	Path string
	// Exit describes how it ended ("exit status 1", "signal: aborted"), or is
	// empty when it was still running at the deadline.
	Exit string
	// TimedOut is set when the port did not open within the start timeout.
	TimedOut bool
	// Stderr holds its last lines of output.
	Stderr string
	// SandboxHint is set when the crash looks like the sandbox failing.
	SandboxHint bool
}

func (e *StartError) Error() string {
	var b strings.Builder
	if e.TimedOut {
		fmt.Fprintf(&b, "chrome (%s) did not open its DevTools port in time", e.Path)
	} else {
		fmt.Fprintf(&b, "chrome (%s) exited (%s) before opening its DevTools port", e.Path, e.Exit)
	}
	if e.Stderr != "" {
		b.WriteString("; last output:\n" + e.Stderr)
	}
	if e.SandboxHint {
		b.WriteString("\nhint: Chrome's sandbox could not start (it always fails as root and in many containers): " +
			"start it with --no-sandbox (local provider option NoSandbox), or give the process the privileges the sandbox needs")
	} else if !e.TimedOut {
		b.WriteString("\nhint: check that the executable is Chrome or Chromium and runs by hand with --headless=new")
	}
	return b.String()
}

// Unwrap lets errors.Is(err, ErrStartFailed) match.
func (e *StartError) Unwrap() error { return ErrStartFailed }

// ProfileBusyError refuses a second session on one profile: a profile
// serves one session at a time.
type ProfileBusyError struct {
	Profile   string
	HolderTag string
	HolderPID int
	// Save: the holder runs on the profile itself.
	Save bool
}

func (e *ProfileBusyError) Error() string {
	return fmt.Sprintf("profile %q is in use by another session (%s, pid %d); a profile serves one session at a time: release that session first, then try again",
		e.Profile, e.HolderTag, e.HolderPID)
}

// Unwrap lets errors.Is(err, ErrProfileBusy) match.
func (e *ProfileBusyError) Unwrap() error { return ErrProfileBusy }

// Refusal marks the error as a refusal the caller can act on (wait for the
// other saver, or work on a copy) rather than a broken browser.
func (e *ProfileBusyError) Refusal() bool { return true }

// ErrNoDisplay is wrapped by *NoDisplayError.
var ErrNoDisplay = errors.New("no display for a headed browser")

// NoDisplayError refuses a headed browser where no display is set: Chrome
// would exit at once ("Missing X server or $DISPLAY").
type NoDisplayError struct{}

func (e *NoDisplayError) Error() string {
	return "no display was found for a headed browser ($DISPLAY and $WAYLAND_DISPLAY are not set on the worker): use headed false, or run the worker where a display is (for example under xvfb-run)"
}

// Unwrap lets errors.Is(err, ErrNoDisplay) match.
func (e *NoDisplayError) Unwrap() error { return ErrNoDisplay }

// Refusal marks the error as one the caller fixes by asking otherwise.
func (e *NoDisplayError) Refusal() bool { return true }
