package test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The Python and TypeScript samples of docs/cross-language.md run against
// the test stack when their Temporal SDKs are installed; otherwise each says
// it was skipped and why.
func TestCrossLanguageSamples(t *testing.T) {
	samples, err := filepath.Abs("../docs/samples")
	if err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, dir string, name string, args ...string) {
		env.StartWorker(t, harnessDefaults())
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, append(args, "--address", env.Temporal.Address(), "--site", env.Demo.URL())...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "title: Durable Browser Demo") {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
	}
	t.Run("python", func(t *testing.T) {
		py, err := exec.LookPath("python3")
		if err != nil {
			t.Skip("skipped: python3 is not installed")
		}
		if exec.Command(py, "-c", "import temporalio").Run() != nil {
			t.Skip("skipped: the Temporal Python SDK is not installed (pip install temporalio)")
		}
		run(t, filepath.Join(samples, "python"), py, "agent.py")
	})
	t.Run("typescript", func(t *testing.T) {
		node, err := exec.LookPath("node")
		if err != nil {
			t.Skip("skipped: node is not installed")
		}
		dir := filepath.Join(samples, "typescript")
		check := exec.Command(node, "-e", "for (const m of ['@temporalio/client','@temporalio/worker','@temporalio/workflow','tsx']) require.resolve(m)")
		check.Dir = dir
		if check.Run() != nil {
			t.Skip("skipped: the Temporal TypeScript SDK and tsx are not installed beside the sample (npm install @temporalio/client @temporalio/worker @temporalio/workflow tsx)")
		}
		npx, err := exec.LookPath("npx")
		if err != nil {
			t.Skip("skipped: npx is not installed")
		}
		run(t, dir, npx, "--no-install", "tsx", "main.ts")
	})
}
