package workflows

import (
	"os/exec"
	"strings"
	"testing"
)

// What an orchestrator imports stays light: the contract, the workflow API
// and the client never link a browser engine, an AWS SDK, the Temporal
// server or the HTML converter. The contract and the tag rules, which
// workflow code calls, go further: they may use only the standard library,
// and the validator only the schema library besides. The client, which the
// durable-browser CLI links for every call, links neither the workflow code
// nor what it alone needs: the schema library compiles its meta-schemas at
// initialisation, at every start of every program that links it
// (docs/benchmarks.md, "Starting the CLI").
func TestImportsStayLight(t *testing.T) {
	const mod = "github.com/durable-browser/durable-browser/"
	forbidden := []string{
		"github.com/go-rod/",
		"github.com/aws/",
		"go.temporal.io/server",
		"github.com/temporalio/ui-server",
		"github.com/JohannesKaufmann/html-to-markdown",
		mod + "activities",
		mod + "internal/driver",
		mod + "providers",
	}
	// only, when set, lists every non-standard dependency a package may
	// have; not lists more it may not have.
	tests := []struct {
		pkg  string
		only []string
		not  []string
	}{
		{pkg: "contract", only: []string{mod + "contract"}},
		{pkg: "contract/validate", only: []string{mod + "contract", "github.com/santhosh-tekuri/jsonschema/v6", "golang.org/x/text/"}},
		{pkg: "internal/tags", only: []string{mod + "internal/tags"}},
		{pkg: "workflows"},
		{pkg: "client", not: []string{mod + "workflows", mod + "contract/validate", "github.com/santhosh-tekuri/", "github.com/tyler-smith/go-bip39"}},
		{pkg: "cmd/durable-browser", not: []string{mod + "workflows", mod + "contract/validate", "github.com/santhosh-tekuri/", "github.com/tyler-smith/go-bip39"}},
	}
	for _, tt := range tests {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", mod+tt.pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", tt.pkg, err, out)
		}
		deps := strings.Fields(string(out))
		if len(deps) == 0 {
			t.Fatalf("go list -deps %s listed nothing", tt.pkg)
		}
		for _, d := range deps {
			for _, f := range tt.not {
				if strings.HasPrefix(d, f) {
					t.Errorf("%s depends on %s: every start of the CLI would initialise it; use what contract holds instead", tt.pkg, d)
				}
			}
			for _, f := range forbidden {
				if strings.HasPrefix(d, f) {
					t.Errorf("%s depends on %s: an orchestrator importing it would link it; keep it behind an activity name", tt.pkg, d)
				}
			}
			if tt.only != nil && !hasPrefix(d, tt.only) {
				t.Errorf("%s depends on %s: it may use only the standard library and %v", tt.pkg, d, tt.only[1:])
			}
		}
	}
}

func hasPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// layers ranks the module's packages as docs/architecture.md draws them: a
// package imports only packages of its own layer or one below (a higher
// number is a higher layer). The commands' own helpers live under cmd/.
var layers = []struct {
	prefix string
	rank   int
}{
	{"cmd/", 6}, {"deploy", 6}, {"scripts/", 6},
	{"worker", 5}, {"mcpserver", 5}, {"demo", 5},
	{"activities", 4}, {"client", 4},
	{"providers", 3}, {"workflows", 3},
	{"internal/", 2},
	{"contract", 1},
}

func layerOf(rel string) (int, bool) {
	for _, l := range layers {
		if rel == strings.TrimSuffix(l.prefix, "/") || strings.HasPrefix(rel, strings.TrimSuffix(l.prefix, "/")+"/") {
			return l.rank, true
		}
	}
	return 0, false
}

// TestNoImportGoesBackUp reads every package's imports (not its tests')
// with go list and fails on one that reaches a higher layer.
func TestNoImportGoesBackUp(t *testing.T) {
	const mod = "github.com/durable-browser/durable-browser/"
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, mod+"...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		from := strings.TrimPrefix(f[0], mod)
		if strings.HasPrefix(from, "test/") || from == "test" {
			continue // the end-to-end tests stand above everything
		}
		rank, ok := layerOf(from)
		if !ok {
			t.Errorf("package %s is in no layer: place it in docs/architecture.md and in layers", from)
			continue
		}
		checked++
		for _, imp := range f[1:] {
			if !strings.HasPrefix(imp, mod) {
				continue
			}
			to := strings.TrimPrefix(imp, mod)
			if r, ok := layerOf(to); ok && r > rank {
				t.Errorf("%s imports %s, a layer above it", from, to)
			}
		}
	}
	if checked < 20 {
		t.Fatalf("checked only %d packages", checked)
	}
}
