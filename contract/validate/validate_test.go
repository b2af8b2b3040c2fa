package validate

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/contract"
)

func TestValidateAccepts(t *testing.T) {
	cases := []struct {
		tool string
		raw  string
		want any
	}{
		{contract.ToolSnapshot, ``, contract.SnapshotArgs{}},
		{contract.ToolSnapshot, `{}`, contract.SnapshotArgs{}},
		{contract.ToolSnapshot, `{"mode":"interactive","scope":"[12]","offset":12000}`, contract.SnapshotArgs{Mode: "interactive", Scope: "[12]", Offset: 12000}},
		{contract.ToolSnapshot, `{"find":"/^Save$/","role":"button","budget":2000}`, contract.SnapshotArgs{Find: "/^Save$/", Role: "button", Budget: 2000}},
		{contract.ToolRun, `{"actions":[{"op":"fill","id":"2","value":"{{secret:PASSWORD}}"},{"op":"click","id":"[5]","button":"left","count":2}]}`,
			contract.RunArgs{Actions: json.RawMessage(`[{"op":"fill","id":"2","value":"{{secret:PASSWORD}}"},{"op":"click","id":"[5]","button":"left","count":2}]`)}},
		{contract.ToolRun, `{"actions":[{"op":"fill","id":"2","value":""}]}`, contract.RunArgs{Actions: json.RawMessage(`[{"op":"fill","id":"2","value":""}]`)}},
		{contract.ToolRun, `{"actions":[{"op":"type","id":"2","text":"hi","delay_ms":20},{"op":"press","key":"Control+A"},{"op":"press","key":"Enter","id":"[4]"},{"op":"select","id":"3","values":["Pro"]},{"op":"check","id":"4"},{"op":"uncheck","id":"4"},{"op":"hover","id":"4"},{"op":"scroll","dy":800},{"op":"scroll","id":"9"},{"op":"goto","url":"https://example.com/"},{"op":"back"},{"op":"forward"},{"op":"reload"},{"op":"wait","text":"Saved"},{"op":"wait","ms":10000},{"op":"wait","load":true},{"op":"wait","url":"*/done"},{"op":"wait","id":"7"}]}`, nil},
		{contract.ToolRun, `{"actions":[{"op":"click","locator":{"role":"button","name":"Save"}},{"op":"fill","locator":{"label":"Email"},"value":"a@b.c"},{"op":"type","locator":{"placeholder":"Search"},"text":"x"},{"op":"check","locator":{"testid":"agree"}},{"op":"hover","locator":{"text":"Menu"}},{"op":"press","key":"Enter","locator":{"role":"textbox"}},{"op":"scroll","locator":{"text":"Footer"}},{"op":"wait","locator":{"text":"Done"}}]}`, nil},
		{contract.ToolUpload, `{"locator":{"label":"Resume"},"path":"a.txt"}`, contract.UploadArgs{Locator: &contract.Locator{Label: "Resume"}, Path: "a.txt"}},
		{contract.ToolScreenshot, `{}`, contract.ScreenshotArgs{}},
		{contract.ToolScreenshot, `{"full_page":true,"type":"jpeg","quality":70}`, contract.ScreenshotArgs{FullPage: true, Type: "jpeg", Quality: 70}},
		{contract.ToolScreenshot, `{"clip":{"x":0,"y":10.5,"width":300,"height":200}}`, contract.ScreenshotArgs{Clip: &contract.Clip{X: 0, Y: 10.5, Width: 300, Height: 200}}},
		{contract.ToolScreenshot, `{"id":"  ","selector":""}`, contract.ScreenshotArgs{ID: "  "}},
		{contract.ToolScreenshot, `{"selector":"#main > .card:nth-child(2)"}`, contract.ScreenshotArgs{Selector: "#main > .card:nth-child(2)"}},
		{contract.ToolRead, `{"what":"text"}`, contract.ReadArgs{What: "text"}},
		{contract.ToolDownloads, `{}`, contract.DownloadsArgs{}},
		{contract.ToolUpload, `{"id":"8","path":"/tmp/cv.pdf"}`, contract.UploadArgs{ID: "8", Path: "/tmp/cv.pdf"}},
		{contract.ToolRelease, " \n", contract.ReleaseArgs{}},
		{contract.ToolRelaunch, `{"stealth":true,"profile":{"name":"work.1","save":true},"headed":false}`,
			contract.RelaunchArgs{Stealth: ptrBool(true), Profile: &contract.Profile{Name: "work.1", Save: true}, Headed: ptrBool(false)}},
		{contract.ToolRequestHandoff, `{"instruction":"Solve the CAPTCHA","completion_condition":{"text":"Welcome"}}`,
			contract.HandoffArgs{Instruction: "Solve the CAPTCHA", CompletionCondition: contract.Condition{Text: "Welcome"}}},
		{contract.ToolRequestHandoff, `{"instruction":"Sign in","completion_condition":{"role":"button","name":"Sign out"},"expires_in_s":86400}`,
			contract.HandoffArgs{Instruction: "Sign in", CompletionCondition: contract.Condition{Role: "button", Name: "Sign out"}, ExpiresInS: 86400}},
		{contract.ToolRequestHandoff, `{"instruction":"Pay","completion_condition":{"url":"*/thanks"}}`,
			contract.HandoffArgs{Instruction: "Pay", CompletionCondition: contract.Condition{URL: "*/thanks"}}},
		{contract.ToolWebFetch, `{"url":"https://example.com/a?b=c","format":"raw"}`, contract.WebFetchArgs{URL: "https://example.com/a?b=c", Format: "raw"}},
		{contract.ToolWebSearch, `{"query":"temporal activities","n":25}`, contract.WebSearchArgs{Query: "temporal activities", N: 25}},
		{contract.ToolWebSearch, `{"query":"` + strings.Repeat("é", 200) + `"}`, contract.WebSearchArgs{Query: strings.Repeat("é", 200)}},
	}
	for _, c := range cases {
		t.Run(c.tool+" "+c.raw, func(t *testing.T) {
			got, f := Call(c.tool, json.RawMessage(c.raw))
			if f != nil {
				t.Fatalf("refused: %v", f)
			}
			if c.want != nil && !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %#v, want %#v", got, c.want)
			}
			if reflect.TypeOf(got).Kind() == reflect.Pointer {
				t.Fatalf("want a value, got %T", got)
			}
		})
	}
}

func TestValidateRefuses(t *testing.T) {
	long := func(n int) string { return strings.Repeat("a", n) }
	actions := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = `{"op":"back"}`
		}
		return `{"actions":[` + strings.Join(parts, ",") + `]}`
	}
	cases := []struct {
		tool string
		raw  string
		want []string // substrings of the message
	}{
		{"clickity", `{}`, []string{`unknown tool "clickity"`, "snapshot", "web_search"}},
		{contract.ToolSnapshot, `{`, []string{"snapshot: arguments are not valid JSON"}},
		{contract.ToolSnapshot, `{} {}`, []string{"not valid JSON", "extra data"}},
		{contract.ToolSnapshot, `null`, []string{"must be a JSON object", "null"}},
		{contract.ToolSnapshot, `[]`, []string{"must be a JSON object", "an array"}},
		{contract.ToolSnapshot, `{"Mode":"full"}`, []string{"snapshot.Mode: unknown field; allowed fields are budget, find, mode, offset, role, scope, since"}},
		{contract.ToolSnapshot, `{"mode":"all"}`, []string{"snapshot.mode: must be one of full, interactive"}},
		{contract.ToolSnapshot, `{"mode":null}`, []string{"snapshot.mode: must be a string", "leave the field out"}},
		{contract.ToolSnapshot, `{"offset":-1}`, []string{"snapshot.offset: must be a whole number from 0 to 10000000"}},
		{contract.ToolSnapshot, `{"offset":1.5}`, []string{"snapshot.offset: must be a whole number"}},
		{contract.ToolSnapshot, `{"offset":"3"}`, []string{"snapshot.offset: must be a whole number"}},
		{contract.ToolSnapshot, `{"offset":1e400}`, []string{"snapshot.offset"}},
		{contract.ToolSnapshot, `{"scope":"#main > a"}`, []string{"snapshot.scope: has the wrong form"}},
		{contract.ToolSnapshot, `{"since":3,"find":"Save"}`, []string{"since compares whole pages: leave out scope, offset, find and role"}},
		{contract.ToolSnapshot, `{"budget":100}`, []string{"snapshot.budget: must be a whole number from 500 to 30000"}},
		{contract.ToolSnapshot, `{"find":""}`, []string{"snapshot.find"}},
		{contract.ToolSnapshot, `{"mode":"full","mode":"interactive"}`, []string{"not valid JSON", `the field "mode" appears twice`}},
		{contract.ToolRun, `{"actions":[{"op":"click","id":"1","id":"2"}]}`, []string{`the field "id" appears twice`}},
		{contract.ToolRun, `{}`, []string{"run: give actions (a batch of actions) or code"}},
		{contract.ToolRun, `{"actions":[{"op":"back"}],"code":"1"}`, []string{"run: give either actions (a batch) or code (a code cell), not both"}},
		{contract.ToolRun, `{"actions":[{"op":"back"}],"timeout_s":5}`, []string{"run.timeout_s: only a code cell takes timeout_s"}},
		{contract.ToolRun, `{"code":"return 1","timeout_s":301}`, []string{"run.timeout_s: must be"}},
		{contract.ToolRun, `{"code":"` + strings.Repeat("é", contract.MaxCodeBytes/2+1) + `"}`, []string{"run.code: 65538 bytes, over the 65536-byte (64 KiB) source limit"}},
		{contract.ToolRun, `{"code":""}`, []string{"run.code: must not be empty"}},
		{contract.ToolRun, `{"code":"return 1","observe":true}`, []string{"run.observe: a code cell observes with page.snapshot()"}},
		{contract.ToolRun, `{"code":"return 1","observe":"interactive"}`, []string{"run.observe: a code cell observes with page.snapshot()"}},
		{contract.ToolRun, `{"actions":[{"op":"back"}],"observe":"changes"}`, []string{"run.observe: must"}},
		{contract.ToolRun, `{"actions":[{"op":"back"}],"observe":1}`, []string{"run.observe: must"}},
		{contract.ToolRun, `{"actions":[]}`, []string{"run.actions: must hold at least 1"}},
		{contract.ToolRun, actions(contract.MaxActions + 1), []string{"run.actions: must hold at most 50 items (got 51)", "split"}},
		{contract.ToolRun, `{"actions":[{"op":"type","id":"1","text":""}]}`, []string{"run.actions[0].text: must not be empty"}},
		{contract.ToolRun, `{"actions":[{"op":"fill","id":"1","value":"` + long(10000+1) + `"}]}`, []string{"run.actions[0].value: must be at most 10000 characters (got 10001)"}},
		{contract.ToolRun, `{"actions":[{"op":"goto","url":"file:///etc/passwd"}]}`, []string{"run.actions[0].url: has the wrong form"}},
		{contract.ToolRun, `{"actions":[{"op":"wait","load":false}]}`, []string{"run.actions[0].load: must be true"}},
		{contract.ToolRun, `{"actions":[{"op":"press","key":"Enter","id":"#x"}]}`, []string{"run.actions[0].id: has the wrong form"}},
		{contract.ToolRun, `{"actions":[{"op":"click","id":"5","count":2.0}]}`, []string{"run.actions[0].count: must be a whole number from 1 to 3, written without a decimal point"}},
		{contract.ToolRun, `{"actions":[{"op":"scroll","dy":1e999}]}`, []string{"run.actions[0].dy: must be a finite number"}},
		{contract.ToolSnapshot, `{"offset":1e2}`, []string{"snapshot.offset: must be a whole number from 0 to 10000000, written without"}}, {contract.ToolRun, `{"actions":[{"op":"back"},{"op":"back"},{"op":"clik","id":"1"}]}`, []string{"run.actions[2].op: must be one of click, hover, fill, type, press, select, check, uncheck, scroll, goto, back, forward, reload, wait"}},
		{contract.ToolRun, `{"actions":[{"id":"1"}]}`, []string{"run.actions[0].op: missing; it is required, one of click"}},
		{contract.ToolRun, `{"actions":["click 5"]}`, []string{`run.actions[0]: must be an object with "op" set to one of click`}},
		{contract.ToolRun, `{"actions":[{"op":"click"}]}`, []string{"run.actions[0]: missing the element: give id (from the latest snapshot) or locator"}},
		{contract.ToolRun, `{"actions":[{"op":"click","id":"5","locator":{"text":"Go"}}]}`, []string{"run.actions[0]: give id or locator, not both"}},
		{contract.ToolRun, `{"actions":[{"op":"click","locator":{"role":"button","label":"Go"}}]}`, []string{"run.actions[0].locator: must take exactly one of the forms"}},
		{contract.ToolRun, `{"actions":[{"op":"click","locator":{}}]}`, []string{"run.actions[0].locator: must take exactly one of the forms {role, name?} or {label} or {text} or {placeholder} or {testid}"}},
		{contract.ToolRun, `{"actions":[{"op":"press","key":"Enter","id":"2","locator":{"label":"Q"}}]}`, []string{"run.actions[0]: give id or locator, not both"}},
		{contract.ToolUpload, `{"path":"a.txt"}`, []string{"browser_upload: missing the element"}},
		{contract.ToolScreenshot, `{"id":"3","locator":{"text":"Chart"}}`, []string{"screenshot: give id or locator, not both"}},
		{contract.ToolRun, `{"actions":[{"op":"click","id":"5","force":true}]}`, []string{"run.actions[0].force: unknown field; allowed fields are button, count, id, locator, op"}},
		{contract.ToolRun, `{"actions":[{"op":"click","id":5}]}`, []string{"run.actions[0].id: must be a string"}},
		{contract.ToolRun, `{"actions":[{"op":"click","id":"5","count":4}]}`, []string{"run.actions[0].count: must be a whole number from 1 to 3"}},
		{contract.ToolRun, `{"actions":[{"op":"fill","id":"2"}]}`, []string{"run.actions[0].value: missing"}},
		{contract.ToolRun, `{"actions":[{"op":"select","id":"3","values":[]}]}`, []string{"run.actions[0].values: must hold at least 1"}},
		{contract.ToolRun, `{"actions":[{"op":"select","id":"3","values":[1]}]}`, []string{"run.actions[0].values[0]: must be a string"}},
		{contract.ToolRun, `{"actions":[{"op":"scroll"}]}`, []string{"run.actions[0]: give at least one of dx, dy, id"}},
		{contract.ToolRun, `{"actions":[{"op":"wait"}]}`, []string{"run.actions[0]: give exactly one of id, load, locator, ms, text, url"}},
		{contract.ToolRun, `{"actions":[{"op":"wait","text":"a","ms":5}]}`, []string{"run.actions[0]: give exactly one of"}},
		{contract.ToolRun, `{"actions":[{"op":"wait","ms":10001}]}`, []string{"run.actions[0].ms: must be a whole number from 1 to 10000"}},
		{contract.ToolRun, `{"actions":[{"op":"back","id":"1"}]}`, []string{"run.actions[0].id: unknown field; allowed fields are op"}},
		{contract.ToolScreenshot, `{"type":"gif"}`, []string{"screenshot.type: must be one of png, jpeg"}},
		{contract.ToolScreenshot, `{"quality":0}`, []string{"screenshot.quality: must be a whole number from 1 to 100"}},
		{contract.ToolScreenshot, `{"quality":50}`, []string{`screenshot.quality: quality applies to jpeg only; drop quality or set type "jpeg"`, "call screenshot again"}},
		{contract.ToolScreenshot, `{"type":"png","quality":50}`, []string{`quality applies to jpeg only; drop quality or set type "jpeg"`}},
		{contract.ToolScreenshot, `{"clip":{"x":0,"y":0,"width":10}}`, []string{"screenshot.clip.height: missing"}},
		{contract.ToolScreenshot, `{"clip":{"x":-1,"y":0,"width":10,"height":10}}`, []string{"screenshot.clip.x: must be from 0 to 100000"}},
		{contract.ToolScreenshot, `{"clip":{"x":0,"y":0,"width":10,"height":10,"z":1}}`, []string{"screenshot.clip.z: unknown field"}},
		{contract.ToolScreenshot, `{"full_page":"yes"}`, []string{"screenshot.full_page: must be true or false"}},
		{contract.ToolRead, `{"what":"pdf"}`, []string{"browser_read.what: must be one of markdown, text, html, url, title"}},
		{contract.ToolDownloads, `{"all":true}`, []string{"browser_downloads.all: unknown field; allowed fields are (none: send {})"}},
		{contract.ToolUpload, `{"id":"8"}`, []string{"browser_upload.path: missing"}},
		{contract.ToolUpload, `{}`, []string{"browser_upload.path: missing"}},
		{contract.ToolRelease, `{"force":1}`, []string{"browser_release.force: unknown field"}},
		{contract.ToolRelaunch, `{"profile":{"name":"../etc"}}`, []string{"browser_relaunch.profile.name: has the wrong form"}},
		{contract.ToolRelaunch, `{"profile":{"save":true}}`, []string{"browser_relaunch.profile.name: missing"}},
		{contract.ToolRelaunch, `{"stealth":"true"}`, []string{"browser_relaunch.stealth: must be true or false"}},
		{contract.ToolRequestHandoff, `{"instruction":"x"}`, []string{"browser_request_handoff.completion_condition: missing"}},
		{contract.ToolRequestHandoff, `{"instruction":"x","completion_condition":{}}`, []string{"browser_request_handoff.completion_condition: must take exactly one of the forms {text} or {url} or {role, name?}"}},
		{contract.ToolRequestHandoff, `{"instruction":"x","completion_condition":{"text":"a","url":"b"}}`, []string{"completion_condition: must take exactly one of the forms"}},
		{contract.ToolRequestHandoff, `{"instruction":"x","completion_condition":{"text":5}}`, []string{"browser_request_handoff.completion_condition.text: must be a string"}},
		{contract.ToolRequestHandoff, `{"instruction":"x","completion_condition":{"name":"Go"}}`, []string{"must take exactly one of the forms"}},
		{contract.ToolRequestHandoff, `{"instruction":"x","completion_condition":{"text":"a"},"expires_in_s":86401}`, []string{"browser_request_handoff.expires_in_s: must be a whole number from 1 to 86400"}},
		{contract.ToolRequestHandoff, `{"instruction":"` + long(2000+1) + `","completion_condition":{"text":"a"}}`, []string{"browser_request_handoff.instruction: must be at most 2000 characters"}},
		{contract.ToolWebFetch, `{}`, []string{"web_fetch.url: missing"}},
		{contract.ToolWebFetch, `{"url":"file:///etc/passwd"}`, []string{"web_fetch.url: has the wrong form"}},
		{contract.ToolWebFetch, `{"url":"https://a.example/","format":"pdf"}`, []string{"web_fetch.format: must be one of markdown, raw"}},
		{contract.ToolWebSearch, `{"query":""}`, []string{"web_search.query: must not be empty"}},
		{contract.ToolWebSearch, `{"query":"` + long(201) + `"}`, []string{"web_search.query: must be at most 200 characters"}},
		{contract.ToolWebSearch, `{"query":"a","n":26}`, []string{"web_search.n: must be a whole number from 1 to 25"}},
		{contract.ToolWebSearch, `{"query":"a","n":0}`, []string{"web_search.n"}},
	}
	for _, c := range cases {
		name := c.tool + " " + c.raw
		if len(name) > 80 {
			name = name[:80]
		}
		t.Run(name, func(t *testing.T) {
			got, f := Call(c.tool, json.RawMessage(c.raw))
			if f == nil {
				t.Fatalf("accepted: %#v", got)
			}
			if got != nil {
				t.Fatalf("refusal carried args %#v", got)
			}
			if f.Code != contract.CodeRefused || f.Retryable || f.Effect != contract.EffectNone {
				t.Fatalf("want a non-retryable refused failure with no effect, got %+v", f)
			}
			for _, w := range c.want {
				if !strings.Contains(f.Message, w) {
					t.Errorf("message %q lacks %q", f.Message, w)
				}
			}
		})
	}
}

// A refusal never repeats the value it refused: arguments may hold secrets.
func TestValidateNeverQuotesValues(t *testing.T) {
	const secret = "hunter2-very-secret-value"
	cases := []struct{ tool, raw string }{
		{contract.ToolRun, `{"actions":[{"op":"fill","id":"2","value":"` + secret + `","x":1}]}`},
		{contract.ToolRun, `{"actions":[{"op":"` + secret + `"}]}`},
		{contract.ToolSnapshot, `{"mode":"` + secret + `"}`},
		{contract.ToolWebFetch, `{"url":"` + secret + `"}`},
		{contract.ToolRun, `{"code":"` + secret + `","actions":[]}`},
	}
	for _, c := range cases {
		_, f := Call(c.tool, json.RawMessage(c.raw))
		if f == nil {
			t.Fatalf("%s accepted", c.raw)
		}
		if strings.Contains(f.Message, secret) || strings.Contains(f.Detail, secret) {
			t.Errorf("refusal quotes the value: %q", f.Message)
		}
	}
}

func TestValidateReportsAtMostThree(t *testing.T) {
	_, f := Call(contract.ToolSnapshot, json.RawMessage(`{"a":1,"b":2,"c":3,"d":4,"e":5}`))
	if f == nil {
		t.Fatal("accepted")
	}
	if n := strings.Count(f.Message, "unknown field"); n != schemaMaxReported {
		t.Fatalf("reported %d problems, want %d: %s", n, schemaMaxReported, f.Message)
	}
	if !strings.HasSuffix(f.Message, "Fix the arguments and call snapshot again.") {
		t.Fatalf("message does not name the fix: %s", f.Message)
	}
}

func TestValidateRefusesHugeArgs(t *testing.T) {
	raw := `{"actions":[{"op":"fill","id":"1","value":"` + strings.Repeat("a", contract.MaxArgsBytes) + `"}]}`
	if _, f := Call(contract.ToolRun, json.RawMessage(raw)); f == nil || !strings.Contains(f.Message, "byte limit") {
		t.Fatalf("got %v", f)
	}
}

// Every tool's typed args round-trip: what Validate returns, marshalled,
// validates again to the same value. This keeps the Go types and the
// schemas in step.
func TestArgsRoundTrip(t *testing.T) {
	samples := map[string]string{
		contract.ToolSnapshot:       `{"mode":"full","scope":"3","offset":1}`,
		contract.ToolRun:            `{"actions":[{"op":"click","id":"1"}]}`,
		contract.ToolScreenshot:     `{"full_page":true,"clip":{"x":1,"y":2,"width":3,"height":4},"id":"1","selector":"a","type":"jpeg","quality":5}`,
		contract.ToolRead:           `{"what":"html"}`,
		contract.ToolDownloads:      `{}`,
		contract.ToolUpload:         `{"id":"1","path":"/a"}`,
		contract.ToolCheck:          `{"url":"*/done","expect_text":"Saved","expect_locator":{"role":"heading","name":"Done"},"no_console_errors":true,"no_failed_requests":true}`,
		contract.ToolRelease:        `{}`,
		contract.ToolRelaunch:       `{"stealth":false,"profile":{"name":"p"},"headed":true}`,
		contract.ToolRequestHandoff: `{"instruction":"do","completion_condition":{"role":"button"},"expires_in_s":60}`,
		contract.ToolWebFetch:       `{"url":"http://a.example/"}`,
		contract.ToolWebSearch:      `{"query":"q","n":3}`,
	}
	for _, name := range contract.ToolNames() {
		raw, ok := samples[name]
		if !ok {
			t.Errorf("no sample for %s", name)
			continue
		}
		first, f := Call(name, json.RawMessage(raw))
		if f != nil {
			t.Fatalf("%s: %v", name, f)
		}
		b, err := json.Marshal(first)
		if err != nil {
			t.Fatal(err)
		}
		second, f := Call(name, b)
		if f != nil {
			t.Fatalf("%s: re-marshalled args %s refused: %v", name, b, f)
		}
		if !reflect.DeepEqual(first, second) {
			t.Fatalf("%s: %#v != %#v", name, first, second)
		}
	}
}

// FuzzCall feeds each tool (by index into ToolNames; past the end, an
// unknown name) arbitrary bytes. Validate never panics and answers either
// typed args or a refused failure, never both; accepted args validate again
// as marshalled.
func FuzzCall(f *testing.F) {
	index := map[string]uint8{}
	for i, n := range contract.ToolNames() {
		index[n] = uint8(i)
	}
	seeds := []struct{ name, raw string }{
		{contract.ToolSnapshot, `{"mode":"interactive"}`},
		{contract.ToolRun, `{"actions":[{"op":"click","id":"5"},{"op":"wait","ms":10}]}`},
		{contract.ToolRun, `{"code":"1+1"}`},
		{contract.ToolRun, `{"actions":[{"op":"scroll","dy":-5e2}]}`},
		{contract.ToolRun, `{"actions":[{"op":"press","key":"Enter","id":"3"},{"op":"switch_tab","tab":"t2"}]}`},
		{contract.ToolRun, `{"actions":[{"op":"wait","load":true,"load":true}]}`},
		{contract.ToolRun, `{"actions":[{"op":"click","id":"1","count":2.0},"x",{"op":"nope"},{}]}`},
		{contract.ToolRun, `{"actions":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`},
		{contract.ToolScreenshot, `{"clip":{"x":1,"y":1,"width":1,"height":1}}`},
		{contract.ToolScreenshot, `{"quality":5.0,"clip":{"x":1e-5,"y":0,"width":1E2,"height":2}}`},
		{contract.ToolScreenshot, `{"clip":{"x":1e-99999,"y":0,"width":1,"height":1}}`},
		{contract.ToolRequestHandoff, `{"instruction":"x","completion_condition":{"role":"button","name":"y"}}`},
		{contract.ToolRequestHandoff, `{"instruction":"x","completion_condition":{"text":"a","url":"b"}}`},
		{contract.ToolRelaunch, `{"profile":{"name":"a"}}`},
		{contract.ToolWebSearch, `{"query":"q","n":99999999999999999999}`},
		{contract.ToolWebFetch, `{"url":"https://a/"}`},
		{"nope", `{`},
		{contract.ToolRelease, `[`},
		{contract.ToolDownloads, "\xff"},
	}
	for _, s := range seeds {
		i, ok := index[s.name]
		if !ok {
			i = 255
		}
		f.Add(i, []byte(s.raw))
	}
	f.Fuzz(func(t *testing.T, tool uint8, raw []byte) {
		name := "no_such_tool"
		if names := contract.ToolNames(); int(tool) < len(names) {
			name = names[tool]
		}
		args, fail := Call(name, raw)
		switch {
		case fail == nil && args == nil:
			t.Fatal("neither args nor failure")
		case fail != nil && args != nil:
			t.Fatal("both args and failure")
		case fail != nil && (fail.Code != contract.CodeRefused || fail.Message == "" || fail.Retryable || fail.Effect != contract.EffectNone):
			t.Fatalf("bad failure %+v", fail)
		case fail == nil:
			if reflect.TypeOf(args).Kind() == reflect.Pointer {
				t.Fatalf("args are a pointer: %T", args)
			}
			// Accepted args are stable: they validate again as marshalled.
			b, err := json.Marshal(args)
			if err != nil {
				t.Fatal(err)
			}
			again, f2 := Call(name, b)
			if f2 != nil {
				t.Fatalf("accepted %q, but refused its own re-encoding %s: %v", raw, b, f2)
			}
			if !reflect.DeepEqual(args, again) && name != contract.ToolRun {
				t.Fatalf("%#v changed to %#v on re-encoding", args, again)
			}
		}
	})
}

// Workflow code calls Validate (the update validator, and sessions from
// before recorded-validation), so its answer must not depend on map order
// inside the schema library: the same call always gets the same message.
func TestValidateIsDeterministic(t *testing.T) {
	calls := []struct{ tool, args string }{
		{contract.ToolRun, `{"actions":[{"op":"click"},{"op":"fill","id":"x y","value":1},{"op":"nope"}],"extra":1}`},
		{contract.ToolScreenshot, `{"clip":{"x":-1},"type":"gif","quality":500,"bogus":true}`},
		{contract.ToolRequestHandoff, `{"instruction":"","completion_condition":{"text":"a","url":"b"}}`},
	}
	for _, c := range calls {
		_, first := Call(c.tool, json.RawMessage(c.args))
		if first == nil {
			t.Fatalf("%s %s should be refused", c.tool, c.args)
		}
		for range 50 {
			if _, f := Call(c.tool, json.RawMessage(c.args)); f == nil || f.Message != first.Message {
				t.Fatalf("%s: message changed between calls:\n%v\n%v", c.tool, first, f)
			}
		}
	}
}

// A check must expect something: a look alone is never a verdict.
func TestValidateCheckNeedsAnExpectation(t *testing.T) {
	for raw, want := range map[string]string{
		`{}`:                          "nothing to check",
		`{"no_console_errors":false}`: "nothing to check",
		`{"expect_id":"1","expect_locator":{"text":"a"}}`: "not both",
		`{"no_failed_requests":true}`:                     "",
		`{"expect_locator":{"testid":"x"}}`:               "",
	} {
		_, f := Call(contract.ToolCheck, json.RawMessage(raw))
		switch {
		case want == "" && f != nil:
			t.Errorf("%s refused: %v", raw, f)
		case want != "" && (f == nil || f.Code != contract.CodeRefused || !strings.Contains(f.Message, want)):
			t.Errorf("%s: got %v, want refused with %q", raw, f, want)
		}
	}
}

// observe takes true as before, or a mode.
func TestObserveModes(t *testing.T) {
	for raw, want := range map[string]contract.Observe{
		`{"actions":[{"op":"back"}]}`:                         "",
		`{"actions":[{"op":"back"}],"observe":false}`:         "",
		`{"actions":[{"op":"back"}],"observe":true}`:          contract.ObserveFull,
		`{"actions":[{"op":"back"}],"observe":"full"}`:        contract.ObserveFull,
		`{"actions":[{"op":"back"}],"observe":"interactive"}`: contract.ObserveInteractive,
	} {
		v, f := Call(contract.ToolRun, json.RawMessage(raw))
		if f != nil {
			t.Fatalf("%s: %s", raw, f.Message)
		}
		if got := v.(contract.RunArgs).Observe; got != want {
			t.Errorf("%s: observe %q, want %q", raw, got, want)
		}
	}
	// Written as before for full mode; read back the same.
	for o, want := range map[contract.Observe]string{"": `{}`, contract.ObserveFull: `{"observe":true}`, contract.ObserveInteractive: `{"observe":"interactive"}`} {
		b, err := json.Marshal(contract.RunArgs{Observe: o})
		if err != nil || string(b) != want {
			t.Errorf("%q: %s %v, want %s", o, b, err, want)
		}
		var back contract.RunArgs
		if err := json.Unmarshal(b, &back); err != nil || back.Observe != o {
			t.Errorf("%s: read back %q %v", b, back.Observe, err)
		}
	}
}

func ptrBool(b bool) *bool { return &b }

// A caller editing what Definitions returned changes nothing validation
// holds calls to.
func TestCallIgnoresEditedDefinitions(t *testing.T) {
	a := contract.Definitions()
	a[0].Schema[0] = 'X'
	a[0].Name = "changed"
	if _, f := Call(contract.ToolSnapshot, nil); f != nil {
		t.Fatalf("validation disturbed by a caller's edit: %v", f)
	}
}
