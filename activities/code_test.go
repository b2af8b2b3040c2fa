package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/driver"
	"github.com/durable-browser/durable-browser/internal/netguard"
	"github.com/durable-browser/durable-browser/internal/redact"
	"github.com/durable-browser/durable-browser/providers"
	"github.com/durable-browser/durable-browser/providers/local"
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
		// Syntax errors by the code's own line and column, not the wrapper's.
		{"unclosed call on line 1", `await page.goto("https://example.com/"`, contract.CodeCodeError, contract.EffectNone,
			"SyntaxError at line 1, column 39 (the end of the code)", "", contract.PageCalls{}},
		{"syntax error on line 3", "const a = 1;\nconst b = 2;\nconst c = a +* b;", contract.CodeCodeError, contract.EffectNone,
			"SyntaxError at line 3, column 14: Unexpected token *", "", contract.PageCalls{}},
		{"26th call", "for (;;) await page.title()", contract.CodeRefused, contract.EffectPossiblyEffected, "limit of 25 page calls", "", contract.PageCalls{Made: 25, Completed: 25}},
		{"output", `emit("y".repeat(70000))`, contract.CodeRefused, contract.EffectNone, "64 KiB", "", contract.PageCalls{}},
		// Refused before it reached the page: nothing was done.
		{"unknown secret", `await page.fill("3", "{{secret:NOPE}}")`, contract.CodeCodeError, contract.EffectNone, "PageError", "", contract.PageCalls{Made: 1, Failed: 1}},
		{"options off the schema", `await page.click("3", {button: "sideways"})`, contract.CodeCodeError, contract.EffectNone, "PageError", "", contract.PageCalls{Made: 1, Failed: 1}},
		// A failed click whose input reached the page may have happened.
		{"click that may have acted", `await page.click("7")`, contract.CodeCodeError, contract.EffectPossiblyEffected, "PageError", "", contract.PageCalls{Made: 1, Failed: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, func(o *Options) { o.Secrets = &redact.Secrets{Source: secrets{}} })
			h.setup = func(b *fakeBrowser) {
				b.runFn = func(_ context.Context, actions []driver.Action) (*contract.RunResult, error) {
					ae := &driver.ActionError{Op: actions[0].Op, Kind: driver.KindTimeout, Reason: "the page's handler never returned", MayHaveActed: true}
					return &contract.RunResult{Total: 1, Failed: &contract.ActionFailure{Op: ae.Op, Reason: ae.Reason}}, ae
				}
			}
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

// chromeHarness is the harness over a real local Chromium, driven by the
// real driver behind a reach guard that admits loopback. A session's
// allow_hosts grants it its sites: another loopback name is refused.
func chromeHarness(t *testing.T, mods ...func(*Options)) *harness {
	t.Helper()
	lp, err := local.New(local.Options{ProfileRoot: t.TempDir(), BootID: "code-test", Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(o *Options) {
		o.Providers = map[string]providers.Provider{local.Name: lp}
		o.Attach = nil // the driver, on the browser the provider started
		o.Reach = &netguard.Policy{AllowLoopback: true, Listeners: &netguard.Listeners{}}
		for _, m := range mods {
			m(o)
		}
	})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		h.a.Close(ctx)
		lp.Close(ctx)
	})
	return h
}

// pageSite serves a small titled page at every path on 127.0.0.1; the same
// server as localhost is another host, which a session granted only
// 127.0.0.1 may not reach.
func pageSite(t *testing.T) (allowed, refused string) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>start</title><p>at %s</p><a href=\"/next\">next</a>", r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
}

// where asks the session, in a cell of its own, where its page is.
func where(t *testing.T, h *harness, ref contract.SessionRef) (url, title string) {
	t.Helper()
	res, err := call[contract.RunResult](h, contract.ActivityRun, cellReq(ref, `return [await page.url(), await page.title()]`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := json.Unmarshal(res.Output, &got); err != nil || len(got) != 2 {
		t.Fatalf("output %s: %v", res.Output, err)
	}
	return got[0], got[1]
}

// A cell whose page.goto the reach guard refused answers where the page
// is when it ends, whether it caught the refusal or let it escape: the URL
// and title every later call finds, never url "" beside the title of the
// page the tab was leaving.
func TestCodeCellAnswersWhereThePageIs(t *testing.T) {
	h := chromeHarness(t)
	allowed, refused := pageSite(t)
	ref := h.create("t-1", contract.SessionOptions{AllowHosts: []string{"127.0.0.1"}})

	res, err := call[contract.RunResult](h, contract.ActivityRun, cellReq(ref, fmt.Sprintf(`
await page.goto(%q);
try { await page.goto(%q) } catch (e) { return e.code }`, allowed+"/start", refused+"/refused")))
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Output) != `"blocked"` {
		t.Fatalf("the cell caught %s, want \"blocked\"", res.Output)
	}
	url, title := where(t, h, ref)
	if res.URL == "" || res.URL != url || res.Title != title {
		t.Fatalf("the cell answered url %q title %q; the page is at %q titled %q", res.URL, res.Title, url, title)
	}

	// Let escape: the failure's last_url is where the page is.
	_, err = call[contract.RunResult](h, contract.ActivityRun, cellReq(ref, fmt.Sprintf(`
await page.goto(%q);
await page.goto(%q)`, allowed+"/again", refused+"/refused-again")))
	f := wantCode(t, err, contract.CodeBlocked, false)
	if url, _ := where(t, h, ref); f.LastURL == "" || f.LastURL != url {
		t.Fatalf("the failure's last_url is %q; the page is at %q", f.LastURL, url)
	}

	// A cell that ends on an allowed page answers it.
	res, err = call[contract.RunResult](h, contract.ActivityRun, cellReq(ref, fmt.Sprintf(`
try { await page.goto(%q) } catch (e) {}
await page.goto(%q)`, refused+"/third", allowed+"/end")))
	if err != nil {
		t.Fatal(err)
	}
	if res.URL != allowed+"/end" || res.Title != "start" {
		t.Fatalf("the cell answered url %q title %q, want %q titled start", res.URL, res.Title, allowed+"/end")
	}
}

// What a cell that failed on a real page shows the model names the
// code's own lines: no frame of the wrapper, the engine or a Go function.
func TestCodeCellFailureShowsTheCodesLines(t *testing.T) {
	h := chromeHarness(t)
	allowed, _ := pageSite(t)
	ref := h.create("t-1", contract.SessionOptions{AllowHosts: []string{"127.0.0.1"}})
	_, err := call[contract.RunResult](h, contract.ActivityRun, cellReq(ref, fmt.Sprintf(`await page.goto(%q);
const s = await page.snapshot();
await page.click("999")`, allowed+"/")))
	f := wantCode(t, err, contract.CodeCodeError, false)
	if !strings.Contains(f.Message, "PageError") || !strings.Contains(f.Message, "(at line 3, column 17)") {
		t.Fatalf("message %q, want the PageError at line 3, column 17", f.Message)
	}
	if !strings.HasPrefix(f.Detail, "PageError: ") || !strings.Contains(f.Detail, "\n\tat click (native)\n\tat cell.js:3:17") {
		t.Fatalf("detail %q, want the stack at cell.js:3:17", f.Detail)
	}
	for _, internal := range []string{"github.com", "jsengine", ".go", "cell.js:4"} {
		if strings.Contains(f.Message+f.Detail, internal) {
			t.Fatalf("the failure shows %q: %q\n%q", internal, f.Message, f.Detail)
		}
	}
}

// originSecrets binds each secret to one origin.
type originSecrets struct {
	origin string
	values map[string]string
}

func (s originSecrets) Lookup(n string) (redact.Secret, bool) {
	v, ok := s.values[n]
	return redact.Secret{Name: n, Value: v, Origins: []string{s.origin}}, ok
}

// A cell whose only page call was refused before it reached the page
// (page.eval in a session where a secret was typed, docs/security.md)
// changed nothing: its failure says effect none, with 0 calls completed.
// One whose page function ran and threw may have acted.
func TestCodeCellRefusedCallHasNoEffect(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>sign in</title><label>Password <input type="password" name="pw"></label>`)
	}))
	t.Cleanup(srv.Close)
	h := chromeHarness(t, func(o *Options) {
		o.Secrets = &redact.Secrets{Source: originSecrets{origin: srv.URL, values: map[string]string{"PASSWORD": "correct-horse-battery"}}}
	})

	// A page function that throws ran in the page: possibly effected.
	thrower := h.create("t-0", contract.SessionOptions{AllowHosts: []string{"127.0.0.1"}})
	_, err := call[contract.RunResult](h, contract.ActivityRun, cellReq(thrower, fmt.Sprintf(`
await page.goto(%q);
const ok = await page.eval(() => { throw new Error("boom") })`, srv.URL+"/")))
	if f := wantCode(t, err, contract.CodeCodeError, false); f.Effect != contract.EffectPossiblyEffected {
		t.Fatalf("a cell whose page function ran: effect %q, calls %+v", f.Effect, f.PageCalls)
	}
	_, err = call[contract.RunResult](h, contract.ActivityRun, cellReq(thrower, `await page.eval(() => { throw new Error("boom") })`))
	if f := wantCode(t, err, contract.CodeCodeError, false); f.Effect != contract.EffectPossiblyEffected ||
		f.PageCalls == nil || *f.PageCalls != (contract.PageCalls{Made: 1, Failed: 1}) {
		t.Fatalf("a cell whose only page function ran and threw: effect %q, calls %+v", f.Effect, f.PageCalls)
	}

	ref := h.create("t-1", contract.SessionOptions{AllowHosts: []string{"127.0.0.1"}})
	if _, err := call[contract.RunResult](h, contract.ActivityRun, runReq(ref, []byte(fmt.Sprintf(
		`[{"op":"goto","url":%q},{"op":"fill","locator":{"label":"Password"},"value":"{{secret:PASSWORD}}"}]`, srv.URL+"/")))); err != nil {
		t.Fatal(err)
	}
	_, err = call[contract.RunResult](h, contract.ActivityRun, cellReq(ref, `await page.eval(() => document.title)`))
	f := wantCode(t, err, contract.CodeCodeError, false)
	if !strings.Contains(f.Message, "page.eval is off in this session") {
		t.Fatalf("page.eval after a secret was typed: %q", f.Message)
	}
	if f.Effect != contract.EffectNone || f.PageCalls == nil || *f.PageCalls != (contract.PageCalls{Made: 1, Failed: 1}) || len(f.Sent) != 0 {
		t.Fatalf("a cell refused before any page call reached the page: effect %q, calls %+v, sent %+v; want none, 0 completed", f.Effect, f.PageCalls, f.Sent)
	}
}

// A cell's lists gather its page calls' lists: each keeps 50 items, and
// not_listed counts the rest, those each call's own answer counted too.
func TestCodeCellListsCountPastTheBound(t *testing.T) {
	h := newHarness(t, nil)
	h.setup = func(b *fakeBrowser) {
		b.runFn = func(_ context.Context, actions []driver.Action) (*contract.RunResult, error) {
			res := &contract.RunResult{Page: contract.Page{URL: "https://example.com/a", Title: "A"}, Completed: 1, Total: 1,
				NotListed: &contract.NotListed{Dialogs: 3, ConsoleErrors: 1}}
			for i := range 30 {
				res.Sent = append(res.Sent, contract.SentRequest{Method: "POST", Origin: "https://example.com", Path: fmt.Sprint("/p", i)})
				res.Dialogs = append(res.Dialogs, contract.Dialog{Type: "alert", Message: fmt.Sprint("d", i), Answer: "accepted"})
			}
			res.ConsoleErrors = []string{"err"}
			return res, nil
		}
	}
	ref := h.create("t-1", contract.SessionOptions{})
	res, err := call[contract.RunResult](h, contract.ActivityRun, cellReq(ref, `for (let i = 0; i < 3; i++) await page.goto("https://example.com/a");`))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sent) != 50 || len(res.Dialogs) != 50 || len(res.ConsoleErrors) != 3 || res.Sent[0].Path != "/p0" {
		t.Fatalf("%d sent, %d dialogs, %d console errors; want 50, 50 and 3", len(res.Sent), len(res.Dialogs), len(res.ConsoleErrors))
	}
	if want := (contract.NotListed{Sent: 40, Dialogs: 49, ConsoleErrors: 3}); res.NotListed == nil || *res.NotListed != want {
		t.Fatalf("not_listed %+v, want %+v", res.NotListed, want)
	}
}
