package workflows

import (
	"os/exec"
	"strings"
	"testing"
)

// What an orchestrator imports stays light: the contract, the workflow API
// and the client never link a browser engine, an AWS SDK, the Temporal
// server or the HTML converter.
func TestImportsStayLight(t *testing.T) {
	forbidden := []string{
		"github.com/go-rod/",
		"github.com/aws/",
		"go.temporal.io/server",
		"github.com/temporalio/ui-server",
		"github.com/JohannesKaufmann/html-to-markdown",
		"github.com/durable-browser/durable-browser/activities",
		"github.com/durable-browser/durable-browser/internal/driver",
		"github.com/durable-browser/durable-browser/providers",
	}
	const mod = "github.com/durable-browser/durable-browser/"
	for _, pkg := range []string{"contract", "workflows", "client"} {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", mod+pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		deps := strings.Fields(string(out))
		if len(deps) == 0 {
			t.Fatalf("go list -deps %s listed nothing", pkg)
		}
		for _, d := range deps {
			for _, f := range forbidden {
				if strings.HasPrefix(d, f) {
					t.Errorf("%s depends on %s: an orchestrator importing it would link it; keep it behind an activity name", pkg, d)
				}
			}
		}
		if pkg == "contract" {
			for _, d := range deps {
				if !strings.HasPrefix(d, mod) && !strings.HasPrefix(d, "github.com/santhosh-tekuri/jsonschema") && !strings.HasPrefix(d, "golang.org/x/text") {
					t.Errorf("contract depends on %s: it may use only the standard library and the schema validator", d)
				}
			}
		}
	}
}
