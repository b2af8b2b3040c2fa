package activities

import (
	"encoding/json"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const redactPath = "github.com/durable-browser/durable-browser/internal/redact"

// No activity redacts anything itself: an answer passes the worker's
// redaction gate (internal/redactgate), and what leaves another way is
// redacted where it leaves (evidence.Filer, redact.Secrets, holds, the
// driver's attach, jsengine). A method of *redact.Redactor named anywhere
// in the package's own files (called, or taken as a func value) fails here.
func TestNoActivityCallsARedactor(t *testing.T) {
	pkg := goList(t, ".")
	files := make([]*ast.File, 0, len(pkg.GoFiles))
	fset := token.NewFileSet()
	for _, name := range pkg.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(pkg.Dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if got := redactorUses(t, fset, pkg.ImportPath, files); len(got) > 0 {
		t.Fatalf("activities call a Redactor; redact where the data leaves instead:\n%s", strings.Join(got, "\n"))
	}

	// The walk finds a call and a method value when there is one.
	src := `package p
import "` + redactPath + `"
func f(r *redact.Redactor) (string, func(string) string) { return r.String("x"), r.String }`
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := redactorUses(t, fset, "p", []*ast.File{f}); len(got) != 2 {
		t.Fatalf("the walk found %q in a file that uses a Redactor twice", got)
	}
}

// goListed is what go list says of a package.
type goListed struct {
	ImportPath, Dir string
	// GoFiles are the package's own files for this build (no tests).
	GoFiles []string
}

func goList(t *testing.T, pattern string) goListed {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", pattern).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pattern, err)
	}
	var p goListed
	if err := json.Unmarshal(out, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// redactorUses type-checks files (imports read from the build cache's
// export data) and lists where a method of *redact.Redactor is selected.
func redactorUses(t *testing.T, fset *token.FileSet, path string, files []*ast.File) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}={{.Export}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	exports := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if p, file, ok := strings.Cut(line, "="); ok {
			exports[p] = file
		}
	}
	imp := importer.ForCompiler(fset, "gc", func(p string) (io.ReadCloser, error) { return os.Open(exports[p]) })
	info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}}
	if _, err := (&types.Config{Importer: imp}).Check(path, fset, files, info); err != nil {
		t.Fatal(err)
	}
	var uses []string
	for sel, s := range info.Selections {
		fn, ok := s.Obj().(*types.Func)
		if !ok {
			continue
		}
		recv := fn.Type().(*types.Signature).Recv()
		if recv == nil {
			continue
		}
		rt := recv.Type()
		if p, ok := rt.(*types.Pointer); ok {
			rt = p.Elem()
		}
		if n, ok := rt.(*types.Named); ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == redactPath && n.Obj().Name() == "Redactor" {
			uses = append(uses, fset.Position(sel.Pos()).String()+": Redactor."+fn.Name())
		}
	}
	sort.Strings(uses)
	return uses
}
