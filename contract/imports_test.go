package contract

import (
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// An orchestrator imports this package, and workflows call it, so it may
// depend only on the standard library and the JSON Schema validator.
const schemaLibrary = "github.com/santhosh-tekuri/jsonschema/v6"

func standardLibrary(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

func TestImportsOnlyStandardLibraryAndValidator(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if !standardLibrary(path) && path != schemaLibrary && !strings.HasPrefix(path, schemaLibrary+"/") {
				t.Errorf("%s imports %s: only the standard library and %s are allowed", name, path, schemaLibrary)
			}
		}
	}
}

// The validator's own dependencies stay small: today golang.org/x/text (its
// message printer). A new one is a decision, not an accident.
func TestDependenciesStaySmall(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		switch {
		case standardLibrary(dep),
			dep == "github.com/durable-browser/durable-browser/contract",
			dep == schemaLibrary, strings.HasPrefix(dep, schemaLibrary+"/"),
			strings.HasPrefix(dep, "golang.org/x/text/"):
		default:
			t.Errorf("contract depends on %s", dep)
		}
	}
}
