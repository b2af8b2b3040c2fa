package activities

import (
	"context"
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/driver"
	"github.com/durable-browser/durable-browser/internal/redact"
)

func cellReq(ref contract.SessionRef, code string) contract.RunRequest {
	return contract.RunRequest{Call: contract.Call{Session: ref}, Args: contract.RunArgs{Code: code}}
}

// A cell's page calls go through the batch path (schema, parse, secrets
// bound to origins) one action at a time, and its result carries the
// output, the counts, the console and what the calls sent.
func TestRunCellResult(t *testing.T) {
	const pw = "correct-horse-battery"
	h := newHarness(t, func(o *Options) { o.Secrets = &redact.Secrets{Source: secrets{"PASSWORD": pw}} })
	var runs [][]driver.Action
	h.setup = func(b *fakeBrowser) {
		b.runFn = func(_ context.Context, actions []driver.Action) (*contract.RunResult, error) {
			runs = append(runs, actions)
			return &contract.RunResult{Page: contract.Page{URL: "https://example.com/a?token=x", Title: "A"}, Completed: 1, Total: 1, Sent: []contract.SentRequest{{Method: "POST", Origin: "https://example.com", Path: "/p"}}}, nil
		}
	}
	ref := h.create("t-1", contract.SessionOptions{})
	res, err := call[contract.RunResult](h, contract.ActivityRun, cellReq(ref, `
const r = await page.goto("https://example.com/a");
await page.fill("[3]", "{{secret:PASSWORD}}");
try { await page.click("3", {button: "sideways"}) } catch (e) { console.log(e.code, e.message) }
emit({url: r.url, text: await page.text("4"), attr: await page.attr("4", "href"), ev: await page.eval(() => 1)});`))
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0][0].Op != "goto" || runs[1][0].Op != "fill" || runs[1][0].ID != "3" || runs[1][0].Value != pw ||
		len(runs[1][0].Secrets) != 1 || runs[1][0].Secrets[0].Name != "PASSWORD" {
		t.Fatalf("runs %+v", runs)
	}
	want := `[{"url":"https://example.com/a?token=[redacted]","text":"text of 4","attr":"href of 4","ev":{"evaluated":true}}]`
	if string(res.Output) != want {
		t.Fatalf("output %s, want %s", res.Output, want)
	}
	if res.PageCalls == nil || *res.PageCalls != (contract.PageCalls{Made: 6, Completed: 5, Failed: 1}) {
		t.Fatalf("page calls %+v", res.PageCalls)
	}
	if len(res.Console) != 1 || !strings.HasPrefix(res.Console[0], "refused page.click button: must be one of") {
		t.Fatalf("console %q", res.Console)
	}
	if len(res.Sent) != 2 || res.Sent[0].Path != "/p" {
		t.Fatalf("sent %+v", res.Sent)
	}
}

func TestRunCellFailures(t *testing.T) {
	cases := []struct {
		name, code string
		want       contract.Code
		effect     contract.Effect
		msg        string
		detail     string
		calls      contract.PageCalls
	}{
		{"thrown", "await page.url();\nnull.x", contract.CodeCodeError, contract.EffectPossiblyEffected, "TypeError", "cell.js:2", contract.PageCalls{Made: 1, Completed: 1}},
		{"does not parse", "return (", contract.CodeCodeError, contract.EffectNone, "does not parse", "", contract.PageCalls{}},
		{"26th call", "for (;;) await page.title()", contract.CodeRefused, contract.EffectPossiblyEffected, "limit of 25 page calls", "", contract.PageCalls{Made: 25, Completed: 25}},
		{"output", `emit("y".repeat(70000))`, contract.CodeRefused, contract.EffectNone, "64 KiB", "", contract.PageCalls{}},
		{"unknown secret", `await page.fill("3", "{{secret:NOPE}}")`, contract.CodeCodeError, contract.EffectPossiblyEffected, "PageError", "", contract.PageCalls{Made: 1, Failed: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, func(o *Options) { o.Secrets = &redact.Secrets{Source: secrets{}} })
			ref := h.create("t-1", contract.SessionOptions{})
			_, err := call[contract.RunResult](h, contract.ActivityRun, cellReq(ref, c.code))
			f := wantCode(t, err, c.want, false)
			if f.Effect != c.effect || !strings.Contains(f.Message, c.msg) || !strings.Contains(f.Detail, c.detail) ||
				f.PageCalls == nil || *f.PageCalls != c.calls {
				t.Fatalf("failure %+v calls %+v", f, f.PageCalls)
			}
		})
	}
}
