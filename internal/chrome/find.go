// Package chrome finds a Chrome or Chromium executable and speaks just enough
// of the DevTools protocol to manage a browser's lifetime (resolve an
// endpoint, open and close targets, close the browser).
package chrome

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// ErrNotFound is wrapped by *NotFoundError when no browser could be found.
var ErrNotFound = errors.New("no Chrome or Chromium found")

// ErrBadPath is wrapped by *BadPathError when an explicitly given browser path
// (--chrome or CHROME_PATH) cannot be used.
var ErrBadPath = errors.New("chrome path is not an executable")

// EnvVar is the environment variable naming the browser executable.
const EnvVar = "CHROME_PATH"

// Flag is the command-line flag naming the browser executable.
const Flag = "--chrome"

// PathNames are the executable names looked up on PATH, in order.
var PathNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// FindOptions controls Find. Every function field defaults to the real
// operating-system call, so tests can replace them with fakes.
type FindOptions struct {
	// Explicit is the value of --chrome; it wins over everything else.
	Explicit string
	// Env reads environment variables (default os.Getenv).
	Env func(string) string
	// LookPath searches PATH (default exec.LookPath).
	LookPath func(string) (string, error)
	// Stat inspects a file (default os.Stat).
	Stat func(string) (os.FileInfo, error)
	// GOOS picks the install paths and the install hint (default runtime.GOOS).
	GOOS string
}

// NotFoundError says no browser was found and how to install one.
type NotFoundError struct {
	// GOOS picks the install hint.
	GOOS string
	// Tried lists the install paths looked at (after PATH).
	Tried []string
}

func (e *NotFoundError) Error() string {
	var how string
	switch e.GOOS {
	case "darwin":
		how = "install one with `brew install --cask chromium` (or install Google Chrome)"
	case "windows":
		how = "install Google Chrome or Chromium"
	default:
		how = "install one with `apt-get install chromium` on Debian/Ubuntu (or your distribution's chromium package)"
	}
	return fmt.Sprintf("no Chrome or Chromium found (looked for %s on PATH and in the usual install paths): %s, or point %s / %s at the executable",
		strings.Join(PathNames, ", "), how, Flag, EnvVar)
}

// Unwrap lets errors.Is(err, ErrNotFound) match.
func (e *NotFoundError) Unwrap() error { return ErrNotFound }

// BadPathError says an explicitly given path is missing or not executable.
type BadPathError struct {
	// Source is "--chrome", "CHROME_PATH" or "--headless-shell".
	Source string
	// Path is the value given.
	Path string
	// Reason says what is wrong with it ("does not exist", "is not executable").
	Reason string
}

func (e *BadPathError) Error() string {
	if e.Source == ShellFlag {
		return fmt.Sprintf("%s %q %s: point it at chrome-headless-shell (Debian: apt-get install chromium-headless-shell), or give %q to look for one or %q to run headless sessions in the full browser",
			e.Source, e.Path, e.Reason, ShellAuto, ShellOff)
	}
	return fmt.Sprintf("%s %q %s: point %s (or %s) at the Chrome or Chromium executable, or leave both unset to search PATH",
		e.Source, e.Path, e.Reason, Flag, EnvVar)
}

// Unwrap lets errors.Is(err, ErrBadPath) match.
func (e *BadPathError) Unwrap() error { return ErrBadPath }

// InstallPaths returns the usual install locations for goos, in search order.
// home may be empty.
func InstallPaths(goos, home string) []string {
	switch goos {
	case "darwin":
		apps := []string{
			"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
			"/Applications/Chromium.app/Contents/MacOS/Chromium",
			"/Applications/Google Chrome Canary.app/Contents/MacOS/Google Chrome Canary",
		}
		if home != "" {
			apps = append(apps,
				filepath.Join(home, "Applications/Google Chrome.app/Contents/MacOS/Google Chrome"),
				filepath.Join(home, "Applications/Chromium.app/Contents/MacOS/Chromium"))
		}
		return apps
	case "windows":
		return []string{
			`C:\Program Files\Google\Chrome\Application\chrome.exe`,
			`C:\Program Files (x86)\Google\Chrome\Application\chrome.exe`,
			`C:\Program Files\Chromium\Application\chrome.exe`,
		}
	default:
		return []string{
			"/usr/bin/chromium",
			"/usr/bin/chromium-browser",
			"/usr/bin/google-chrome",
			"/usr/bin/google-chrome-stable",
			"/opt/google/chrome/chrome",
			"/snap/bin/chromium",
		}
	}
}

// fill puts the real operating-system calls in the fields left nil.
func (o *FindOptions) fill() {
	if o.Env == nil {
		o.Env = os.Getenv
	}
	if o.LookPath == nil {
		o.LookPath = exec.LookPath
	}
	if o.Stat == nil {
		o.Stat = os.Stat
	}
	if o.GOOS == "" {
		o.GOOS = runtime.GOOS
	}
}

// Find returns the browser executable to run: --chrome, else CHROME_PATH,
// else the first of PathNames on PATH, else the first usable install path.
func Find(o FindOptions) (string, error) {
	o.fill()
	if o.Explicit != "" {
		return checkExplicit(o, Flag, o.Explicit)
	}
	if p := o.Env(EnvVar); p != "" {
		return checkExplicit(o, EnvVar, p)
	}
	for _, name := range PathNames {
		if p, err := o.LookPath(name); err == nil && p != "" {
			return p, nil
		}
	}
	tried := InstallPaths(o.GOOS, o.Env("HOME"))
	for _, p := range tried {
		if reason := usable(o, p); reason == "" {
			return p, nil
		}
	}
	return "", &NotFoundError{GOOS: o.GOOS, Tried: tried}
}

func checkExplicit(o FindOptions, source, p string) (string, error) {
	if reason := usable(o, p); reason != "" {
		return "", &BadPathError{Source: source, Path: p, Reason: reason}
	}
	return p, nil
}

// usable returns "" when p is an executable regular file, else why not.
func usable(o FindOptions, p string) string {
	fi, err := o.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "does not exist"
	case err != nil:
		return "cannot be read (" + err.Error() + ")"
	case fi.IsDir():
		return "is a directory"
	case o.GOOS != "windows" && fi.Mode().Perm()&0o111 == 0:
		return "is not executable"
	}
	return ""
}

// ShellFlag is the command-line flag choosing the headless shell.
const ShellFlag = "--headless-shell"

// ShellAuto and ShellOff are the two words --headless-shell takes besides
// a path.
const (
	ShellAuto = "auto"
	ShellOff  = "off"
)

// ShellPaths are where the headless shell (chrome-headless-shell: Chrome's
// rendering engine without the browser's user interface) is looked for, in
// order. Debian's real executable comes before PATH: its
// /usr/bin/chromium-headless-shell is a script that runs the browser as a
// child instead of replacing itself, so a signal to the process started
// would not reach the browser.
var ShellPaths = []string{"/usr/lib/chromium/chromium-headless-shell"}

// ShellNames are the headless shell's names looked up on PATH, after
// ShellPaths.
var ShellNames = []string{"chrome-headless-shell", "chromium-headless-shell"}

// FindShell returns the headless shell to run headless browsers with, or
// "" for none (then the full browser runs them, with --headless=new).
// setting is the value of --headless-shell: "" or ShellAuto looks for one,
// unless a browser was named (--chrome or CHROME_PATH: that browser is
// then the one run); ShellOff never uses one; anything else is the path of
// the shell, which must be an executable.
func FindShell(o FindOptions, setting string) (string, error) {
	o.fill()
	switch setting {
	case ShellOff:
		return "", nil
	case "", ShellAuto:
	default:
		return checkExplicit(o, ShellFlag, setting)
	}
	if o.Explicit != "" || o.Env(EnvVar) != "" || o.GOOS != "linux" {
		return "", nil
	}
	for _, p := range ShellPaths {
		if usable(o, p) == "" {
			return p, nil
		}
	}
	for _, name := range ShellNames {
		if p, err := o.LookPath(name); err == nil && p != "" {
			return p, nil
		}
	}
	return "", nil
}
