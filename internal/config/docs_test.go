package config

import (
	"os"
	"strings"
	"testing"
)

// TestWorkerFlagsDocumented keeps docs/configuration.md in step with the
// worker's flags: every flag and its environment variable must be named there.
func TestWorkerFlagsDocumented(t *testing.T) {
	raw, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatalf("reading docs/configuration.md: %v", err)
	}
	doc := string(raw)
	s := NewSet("worker", func(string) string { return "" })
	var w Worker
	BindWorker(s, &w)
	names := s.Names()
	if len(names) == 0 {
		t.Fatal("BindWorker defined no flags")
	}
	for _, name := range names {
		if !strings.Contains(doc, "`--"+name+"`") {
			t.Errorf("docs/configuration.md does not document `--%s`", name)
		}
		if env := EnvName(name); !strings.Contains(doc, "`"+env+"`") {
			t.Errorf("docs/configuration.md does not name `%s` (for --%s)", env, name)
		}
	}
}
