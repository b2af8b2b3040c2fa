// Package crash is the crash matrix: a worker (a child process with real
// Chromium) is killed (SIGKILL) or stopped (SIGTERM) at each cut point of a
// session's calls, against the embedded Temporal server and a loopback site
// that counts what is posted to it. Each row asserts the code the agent
// sees, the POSTs the site counted, the answer to a resend with the same
// update id, that the session is usable afterwards and that no Chrome of the
// lost worker is left. With DURABLE_BROWSER_WRITE_RELIABILITY=1 the run
// writes what it observed to docs/reliability.md (`make reliability`).
package crash

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/durable-browser/durable-browser/test/harness"
)

var env *harness.Env

func TestMain(m *testing.M) {
	// Temporal keeps its state in a file so one row can restart it.
	state, err := os.MkdirTemp("", "durable-browser-crash-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash matrix setup:", err)
		os.Exit(1)
	}
	defer os.RemoveAll(state)
	env, err = harness.Start(harness.Options{Binary: true, TemporalDB: filepath.Join(state, "temporal.db"), BuildTags: "crashhooks"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash matrix setup:", err)
		os.Exit(1)
	}
	code := m.Run()
	if code == 0 && os.Getenv("DURABLE_BROWSER_WRITE_RELIABILITY") == "1" {
		if err := writeReliability("../../docs/reliability.md"); err != nil {
			fmt.Fprintln(os.Stderr, "writing docs/reliability.md:", err)
			code = 1
		}
	}
	env.Close()
	_ = os.RemoveAll(state)
	os.Exit(code)
}
