package workflows

import (
	"bufio"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-browser/durable-browser/contract"
)

// Recorded histories live under testdata/histories/<release>/, one folder per
// release that recorded them, and are never rewritten or moved: a running
// session must replay on every later build. The first release's were
// recorded in ../test/testdata and kept, byte for byte, in
// 01-before-versioning by a later release too: both copies stay, neither
// place loses a history it ever held. MANIFEST lists each file's SHA-256.
const (
	historiesDir       = "testdata/histories"
	firstHistoriesGlob = "../test/testdata/history-*"
)

// recorded lists the recorded files matching pattern (within a release).
func recorded(t *testing.T, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(historiesDir, "*", pattern))
	if err != nil {
		t.Fatal(err)
	}
	first, err := filepath.Glob(firstHistoriesGlob)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range first {
		if ok, _ := filepath.Match(pattern, filepath.Base(f)); ok {
			files = append(files, f)
		}
	}
	return files
}

// manifestName is how MANIFEST names f: relative to historiesDir.
func manifestName(f string) string {
	rel, err := filepath.Rel(historiesDir, f)
	if err != nil {
		return f
	}
	return filepath.ToSlash(rel)
}

func historyFiles(t *testing.T) []string {
	t.Helper()
	files := recorded(t, "history-*.json")
	if len(files) == 0 {
		t.Fatalf("no recorded histories under %s", historiesDir)
	}
	sort.Strings(files)
	return files
}

func replay(f string) error {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(BrowserSession, workflow.RegisterOptions{Name: contract.WorkflowBrowserSession})
	raw, err := os.Open(f)
	if err != nil {
		return err
	}
	defer raw.Close()
	h, err := client.HistoryFromJSON(raw, client.HistoryJSONOptions{})
	if err != nil {
		return fmt.Errorf("reading %s: %w", f, err)
	}
	// Handoff request ids derive from the workflow id, so a history replays
	// under the id it was recorded with, kept beside it.
	id, err := os.ReadFile(strings.TrimSuffix(f, ".json") + ".id")
	if err != nil {
		return fmt.Errorf("%s has no workflow id file beside it: %w", f, err)
	}
	opts := worker.ReplayWorkflowHistoryOptions{OriginalExecution: workflow.Execution{ID: strings.TrimSpace(string(id))}}
	return r.ReplayWorkflowHistoryWithOptions(nil, h, opts)
}

// Every history recorded from real runs, by every release, replays against
// today's workflow code: a change that breaks running sessions fails here.
func TestReplayRecordedHistories(t *testing.T) {
	for _, f := range historyFiles(t) {
		t.Run(manifestName(f), func(t *testing.T) {
			if err := replay(f); err != nil {
				t.Fatalf("replaying %s: %v", f, err)
			}
		})
	}
}

// The manifest pins every recorded history: a changed or deleted file fails,
// and a new one must be added to it (append only; see docs/architecture.md).
func TestHistoryManifest(t *testing.T) {
	mf, err := os.Open(filepath.Join(historiesDir, "MANIFEST"))
	if err != nil {
		t.Fatal(err)
	}
	defer mf.Close()
	listed := map[string]bool{}
	sc := bufio.NewScanner(mf)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("MANIFEST line %q: want '<sha256>  <release>/<file>'", line)
		}
		if listed[name] {
			t.Errorf("MANIFEST lists %s twice", name)
		}
		listed[name] = true
		b, err := os.ReadFile(filepath.Join(historiesDir, name))
		if err != nil {
			t.Errorf("%s is listed in MANIFEST but cannot be read (%v): recorded histories are never removed", name, err)
			continue
		}
		got := sha256.Sum256(b)
		if hex.EncodeToString(got[:]) != sum {
			t.Errorf("%s changed since it was recorded: recorded histories are never rewritten; record new behaviour as a new history in a new release folder", name)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, f := range recorded(t, "*") {
		name := manifestName(f)
		if !listed[name] {
			b, _ := os.ReadFile(f)
			sum := sha256.Sum256(b)
			t.Errorf("%s is not in MANIFEST; add the line:\n%s  %s", name, hex.EncodeToString(sum[:]), name)
		}
	}
}

// A history recorded after the recorded-validation change replays even when
// the schema has since changed (here: a validator that refuses everything),
// because the verdict comes from history. The histories recorded before the
// change cannot do that, which is why they keep the old path.
func TestRecordedValidationSurvivesSchemaChange(t *testing.T) {
	refuseAll := func(name string, raw json.RawMessage) (any, *contract.Failure) {
		return nil, contract.Fail(contract.CodeRefused, "a stricter schema refuses %s", name)
	}
	defer func(v func(string, json.RawMessage) (any, *contract.Failure)) { validateFn = v }(validateFn)
	validateFn = refuseAll
	var versioned, before int
	for _, f := range historyFiles(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// The version marker carries the change id as a JSON string payload.
		hasMarker := strings.Contains(string(b), base64.StdEncoding.EncodeToString([]byte(`"`+changeRecordedValidation+`"`)))
		if !strings.Contains(string(b), `"name": "tool"`) {
			continue // served no call: nothing to validate
		}
		err = replay(f)
		switch {
		case hasMarker:
			versioned++
			if err != nil {
				t.Errorf("%s records its verdicts but did not replay under a changed schema: %v", f, err)
			}
		default:
			before++
			if err == nil {
				t.Errorf("%s has no recorded verdicts, yet replayed under a schema that refuses every call; the test no longer shows what it should", f)
			}
		}
	}
	if versioned == 0 || before == 0 {
		t.Fatalf("want histories from both sides of the change, got %d versioned and %d before", versioned, before)
	}
}
