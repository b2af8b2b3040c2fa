package contract

import (
	"regexp"
	"strings"
	"testing"
)

// The DESIGN tool table: each tool's activity and replay class.
var designTable = map[string]struct {
	activity string
	class    ReplayClass
}{
	ToolSnapshot:       {ActivitySnapshot, ClassRead},
	ToolRun:            {ActivityRun, ClassEffect},
	ToolScreenshot:     {ActivityScreenshot, ClassRead},
	ToolRead:           {ActivityRead, ClassRead},
	ToolDownloads:      {ActivityDownloads, ClassRead},
	ToolUpload:         {ActivityUpload, ClassEffect},
	ToolCheck:          {ActivityCheck, ClassRead},
	ToolRelease:        {ActivityRelease, ClassCustody},
	ToolRelaunch:       {ActivityRelaunch, ClassCustody},
	ToolRequestHandoff: {ActivityNotify, ClassHuman},
	ToolWebFetch:       {ActivityWebFetch, ClassRead},
	ToolWebSearch:      {ActivityWebSearch, ClassRead},
}

var knownActivities = map[string]bool{
	ActivitySnapshot: true, ActivityRun: true, ActivityScreenshot: true, ActivityRead: true,
	ActivityDownloads: true, ActivityUpload: true, ActivityCheck: true, ActivityRelease: true, ActivityRelaunch: true,
	ActivityCreate: true, ActivityReconcile: true, ActivityNotify: true, ActivityWebFetch: true,
	ActivityWebSearch: true, ActivityEvidence: true,
}

var knownClasses = map[ReplayClass]bool{ClassRead: true, ClassEffect: true, ClassCustody: true, ClassHuman: true}

func TestDefinitionsMatchDesign(t *testing.T) {
	defs := Definitions()
	if len(defs) != len(designTable) {
		t.Fatalf("%d tools, want %d", len(defs), len(designTable))
	}
	// Both APIs limit names to this form (Anthropic allows 128, OpenAI 64).
	nameForm := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	seen := map[string]bool{}
	for _, d := range defs {
		if seen[d.Name] {
			t.Errorf("%s listed twice", d.Name)
		}
		seen[d.Name] = true
		want, ok := designTable[d.Name]
		if !ok {
			t.Errorf("%s is not in the design table", d.Name)
			continue
		}
		if !knownActivities[d.Activity] || d.Activity != want.activity {
			t.Errorf("%s: activity %q, want %q", d.Name, d.Activity, want.activity)
		}
		if !knownClasses[d.Class] || d.Class != want.class {
			t.Errorf("%s: class %q, want %q", d.Name, d.Class, want.class)
		}
		if !nameForm.MatchString(d.Name) {
			t.Errorf("%s: name not accepted by model APIs", d.Name)
		}
		// Short, and a sentence about purpose rather than a field list.
		if n := len(d.Description); n < 60 || n > 700 {
			t.Errorf("%s: description is %d characters; keep it 60-700", d.Name, n)
		}
		if !strings.HasSuffix(d.Description, ".") {
			t.Errorf("%s: description should end in a full stop", d.Name)
		}
		if _, ok := newArgs(d.Name); !ok {
			t.Errorf("%s: no argument type", d.Name)
		}
		if got, ok := Lookup(d.Name); !ok || got.Name != d.Name {
			t.Errorf("Lookup(%s) failed", d.Name)
		}
	}
	if _, ok := Lookup("nope"); ok {
		t.Error("Lookup found an unknown tool")
	}
}

func TestDefinitionsReturnsCopies(t *testing.T) {
	a := Definitions()
	a[0].Schema[0] = 'X'
	a[0].Name = "changed"
	b := Definitions()
	if b[0].Schema[0] != '{' || b[0].Name == "changed" {
		t.Fatal("Definitions shares its storage with callers")
	}
}
