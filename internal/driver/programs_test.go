package driver

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Every page program opens with a comment on what it returns and is one
// function declaration (eval.js, the template, excepted), so it is read
// and linted as JavaScript; with node on the machine each one parses.
func TestPrograms(t *testing.T) {
	names, err := fs.Glob(programFiles, "js/*.js")
	if err != nil || len(names) == 0 {
		t.Fatalf("no programs: %v", err)
	}
	node, _ := exec.LookPath("node")
	for _, path := range names {
		name := strings.TrimPrefix(path, "js/")
		raw, _ := programFiles.ReadFile(path)
		if !strings.HasPrefix(string(raw), "// ") {
			t.Errorf("%s: opens without a comment on what it returns", name)
		}
		src := program(name)
		if name == "eval.js" {
			src = evalExpr("[1]", "(x) => x")
		} else if !strings.HasPrefix(src, "function ") {
			t.Errorf("%s: not one function declaration: %.40q", name, src)
		}
		if node == "" {
			continue
		}
		f := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(f, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(node, "--check", f).CombinedOutput(); err != nil {
			t.Errorf("%s does not parse: %s", name, out)
		}
	}
}
