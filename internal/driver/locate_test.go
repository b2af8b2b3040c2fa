package driver

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/contract"
)

// runErr runs a batch that must fail and returns its error.
func runErr(t *testing.T, b *Browser, js string) (*contract.RunResult, error) {
	t.Helper()
	acts, err := ParseActions(json.RawMessage(js))
	if err != nil {
		t.Fatalf("parse %s: %v", js, err)
	}
	res, err := b.Run(ctxT(t), acts, RunOptions{})
	if err == nil {
		t.Fatalf("run %s: no error", js)
	}
	return res, err
}

func TestLocatorsActWithoutASnapshot(t *testing.T) {
	b := attach(t, Options{})
	gotoPage(t, b, siteURL+"/form.html")
	before := len(site.Submissions())
	// No snapshot was taken: each locator is found on the page as it is.
	res := mustRun(t, b, `[{"op":"fill","locator":{"label":"email"},"value":"ada@example.com"},
		{"op":"select","locator":{"label":"Plan"},"values":["Pro"]},
		{"op":"check","locator":{"role":"checkbox","name":"I agree"}},
		{"op":"type","locator":{"role":"textbox","name":"Notes"},"text":"via locators"},
		{"op":"click","locator":{"testid":"signup-submit"}},
		{"op":"wait","text":"Submission received"}]`)
	if res.Completed != 6 {
		t.Fatalf("run: %+v", res)
	}
	subs := site.Submissions()
	if len(subs) != before+1 {
		t.Fatalf("submissions: %d new, want 1", len(subs)-before)
	}
	got := subs[len(subs)-1].Fields
	for k, v := range map[string]string{"email": "ada@example.com", "plan": "pro", "agree": "yes", "notes": "via locators"} {
		if got[k] != v {
			t.Errorf("field %s = %q, want %q", k, got[k], v)
		}
	}
	gotoPage(t, b, siteURL+"/form.html")
	mustRun(t, b, `[{"op":"fill","locator":{"placeholder":"you@example"},"value":"by placeholder"}]`)
	if v := evalIn(t, b, `document.querySelector("[name=email]").value`); v != "by placeholder" {
		t.Fatalf("placeholder locator filled %q", v)
	}
}

func TestLocatorOneMatchActsElseRefusesWithCandidates(t *testing.T) {
	b := attach(t, Options{})
	gotoPage(t, b, siteURL+"/big.html")
	// "Field 7" names one field whole, and "Field 70".."Field 79" in part:
	// the whole match acts.
	mustRun(t, b, `[{"op":"fill","locator":{"label":"Field 7"},"value":"seven"}]`)
	if v := evalIn(t, b, `document.querySelector("[name=f7]").value+"|"+document.querySelector("[name=f70]").value`); v != "seven|" {
		t.Fatalf("fields 7|70 = %q", v)
	}

	// Several: refused before acting, with bounded candidates and their ids.
	res, err := runErr(t, b, `[{"op":"click","locator":{"role":"button"}}]`)
	var ae *ActionError
	var le *LocatorError
	if !errors.As(err, &ae) || ae.Kind != KindLocator || !errors.As(err, &le) || le.Found != 150 || len(le.Candidates) != maxCandidates {
		t.Fatalf("ambiguous locator: %v", err)
	}
	if res.Completed != 0 || !strings.Contains(err.Error(), "and 142 more") || !strings.Contains(err.Error(), `button "Act 1"`) {
		t.Fatalf("refusal %v, result %+v", err, res)
	}
	// A candidate's id can be used as it is, with no snapshot in between.
	id := regexp.MustCompile(`\[(\d+)\] button "Act 2"`).FindStringSubmatch(err.Error())
	if id == nil {
		t.Fatalf("no id for Act 2 in %v", err)
	}
	mustRun(t, b, fmt.Sprintf(`[{"op":"hover","id":"%s"}]`, id[1]))
	if s := snap(t, b, SnapshotOptions{Mode: "interactive", Role: "button", Find: "/^Act 2$/"}); idOf(t, s.Text, `button "Act 2"`) != id[1] {
		t.Fatalf("snapshot gives Act 2 another id than the locator's [%s]", id[1])
	}

	// None: refused, saying so; an earlier action of the batch ran.
	res, err = runErr(t, b, `[{"op":"fill","locator":{"label":"Field 1"},"value":"one"},{"op":"click","locator":{"text":"No such thing"}}]`)
	if !errors.As(err, &le) || le.Found != 0 || !strings.Contains(err.Error(), "matches no visible element") || res.Completed != 1 {
		t.Fatalf("missing locator: %v, %+v", err, res)
	}
	// Hidden elements do not match.
	evalIn(t, b, `document.querySelector("[name=f150]").style.display="none",""`)
	if _, err = runErr(t, b, `[{"op":"fill","locator":{"label":"Field 150"},"value":"x"}]`); !errors.As(err, &le) || le.Found != 0 {
		t.Fatalf("hidden field matched: %v", err)
	}
}

func TestWaitForLocator(t *testing.T) {
	b := attach(t, Options{})
	gotoPage(t, b, siteURL+"/form.html")
	evalIn(t, b, `setTimeout(()=>{const x=document.createElement("button");x.textContent="Late";document.body.append(x)},300),""`)
	mustRun(t, b, `[{"op":"wait","locator":{"role":"button","name":"Late"}},{"op":"click","locator":{"text":"Late"}}]`)
}

func TestScreenshotByLocator(t *testing.T) {
	b := attach(t, Options{})
	gotoPage(t, b, siteURL+"/form.html")
	shot, err := b.Screenshot(ctxT(t), ScreenshotOptions{Locator: &contract.Locator{Role: "button", Name: "Create account"}})
	if err != nil || shot.Region.Width <= 0 || shot.Region.Width > 400 {
		t.Fatalf("element screenshot: %+v, %v", shot, err)
	}
	var le *LocatorError
	if _, err := b.Screenshot(ctxT(t), ScreenshotOptions{Locator: &contract.Locator{Role: "textbox"}}); !errors.As(err, &le) || le.Found < 2 {
		t.Fatalf("ambiguous screenshot locator: %v", err)
	}
}
