package test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	dbclient "github.com/durable-browser/durable-browser/client"
	"github.com/google/uuid"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/demosite"
	"github.com/durable-browser/durable-browser/internal/redact"
	"github.com/durable-browser/durable-browser/test/harness"
	"github.com/durable-browser/durable-browser/workflows"
)

// code is a run call holding a code cell.
func code(src string) map[string]any { return map[string]any{"code": src} }

// pageTable is the cell that pages through the demo site's orders table,
// emitting every row as the snapshot names it.
const pageTable = `
await page.goto(%q);
for (;;) {
  const s = await page.snapshot();
  for (const m of s.text.matchAll(/row "(A-\d+[^"]*)"/g)) emit(m[1]);
  const next = s.text.match(/\[(\d+)\] link "Next"/);
  if (!next) break;
  await page.click(next[1]);
}
return "unreachable with emits";`

// A cell pages through the whole table in one call and emits every row.
func TestCellPagesTable(t *testing.T) {
	env.StartWorker(t, harness.WorkerOptions{})
	s := newSession(t, workflows.SessionConfig{})
	var res contract.RunResult
	s.must("run", code(fmt.Sprintf(pageTable, env.Demo.URL()+"/table")), &res)
	var rows []string
	if err := json.Unmarshal(res.Output, &rows); err != nil {
		t.Fatalf("output %s: %v", res.Output, err)
	}
	want := demosite.TableRows()
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d: %q", len(rows), len(want), rows)
	}
	for i, w := range want {
		if !strings.HasPrefix(rows[i], w.Order) || !strings.Contains(rows[i], w.Customer) || !strings.Contains(rows[i], w.City) {
			t.Fatalf("row %d is %q, want %+v", i, rows[i], w)
		}
	}
	// goto, then a snapshot per page and a click per Next.
	pages := demosite.TablePages
	if wantCalls := 1 + pages + (pages - 1); res.PageCalls == nil || *res.PageCalls != (contract.PageCalls{Made: wantCalls, Completed: wantCalls}) {
		t.Fatalf("page calls %+v, want %d made and completed", res.PageCalls, wantCalls)
	}
	if res.Title != fmt.Sprintf("Orders · page %d of %d", pages, pages) {
		t.Fatalf("title after the cell: %q", res.Title)
	}
}

// A cell branches on the page's state: what it finds decides what it does.
func TestCellBranches(t *testing.T) {
	env.StartWorker(t, harness.WorkerOptions{})
	s := newSession(t, workflows.SessionConfig{})
	src := `
await page.goto(%q);
const title = await page.title();
const s = await page.snapshot({mode: "interactive"});
const next = s.text.match(/\[(\d+)\] link "Next"/);
if (next) {
  await page.click(next[1]);
  return {went: "next", title: await page.title(), url: await page.url()};
}
const back = s.text.match(/\[(\d+)\] link "Previous"/);
return {went: "stayed", title, href: await page.attr(back[1], "href")};`
	var first, last contract.RunResult
	s.must("run", code(fmt.Sprintf(src, env.Demo.URL()+"/table?page=1")), &first)
	s.must("run", code(fmt.Sprintf(src, env.Demo.URL()+"/table?page=4")), &last)
	var a, b map[string]string
	_ = json.Unmarshal(first.Output, &a)
	_ = json.Unmarshal(last.Output, &b)
	if a["went"] != "next" || a["title"] != "Orders · page 2 of 4" || !strings.HasSuffix(a["url"], "/table?page=[redacted]") {
		t.Fatalf("on page 1 the cell should go next: %s", first.Output)
	}
	if b["went"] != "stayed" || b["title"] != "Orders · page 4 of 4" || b["href"] != "/table?page=3" {
		t.Fatalf("on the last page the cell should stay: %s", last.Output)
	}
}

// Each limit is refused with a message naming it, and the counts say how
// far the cell got; nothing of the host is reachable.
func TestCellLimits(t *testing.T) {
	env.StartWorker(t, harness.WorkerOptions{})
	s := newSession(t, workflows.SessionConfig{})
	home := env.Demo.URL() + "/"
	s.must("run", actions(map[string]any{"op": "goto", "url": home}), nil)

	t.Run("26th page call", func(t *testing.T) {
		f := s.failure("run", code(`for (let i = 0; i < 30; i++) { try { await page.url() } catch (e) {} }`))
		if f.Code != contract.CodeRefused || !strings.Contains(f.Message, "limit of 25 page calls") ||
			f.PageCalls == nil || *f.PageCalls != (contract.PageCalls{Made: 25, Completed: 25}) {
			t.Fatalf("%+v", f)
		}
	})
	t.Run("endless loop", func(t *testing.T) {
		start := time.Now()
		f := s.failure("run", map[string]any{"code": `await page.url(); await page.title(); while (true) {}`, "timeout_s": 3})
		if f.Code != contract.CodeTimeout || !strings.Contains(f.Message, "deadline") || f.PageCalls == nil || f.PageCalls.Completed != 2 {
			t.Fatalf("%+v", f)
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Fatalf("the endless loop ran %s past a 3 s deadline", d)
		}
	})
	t.Run("oversized output", func(t *testing.T) {
		f := s.failure("run", code(`await page.url(); for (let i = 0; i < 100; i++) emit("x".repeat(1000))`))
		if f.Code != contract.CodeRefused || !strings.Contains(f.Message, "64 KiB") || f.PageCalls == nil || f.PageCalls.Completed != 1 {
			t.Fatalf("%+v", f)
		}
	})
	t.Run("oversized source", func(t *testing.T) {
		f := s.failure("run", code("//"+strings.Repeat("x", 70000)))
		if f.Code != contract.CodeRefused || !strings.Contains(f.Message, "run.code: must be at most 65536 characters") {
			t.Fatalf("%+v", f)
		}
	})
	for _, src := range []string{
		`require('fs')`,
		`await fetch('` + home + `')`,
		`await import('fs')`,
		`eval("require('child_process')")`,
		`new Function("return fetch")()("` + home + `")`,
		`(function(){}).constructor("return process")().exit(1)`,
	} {
		t.Run(src, func(t *testing.T) {
			f := s.failure("run", code(`await page.url(); `+src))
			// import() does not even parse: no page call runs.
			if f.Code != contract.CodeCodeError || f.PageCalls == nil || f.PageCalls.Completed > 1 {
				t.Fatalf("%+v", f)
			}
		})
	}
	t.Run("stale id caught", func(t *testing.T) {
		var res contract.RunResult
		s.must("run", code(`
await page.goto(`+fmt.Sprintf("%q", home)+`);
const s = await page.snapshot();
const about = s.text.match(/\[(\d+)\] link "About"/)[1];
await page.click(about);
try { await page.click(about) } catch (e) { return {code: e.code, name: e.name} }`), &res)
		if string(res.Output) != `{"code":"stale_snapshot","name":"PageError"}` || *res.PageCalls != (contract.PageCalls{Made: 4, Completed: 3, Failed: 1}) {
			t.Fatalf("output %s calls %+v", res.Output, res.PageCalls)
		}
	})
	t.Run("thrown error", func(t *testing.T) {
		f := s.failure("run", code("await page.url();\nthrow new Error('no rows found')"))
		if f.Code != contract.CodeCodeError || !strings.Contains(f.Message, "no rows found") || !strings.Contains(f.Detail, "cell.js:2") {
			t.Fatalf("%+v", f)
		}
	})
}

// A secret filled from a cell reaches the page, and no history event, log
// line or result; the cell itself only ever sees it redacted.
func TestCellSecretNeverLeaves(t *testing.T) {
	const secret = "c3ll-Secret-Passphrase-77"
	t.Setenv("DURABLE_BROWSER_SECRET_CELL_NAME", secret)
	t.Setenv("DURABLE_BROWSER_SECRET_CELL_NAME_ORIGINS", redact.OriginOf(env.Demo.URL()))
	env.StartWorker(t, harness.WorkerOptions{})
	s := newSession(t, workflows.SessionConfig{})
	before := len(env.Demo.Submissions())
	var res contract.RunResult
	s.must("run", code(fmt.Sprintf(`
await page.goto(%q);
let s = await page.snapshot();
const id = (label) => s.text.match(new RegExp("\\[(\\d+)\\] " + label))[1];
await page.fill(id('textbox "Email"'), "cell@example.com");
await page.fill(id('textbox "Name"'), "{{secret:CELL_NAME}}");
const seen = await page.attr(id('textbox "Name"'), "value");
console.log("typed", seen, seen.split("").reverse().join(""));
let evalRefused = "";
try { await page.eval(() => document.querySelector("input[name=name]").value) } catch (e) { evalRefused = e.code }
await page.click(id('button "Create account"'));
await page.wait("Thanks");
return {seen, evalRefused, text: (await page.snapshot()).text};`, env.Demo.URL()+"/")), &res)
	subs := env.Demo.Submissions()[before:]
	if len(subs) != 1 || subs[0].Fields["name"] != secret {
		t.Fatalf("the page should have received the secret; got %+v", subs)
	}
	var out struct{ Seen, EvalRefused, Text string }
	_ = json.Unmarshal(res.Output, &out)
	if out.Seen != "[redacted]" || out.EvalRefused != string(contract.CodeRefused) {
		t.Fatalf("the cell should see the secret redacted and page.eval refused: %s", res.Output)
	}
	raw, _ := json.Marshal(res)
	reversed := []rune(secret)
	for i, j := 0, len(reversed)-1; i < j; i, j = i+1, j-1 {
		reversed[i], reversed[j] = reversed[j], reversed[i]
	}
	for _, v := range []string{secret, string(reversed)} {
		if strings.Contains(string(raw), v) {
			t.Fatalf("the result holds the secret: %s", raw)
		}
		if strings.Contains(historyJSON(t, s.id), v) {
			t.Fatal("the secret is in the workflow history")
		}
		if strings.Contains(env.Log.String(), v) {
			t.Fatal("the secret is in the worker log")
		}
	}
}

// Code a cell started in the page earlier cannot read a secret typed later
// and hand it back re-spelled: once page.eval ran in a session, typing a
// secret is refused there, in the same cell, in a later cell and in a
// batch, and no spelling of it (plain, reversed, dotted) reaches the
// result, the history or the log.
func TestCellPageCodeThenSecretRefused(t *testing.T) {
	const secret = "c3ll-Spelled-Passphrase-91"
	t.Setenv("DURABLE_BROWSER_SECRET_CELL_PW", secret)
	t.Setenv("DURABLE_BROWSER_SECRET_CELL_PW_ORIGINS", redact.OriginOf(env.Demo.URL()))
	env.StartWorker(t, harness.WorkerOptions{})
	s := newSession(t, workflows.SessionConfig{})
	const nameID = `const s = await page.snapshot(); const id = s.text.match(/\[(\d+)\] textbox "Name"/)[1];`
	var first contract.RunResult
	s.must("run", code(fmt.Sprintf(`
await page.goto(%q);
`+nameID+`
// Page code that outlives the eval: it re-spells the field into the title.
await page.eval(() => { setInterval(() => {
  const v = document.querySelector("input[name=name]").value;
  if (v) document.title = v.split("").reverse().join("") + " " + v.split("").join(".");
}, 10) });
let refused = "";
try { await page.fill(id, "{{secret:CELL_PW}}") } catch (e) { refused = e.code + ": " + e.message }
await page.wait(300);
return {refused, title: await page.title(), value: await page.attr(id, "value")};`, env.Demo.URL()+"/")), &first)
	var out struct{ Refused, Title, Value string }
	_ = json.Unmarshal(first.Output, &out)
	if !strings.HasPrefix(out.Refused, string(contract.CodeRefused)+":") || !strings.Contains(out.Refused, "page.eval") || out.Value != "" {
		t.Fatalf("the fill after page.eval should be refused, naming why, and type nothing: %s", first.Output)
	}
	// In a later cell, and in a batch, the same.
	var second contract.RunResult
	s.must("run", code(nameID+`
try { await page.fill(id, "{{secret:CELL_PW}}"); return "typed" } catch (e) { return e.code }`), &second)
	if string(second.Output) != `"refused"` {
		t.Fatalf("a later cell typed the secret: %s", second.Output)
	}
	var snap contract.SnapshotResult
	s.must("snapshot", map[string]any{}, &snap)
	m := regexp.MustCompile(`\[(\d+)\] textbox "Name"`).FindStringSubmatch(snap.Text)
	if m == nil {
		t.Fatalf("no Name field in %s", snap.Text)
	}
	f := s.failure("run", actions(map[string]any{"op": "fill", "id": m[1], "value": "{{secret:CELL_PW}}"}))
	if f.Code != contract.CodeRefused || !strings.Contains(f.Message, "page.eval") {
		t.Fatalf("a batch typed the secret after page.eval: %+v", f)
	}
	rev := []rune(secret)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	raw, _ := json.Marshal([]any{first, second, f})
	for _, v := range []string{secret, string(rev), strings.Join(strings.Split(secret, ""), ".")} {
		if strings.Contains(string(raw), v) {
			t.Fatalf("a result holds a spelling of the secret: %s", raw)
		}
		if strings.Contains(historyJSON(t, s.id), v) {
			t.Fatal("a spelling of the secret is in the workflow history")
		}
		if strings.Contains(env.Log.String(), v) {
			t.Fatal("a spelling of the secret is in the worker log")
		}
	}
}

// Under "ask", a cell's form post is held for a person exactly as a
// batch's: nothing reaches the site until approved, and the result lists
// the hold with its decision.
func TestCellApprovals(t *testing.T) {
	for _, decision := range []string{contract.DecisionApprove, contract.DecisionDeny} {
		t.Run(decision, func(t *testing.T) {
			env.StartWorker(t, harness.WorkerOptions{})
			s := newSession(t, workflows.SessionConfig{Session: contract.SessionOptions{ActionPolicy: contract.PolicyAsk}})
			s.must("run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/about.html"}), nil)
			email := "cell-" + uuid.NewString()[:8] + "@example.com"
			arrived := func() int {
				n := 0
				for _, sub := range env.Demo.Submissions() {
					if sub.Fields["email"] == email {
						n++
					}
				}
				return n
			}
			call := s.callAsync("run", code(fmt.Sprintf(`
await page.goto(%q);
const s = await page.snapshot({mode: "interactive"});
const id = (label) => s.text.match(new RegExp("\\[(\\d+)\\] " + label))[1];
await page.fill(id('textbox "Email"'), %q);
try { await page.click(id('button "Create account"')) } catch (e) { return e.code }
return "sent";`, env.Demo.URL()+"/", email)))
			var hold contract.Hold
			harness.Eventually(t, 60*time.Second, func() bool {
				for _, h := range state(t, s.id).Holds {
					if h.Decision == "" {
						hold = h
						return true
					}
				}
				return false
			}, "no hold appeared; worker log:\n%s", tail(env.Log.String(), 40))
			if hold.Method != "POST" || hold.Path != "/submit" || arrived() != 0 {
				t.Fatalf("hold %+v, arrivals %d", hold, arrived())
			}
			signal(t, s.id, contract.SignalApproval, contract.ApprovalSignal{HoldID: hold.HoldID, Decision: decision, By: "dee"})
			a := receive(t, call)
			if a.err != nil {
				t.Fatal(a.err)
			}
			var res contract.RunResult
			if err := json.Unmarshal(a.raw, &res); err != nil || !res.OK {
				t.Fatalf("run answer: %s", a.raw)
			}
			word, output, arrivals := "approved", `"sent"`, 1
			if decision == contract.DecisionDeny {
				word, output, arrivals = "denied", `"refused"`, 0
			}
			if arrivals == 1 {
				harness.Eventually(t, 30*time.Second, func() bool { return arrived() == 1 }, "the approved form never arrived: %s", a.raw)
			}
			if arrived() != arrivals || string(res.Output) != output || len(res.Held) != 1 || res.Held[0].Decision != word || res.Held[0].Path != "/submit" {
				t.Fatalf("arrivals %d, answer %s", arrived(), a.raw)
			}
		})
	}
}

// A worker killed in the middle of a cell, after the cell posted a form:
// the call answers effect_unknown with the count of page calls completed
// and the request sent, and the identical cell is refused once.
func TestWorkerKilledMidCell(t *testing.T) {
	p := env.StartWorkerProcess(t, harness.ProcessOptions{})
	s := newSession(t, workflows.SessionConfig{})
	s.must("run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/about.html"}), nil)
	env.StartWorker(t, harness.WorkerOptions{})

	email := "killed-" + uuid.NewString()[:8] + "@example.com"
	arrived := func() int {
		n := 0
		for _, sub := range env.Demo.Submissions() {
			if sub.Fields["email"] == email {
				n++
			}
		}
		return n
	}
	// Four page calls, the last posting the form, then a long computation
	// during which the worker dies.
	cellCode := map[string]any{"timeout_s": 200, "code": fmt.Sprintf(`
await page.goto(%q);
const s = await page.snapshot();
const id = (label) => s.text.match(new RegExp("\\[(\\d+)\\] " + label))[1];
await page.fill(id('textbox "Email"'), %q);
await page.click(id('button "Create account"'));
for (;;) {}`, env.Demo.URL()+"/", email)}
	raw, _ := json.Marshal(cellCode)
	answer := make(chan json.RawMessage, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		out, err := dbclient.Call(ctx, env.Client, s.id, contract.ToolCall{Name: "run", Args: raw}, dbclient.CallOptions{Config: s.cfg})
		if err != nil {
			out, _ = json.Marshal(map[string]string{"error": err.Error()})
		}
		answer <- out
	}()
	harness.Eventually(t, 60*time.Second, func() bool { return arrived() == 1 }, "the form never arrived")
	// The heartbeat has recorded the four completed page calls.
	harness.Eventually(t, 60*time.Second, func() bool { return cellProgress(t, s.id) == contract.PageCalls{Made: 4, Completed: 4} },
		"the heartbeat never counted 4 completed page calls: %s", pendingDump(t, s.id))
	p.Kill()

	var f contract.Failure
	select {
	case out := <-answer:
		if err := json.Unmarshal(out, &f); err != nil || f.Code != contract.CodeEffectUnknown {
			t.Fatalf("want effect_unknown, got %s", out)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the interrupted cell never answered")
	}
	if f.PageCalls == nil || *f.PageCalls != (contract.PageCalls{Made: 4, Completed: 4}) || f.Effect != contract.EffectPossiblyEffected ||
		!strings.Contains(f.Message, "after 4 completed page call") || len(f.Sent) != 1 || f.Sent[0].Path != "/submit" {
		t.Fatalf("effect_unknown should count 4 completed page calls and the post sent: %+v", f)
	}
	if again := s.failure("run", cellCode); again.Code != contract.CodeEffectUnknown {
		t.Fatalf("the identical cell should be refused once with effect_unknown, got %+v", again)
	}
	if n := arrived(); n != 1 {
		t.Fatalf("the site should count exactly the one form sent, counted %d", n)
	}
	s.must("browser_release", map[string]any{}, nil)
	harness.KillUnder(p.ProfileRoot)
}

// cellProgress reads the running run activity's last heartbeat.
func cellProgress(t *testing.T, id string) contract.PageCalls {
	t.Helper()
	d, err := env.Client.DescribeWorkflowExecution(context.Background(), id, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, pa := range d.PendingActivities {
		if pa.ActivityType.GetName() != contract.ActivityRun || pa.HeartbeatDetails == nil {
			continue
		}
		for _, p := range pa.HeartbeatDetails.Payloads {
			var rp contract.RunProgress
			if json.Unmarshal(p.Data, &rp) == nil && rp.PageCalls != nil {
				return *rp.PageCalls
			}
		}
	}
	return contract.PageCalls{}
}

func pendingDump(t *testing.T, id string) string {
	d, err := env.Client.DescribeWorkflowExecution(context.Background(), id, "")
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, pa := range d.PendingActivities {
		fmt.Fprintf(&b, "%s %v attempt=%d started=%v lastbeat=%v failure=%v details=%v; ", pa.ActivityType.GetName(), pa.State, pa.Attempt, pa.LastStartedTime, pa.LastHeartbeatTime, pa.LastFailure, pa.HeartbeatDetails)
	}
	return b.String()
}

// page.eval runs in the page's main world with JSON in and out; text and
// attr read elements by snapshot id; screenshot files evidence and answers
// its claim check.
func TestCellReads(t *testing.T) {
	env.StartWorker(t, harness.WorkerOptions{})
	s := newSession(t, workflows.SessionConfig{})
	var res contract.RunResult
	s.must("run", code(fmt.Sprintf(`
await page.goto(%q);
const rows = await page.eval(() =>
  [...document.querySelectorAll("tbody tr")].map(r => [...r.cells].map(c => c.innerText)));
await page.eval((k, v) => { window[k] = v }, "cellMark", {n: 7});
const mark = await page.eval("window.cellMark");
const s = await page.snapshot();
const next = s.text.match(/\[(\d+)\] link "Next"/)[1];
const shot = await page.screenshot({type: "jpeg", quality: 50});
let thrown = "";
try { await page.eval(() => { throw new Error("page says no") }) } catch (e) { thrown = e.code + ": " + e.message }
return {rows, mark, next: await page.text(next),
  href: await page.attr(next, "href"), none: await page.attr(next, "data-none"), shot, thrown};`, env.Demo.URL()+"/table?page=2")), &res)
	var out struct {
		Rows   [][]string
		Mark   map[string]int
		Next   string
		Href   string
		None   *string
		Shot   contract.ClaimCheck
		Thrown string
	}
	if err := json.Unmarshal(res.Output, &out); err != nil {
		t.Fatalf("%s: %v", res.Output, err)
	}
	want := demosite.TableRows()[demosite.TableRowsPerPage]
	if len(out.Rows) != demosite.TableRowsPerPage || out.Rows[0][0] != want.Order || out.Rows[0][1] != want.Customer || out.Rows[0][3] != fmt.Sprint(want.Total) {
		t.Fatalf("rows %q", out.Rows)
	}
	if out.Mark["n"] != 7 || out.Next != "Next" || out.Href != "/table?page=3" || out.None != nil {
		t.Fatalf("output %s", res.Output)
	}
	if out.Shot.Key == "" || out.Shot.SHA256 == "" || out.Shot.ContentType != "image/jpeg" || out.Shot.Inline != "" {
		t.Fatalf("screenshot claim check %+v", out.Shot)
	}
	if !strings.HasPrefix(out.Thrown, "command_failed: ") || !strings.Contains(out.Thrown, "page says no") {
		t.Fatalf("thrown %q", out.Thrown)
	}
}
