package workflows

import (
	"os/exec"
	"strings"
	"testing"
)

// What an orchestrator imports stays light: the contract, the workflow API
// and the client never link a browser engine, an AWS SDK, the Temporal
// server or the HTML converter. The contract and the tag rules, which
// workflow code calls, go further: the contract may use only the standard
// library and the schema validator, the tags only the standard library.
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
	// only, when set, lists every non-standard dependency a package may have.
	tests := []struct {
		pkg  string
		only []string
	}{
		{pkg: "contract", only: []string{mod + "contract", "github.com/santhosh-tekuri/jsonschema/v6", "golang.org/x/text/"}},
		{pkg: "internal/tags", only: []string{mod + "internal/tags"}},
		{pkg: "workflows"},
		{pkg: "client"},
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
