// Package test holds the end-to-end tests: real Temporal (embedded), real
// Chromium, a real S3 server and loopback sites.
package test

import (
	"fmt"
	"os"
	"testing"

	"github.com/durable-browser/durable-browser/test/harness"
)

var env *harness.Env

func TestMain(m *testing.M) {
	if runCostChild() {
		return
	}
	var err error
	env, err = harness.Start(harness.Options{Binary: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e setup:", err)
		os.Exit(1)
	}
	code := m.Run()
	stopBenchWorker()
	stopFloorWorkers()
	env.Close()
	os.Exit(code)
}
