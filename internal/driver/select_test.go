package driver

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const selectsPage = `<!doctype html><title>Selects</title><main>
<label>Toppings <select name="top" multiple>
<option>Cheese</option><option selected>Ham</option><option>Olives</option><option selected>Onion</option>
</select></label>
<label>None yet <select name="none" multiple><option>A</option><option>B</option></select></label>
<label>Size <select name="size" size="3"><option>S</option><option selected>M</option><option>L</option></select></label>
<label>Plan <select name="plan"><option>Basic</option><option selected>Pro</option></select></label>
</main>`

// TestMultipleSelectShowsSelected: a <select multiple> says every option
// selected (selected=[...], selected=[] for none) in both modes, as a
// single select says its value; a run's select picks several options of a
// multiple select (and the snapshot then shows them), while a single select
// refuses more than one.
func TestMultipleSelectShowsSelected(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, selectsPage)
	}))
	defer srv.Close()
	b := attach(t, Options{})
	gotoPage(t, b, srv.URL+"/")

	// The interactive listing leaves out a role the line above has (a
	// listbox under a listbox), so the lines are matched from the name on.
	want := []string{
		`] listbox "Toppings" multiselectable selected=["Ham","Onion"] options=["Cheese","Ham","Olives","Onion"]`,
		` "None yet" multiselectable selected=[] options=["A","B"]`,
		` "Size" value="M" options=["S","M","L"]`,
		`] combobox "Plan" value="Pro" options=["Basic","Pro"]`,
	}
	for _, mode := range []string{"full", "interactive"} {
		s := snap(t, b, SnapshotOptions{Mode: mode})
		for _, w := range want {
			if !strings.Contains(s.Text, w) {
				t.Errorf("%s snapshot lacks %s:\n%s", mode, w, s.Text)
			}
		}
	}

	s := snap(t, b, SnapshotOptions{Mode: "interactive"})
	top, plan := idOf(t, s.Text, `"Toppings"`), idOf(t, s.Text, `"Plan"`)
	res := mustRun(t, b, fmt.Sprintf(`[{"op":"select","id":%q,"values":["Cheese","Olives","Onion"]}]`, top))
	if res.Failed != nil || res.Completed != 1 {
		t.Fatalf("select three of a multiple select: %+v", res)
	}
	if got := evalIn(t, b, `[...document.querySelector("select[name=top]").selectedOptions].map(o=>o.text).join(",")`); got != "Cheese,Olives,Onion" {
		t.Fatalf("selected after the run: %q, want Cheese,Olives,Onion", got)
	}
	s = snap(t, b, SnapshotOptions{Mode: "interactive"})
	if w := `selected=["Cheese","Olives","Onion"]`; !strings.Contains(s.Text, w) {
		t.Errorf("snapshot after selecting lacks %s:\n%s", w, s.Text)
	}

	acts, err := ParseActions([]byte(fmt.Sprintf(`[{"op":"select","id":%q,"values":["Basic","Pro"]}]`, plan)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Run(ctxT(t), acts, RunOptions{}); err == nil || !strings.Contains(err.Error(), "takes one value") {
		t.Fatalf("two values for a single select: %v, want a refusal saying it takes one", err)
	}
}

// TestRenderSelectedBound: a multiple select with more than 12 options
// selected shows the first 12 and how many more.
func TestRenderSelectedBound(t *testing.T) {
	sl := make([]string, 12)
	for i := range sl {
		sl[i] = fmt.Sprintf("%q", fmt.Sprint("o", i+1))
	}
	full, _ := renderWalk(t, `{"u":"http://h.test/","c":[{"r":"listbox","n":"Many","i":1,"f":["multiselectable"],"no":20,"ns":15,"sl":[`+strings.Join(sl, ",")+`]}]}`)
	if w := `[1] listbox "Many" multiselectable selected=[` + strings.Join(sl, ",") + `,+3 more]` + "\n"; full != w {
		t.Fatalf("got  %q\nwant %q", full, w)
	}
}
