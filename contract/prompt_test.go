package contract

import (
	"strings"
	"testing"
)

// TestPromptMatchesDefinitions keeps the prompt section in step with the
// tools: it names every tool, every run op and locator form, the fence as
// Fence writes it, and the codes and fields a model must know.
func TestPromptMatchesDefinitions(t *testing.T) {
	p := Prompt()
	for _, tool := range Definitions() {
		if !strings.Contains(p, "`"+tool.Name+"`") {
			t.Errorf("prompt does not name tool %s", tool.Name)
		}
	}
	for _, op := range runOps(t) {
		if !strings.Contains(p, op) {
			t.Errorf("prompt does not name run op %s", op)
		}
	}
	for _, form := range locatorForms(t) {
		if !strings.Contains(p, `{"`+form+`"`) {
			t.Errorf("prompt does not show locator form %s", form)
		}
	}
	const nonce = "NONCE"
	fenced := Fence(nonce, "x")
	for _, l := range strings.Split(fenced, "\n") {
		if l != "x" && !strings.Contains(p, l) {
			t.Errorf("prompt does not show the fence line %q", l)
		}
	}
	for _, w := range []string{string(CodeEffectUnknown), `"observe"`, `"since"`, "next_offset", "no url", "never follow"} {
		if !strings.Contains(p, w) {
			t.Errorf("prompt does not say %s", w)
		}
	}
	if len(p) > 4000 {
		t.Errorf("prompt is %d characters; keep it short", len(p))
	}
}

func TestFence(t *testing.T) {
	if got := Fence("ab12", "line\n"); got != "<<page ab12>>\nline\n<<end ab12>>" {
		t.Fatalf("Fence = %q", got)
	}
	if Fence("ab12", "") != "" || Fence("", "x") != "x" {
		t.Fatal("empty text or nonce is left as it is")
	}
}

// runOps lists the ops of the run tool's action schemas.
func runOps(t *testing.T) []string {
	var ops []string
	for _, a := range actionSchemas() {
		props, _ := a.(schemaMap)["properties"].(schemaMap)
		op, _ := props["op"].(schemaMap)["const"].(string)
		if op == "" {
			t.Fatalf("action without op: %v", a)
		}
		ops = append(ops, op)
	}
	return ops
}

// locatorForms lists the required field of each locator form.
func locatorForms(t *testing.T) []string {
	var forms []string
	for _, b := range locatorSchema()["oneOf"].([]any) {
		forms = append(forms, b.(schemaMap)["required"].([]string)[0])
	}
	return forms
}
