package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// engine returns the docker CLI when a container engine answers, else
// skips the test saying why.
func engine(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("docker")
	if err != nil {
		t.Skip("no container engine here (no docker CLI on PATH): docker-compose.yml is checked statically only (TestDeployFiles)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, bin, "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		t.Skipf("no container engine answers (docker info: %v: %s): docker-compose.yml is checked statically only (TestDeployFiles)", err, strings.TrimSpace(string(out)))
	}
	return bin
}

// composeEnv is the environment docker compose reads the stack's secrets
// from, with throwaway values.
func composeEnv(project string) []string {
	return append(os.Environ(),
		"COMPOSE_PROJECT_NAME="+project,
		"POSTGRES_PASSWORD=compose-test-postgres",
		"S3_ACCESS_KEY=compose-test",
		"S3_SECRET_KEY=compose-test-secret",
	)
}

func compose(ctx context.Context, bin, project string, args ...string) *exec.Cmd {
	dir, _ := filepath.Abs("..")
	cmd := exec.CommandContext(ctx, bin, append([]string{"compose", "-f", filepath.Join(dir, "docker-compose.yml")}, args...)...)
	cmd.Dir = dir
	cmd.Env = composeEnv(project)
	return cmd
}

// TestComposeEngine runs `docker compose config` where an engine exists,
// then (unless -short) brings the stack up, waits for both workers, takes
// a screenshot through one (Temporal, a worker's Chrome and the S3 bucket
// in one call), and takes the stack down with its volumes.
func TestComposeEngine(t *testing.T) {
	bin := engine(t)
	project := fmt.Sprintf("dbcompose%d", os.Getpid())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	if out, err := compose(ctx, bin, project, "config", "--quiet").CombinedOutput(); err != nil {
		t.Fatalf("docker compose config: %v\n%s", err, out)
	}
	if testing.Short() {
		t.Skip("-short: not starting the stack")
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if out, err := compose(ctx, bin, project, "down", "--volumes", "--remove-orphans").CombinedOutput(); err != nil {
			t.Errorf("docker compose down: %v\n%s", err, out)
		}
	})
	if out, err := compose(ctx, bin, project, "up", "--detach", "--build").CombinedOutput(); err != nil {
		t.Fatalf("docker compose up: %v\n%s", err, out)
	}
	// Both workers running (they start only after the schema, namespace
	// and bucket steps completed).
	for {
		out, err := compose(ctx, bin, project, "ps", "--format", "json", "worker").Output()
		if err != nil {
			t.Fatalf("docker compose ps: %v", err)
		}
		running := 0
		for _, c := range psStates(out) {
			if c == "running" {
				running++
			}
		}
		if running == 2 {
			break
		}
		select {
		case <-ctx.Done():
			logs, _ := compose(context.Background(), bin, project, "logs", "--no-color").CombinedOutput()
			t.Fatalf("two workers did not start (%d running)\n%s", running, logs)
		case <-time.After(2 * time.Second):
		}
	}
	out, err := compose(ctx, bin, project, "exec", "-T", "--index", "1", "worker",
		"durable-browser", "call", "--address", "temporal:7233", "compose-smoke", "screenshot", "{}").CombinedOutput()
	if err != nil {
		logs, _ := compose(context.Background(), bin, project, "logs", "--no-color").CombinedOutput()
		t.Fatalf("a screenshot through the stack: %v\n%s\n%s", err, out, logs)
	}
	if !strings.Contains(string(out), `"ok": true`) {
		t.Fatalf("the screenshot did not answer ok:\n%s", out)
	}
}

// psStates reads the containers' states from `docker compose ps --format
// json`: one object a line (compose 2.21 on) or one array (before).
func psStates(out []byte) []string {
	type container struct{ State string }
	var states []string
	if all := []container{}; json.Unmarshal(out, &all) == nil {
		for _, c := range all {
			states = append(states, c.State)
		}
		return states
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var c container
		if json.Unmarshal([]byte(line), &c) == nil {
			states = append(states, c.State)
		}
	}
	return states
}

// The smoke run counts running workers from either output of compose ps.
func TestPSStates(t *testing.T) {
	for _, tc := range []struct{ name, out string }{
		{"lines", `{"Service":"worker","State":"running"}` + "\n" + `{"Service":"worker","State":"exited"}` + "\n"},
		{"array", `[{"Service":"worker","State":"running"},{"Service":"worker","State":"exited"}]`},
	} {
		if got := psStates([]byte(tc.out)); !slices.Equal(got, []string{"running", "exited"}) {
			t.Errorf("%s: %q", tc.name, got)
		}
	}
}
