package jsengine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/internal/redact"
)

// fakePage answers page calls from a table and records them.
type fakePage struct {
	mu    sync.Mutex
	calls []string
	args  []map[string]any
	stale map[string]bool // ids that fail with stale_snapshot
}

func (p *fakePage) Call(ctx context.Context, method string, args map[string]any) (json.RawMessage, error) {
	p.mu.Lock()
	p.calls = append(p.calls, method)
	p.args = append(p.args, args)
	p.mu.Unlock()
	if id, _ := args["id"].(string); p.stale[id] {
		return nil, &PageError{Code: "stale_snapshot", Message: "id [" + id + "] is not in the latest snapshot"}
	}
	switch method {
	case "url":
		return json.RawMessage(`"https://example.test/"`), nil
	case "snapshot":
		return json.RawMessage(`{"text":"- button \"Next\" [3]","url":"https://example.test/"}`), nil
	case "text":
		return json.RawMessage(`"row"`), nil
	}
	return nil, nil
}

func run(t *testing.T, src string, o Options) (*Result, *Error, *fakePage) {
	t.Helper()
	p, _ := o.Page.(*fakePage)
	if p == nil {
		p = &fakePage{}
		o.Page = p
	}
	o.Source = src
	res, err := Run(context.Background(), o)
	if res == nil {
		t.Fatalf("no result (err %v)", err)
	}
	var ce *Error
	if err != nil && !errors.As(err, &ce) {
		t.Fatalf("untyped error %T %v", err, err)
	}
	return res, ce, p
}

func TestCellOutputs(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"return value", `return {a: 1, b: [2, "x"]}`, `{"a":1,"b":[2,"x"]}`},
		{"emits win over return", `emit(1); emit({r: "two"}); return 3`, `[1,{"r":"two"}]`},
		{"no output", `const x = 1`, ``},
		{"awaited page call", `const u = await page.url(); return u`, `"https://example.test/"`},
		{"page call without await", `return page.url().length`, `21`},
		{"snapshot text", `const s = await page.snapshot(); return s.text.includes("Next")`, `true`},
		{"eval built inside the cell", `return eval("1 + 2")`, `3`},
		{"bounded builtins within bounds", `return [Array.from("ab"), [1, 2].join("-"), new Array(2).fill(0), "a".repeat(2), "1".padStart(2, "0"), "1".padEnd(2, "0")]`,
			`[["a","b"],"1-2",[0,0],"aa","01","10"]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err, _ := run(t, c.src, Options{})
			if err != nil {
				t.Fatalf("err %v", err)
			}
			if string(res.Output) != c.want {
				t.Fatalf("output %s, want %s", res.Output, c.want)
			}
		})
	}
}

func TestCellLimits(t *testing.T) {
	big := strings.Repeat("x", MaxSourceBytes)
	cases := []struct {
		name, src string
		o         Options
		kind      Kind
		msg       string
		made      int
	}{
		{"26th page call", `for (let i = 0; i < 30; i++) { await page.url() }`, Options{}, KindLimit, "limit of 25 page calls", 25},
		{"26th call caught", `for (let i = 0; i < 30; i++) { try { await page.url() } catch (e) {} }`, Options{}, KindLimit, "limit of 25 page calls", 25},
		{"source size", "//" + big, Options{}, KindLimit, "64 KiB", 0},
		{"emitted output", `for (let i = 0; i < 1000; i++) emit("y".repeat(100))`, Options{}, KindLimit, "64 KiB", 0},
		{"returned output", `return "z".repeat(70000)`, Options{}, KindLimit, "output limit", 0},
		{"endless loop", `await page.url(); await page.url(); while (true) {}`, Options{Deadline: 300 * time.Millisecond}, KindTimeout, "deadline", 2},
		{"memory", `const a = []; while (true) a.push({s: "k" + a.length, n: [a.length, a.length]})`, Options{MaxHeapGrowth: 64 << 20}, KindLimit, "memory", 0},
		{"one huge string", `return "ab".repeat(1e9).length`, Options{}, KindCode, "RangeError", 0},
		{"huge pad", `return "".padEnd(1e9, "x").length`, Options{}, KindCode, "RangeError", 0},
		{"huge fill", `return new Array(1e9).fill(0).length`, Options{}, KindCode, "RangeError", 0},
		{"recursion", `function f(n) { return f(n + 1) + 1 } return f(0)`, Options{}, KindCode, "recursion", 0},
		{"never settles", `await new Promise(() => {})`, Options{}, KindCode, "never settles", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			res, err, _ := run(t, c.src, c.o)
			if err == nil {
				t.Fatalf("no error; output %s", res.Output)
			}
			if err.Kind != c.kind || !strings.Contains(err.Message, c.msg) {
				t.Fatalf("got %s %q, want %s containing %q", err.Kind, err.Message, c.kind, c.msg)
			}
			if res.Calls.Made != c.made {
				t.Fatalf("made %d calls, want %d", res.Calls.Made, c.made)
			}
			if time.Since(start) > 8*time.Second {
				t.Fatalf("took %s", time.Since(start))
			}
		})
	}
}

// TestCellNoHost: nothing of the host is reachable, however it is asked for.
func TestCellNoHost(t *testing.T) {
	for _, src := range []string{
		`require('fs')`,
		`await fetch('http://127.0.0.1/')`,
		`await import('fs')`,
		`import fs from 'fs'`,
		`setTimeout(() => {}, 1)`,
		`process.exit(1)`,
		`eval("require('child_process')")`,
		`new Function("return fetch")()("http://127.0.0.1/")`,
		`(function(){}).constructor("return require")()("fs")`,
		`globalThis.constructor.constructor("return process")().env`,
		`new XMLHttpRequest()`,
		`new ArrayBuffer(1 << 30)`,
		`page.click = null; page.click("1")`,
	} {
		t.Run(src, func(t *testing.T) {
			_, err, _ := run(t, `"use strict";`+src, Options{})
			if err == nil || err.Kind != KindCode {
				t.Fatalf("got %v, want a code error", err)
			}
		})
	}
}

func TestCellPageErrors(t *testing.T) {
	p := &fakePage{stale: map[string]bool{"7": true}}
	res, err, _ := run(t, `
try { await page.click("7") } catch (e) { emit({name: e.name, code: e.code}) }
await page.click("8")
await page.click("7")`, Options{Page: p})
	if err == nil || err.Kind != KindCode || !strings.Contains(err.Message, "stale_snapshot") {
		t.Fatalf("err %v", err)
	}
	if !strings.Contains(err.Stack, "cell.js:4") {
		t.Fatalf("stack %q does not point at line 4", err.Stack)
	}
	if string(res.Output) != `[{"name":"PageError","code":"stale_snapshot"}]` {
		t.Fatalf("output %s", res.Output)
	}
	if res.Calls != (Counts{Made: 3, Completed: 1, Failed: 2}) {
		t.Fatalf("counts %+v", res.Calls)
	}
}

func TestCellArgs(t *testing.T) {
	cases := []struct {
		src  string
		want string
	}{
		{`page.goto("https://a.test/")`, `{"url":"https://a.test/"}`},
		{`page.click("5", {button: "right"})`, `{"button":"right","id":"5"}`},
		{`page.click(5)`, `{"id":"5"}`},
		{`page.click({role: "link", name: "Next"})`, `{"locator":{"name":"Next","role":"link"}}`},
		{`page.fill({label: "Email"}, "a@b.c")`, `{"locator":{"label":"Email"},"value":"a@b.c"}`},
		{`page.fill("2", "{{secret:PW}}")`, `{"id":"2","value":"{{secret:PW}}"}`},
		{`page.type("2", "hi", {delay_ms: 5})`, `{"delay_ms":5,"id":"2","text":"hi"}`},
		{`page.press("Enter")`, `{"key":"Enter"}`},
		{`page.press("3", "Enter")`, `{"id":"3","key":"Enter"}`},
		{`page.select("4", "b")`, `{"id":"4","values":["b"]}`},
		{`page.select("4", ["a", "b"])`, `{"id":"4","values":["a","b"]}`},
		{`page.scroll({dy: 300})`, `{"dy":300}`},
		{`page.scroll("9")`, `{"id":"9"}`},
		{`page.wait(200)`, `{"ms":200}`},
		{`page.wait("Done")`, `{"text":"Done"}`},
		{`page.wait({url: "*page=2*"})`, `{"url":"*page=2*"}`},
		{`page.attr("3", "href")`, `{"id":"3","name":"href"}`},
		{`page.eval((a, b) => a + b, 1, {x: 2})`, `{"args":"[1,{\"x\":2}]","source":"(a, b) =\u003e a + b"}`},
		{`page.eval("document.title")`, `{"args":"[]","source":"document.title"}`},
	}
	for _, c := range cases {
		t.Run(c.src, func(t *testing.T) {
			_, err, p := run(t, c.src, Options{})
			if err != nil {
				t.Fatalf("err %v", err)
			}
			got, _ := json.Marshal(p.args[0])
			if string(got) != c.want {
				t.Fatalf("args %s, want %s", got, c.want)
			}
		})
	}
	for _, src := range []string{`page.fill("2")`, `page.eval(Math.max)`, `page.select("1", 5)`, `page.wait()`, `page.click("1", "x")`} {
		t.Run("refused "+src, func(t *testing.T) {
			res, err, _ := run(t, `try { `+src+` } catch (e) { return e.code }`, Options{})
			if err != nil || string(res.Output) != `"refused"` || res.Calls.Made != 0 {
				t.Fatalf("err %v output %s calls %+v", err, res.Output, res.Calls)
			}
		})
	}
}

func TestCellConsoleBounded(t *testing.T) {
	res, err, _ := run(t, `for (let i = 0; i < 500; i++) console.log("line", i, {i}); console.error("late")`, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Console) > maxConsoleLines+1 || res.Console[0] != `line 0 {"i":0}` || res.Console[len(res.Console)-1] != "…" {
		t.Fatalf("console %d lines: %q ... %q", len(res.Console), res.Console[0], res.Console[len(res.Console)-1])
	}
}

func TestCellProgressAndCancel(t *testing.T) {
	var seen []Counts
	ctx, cancel := context.WithCancel(context.Background())
	p := &fakePage{}
	done := make(chan struct{})
	var res *Result
	var err error
	go func() {
		defer close(done)
		res, err = Run(ctx, Options{Page: p, Source: `await page.url(); await page.url(); while (true) {}`, Progress: func(c Counts) { seen = append(seen, c) }})
	}()
	for {
		p.mu.Lock()
		n := len(p.calls)
		p.mu.Unlock()
		if n == 2 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	var ce *Error
	if !errors.As(err, &ce) || ce.Kind != KindCanceled {
		t.Fatalf("err %v", err)
	}
	if res.Calls.Completed != 2 || fmt.Sprint(seen) != "[{1 1 0} {2 2 0}]" {
		t.Fatalf("counts %+v progress %v", res.Calls, seen)
	}
}

// Garbage is not growth: a cell that allocates far more than the bound but
// keeps little runs to the end.
func TestCellGarbageIsNotGrowth(t *testing.T) {
	res, err, _ := run(t, `let n = 0; for (let i = 0; i < 300000; i++) { const s = "k".repeat(200) + i; n += s.length } return n`, Options{MaxHeapGrowth: 48 << 20})
	if err != nil || len(res.Output) == 0 {
		t.Fatalf("err %v output %s", err, res.Output)
	}
}

// secretPage answers every call with a registered secret, or fails with it.
type secretPage struct{ secret string }

func (p secretPage) Call(_ context.Context, method string, _ map[string]any) (json.RawMessage, error) {
	if method == "click" {
		return nil, &PageError{Code: "stale_snapshot", Message: "no " + p.secret + " here"}
	}
	return json.Marshal("text with " + p.secret)
}

// Everything a cell is handed passes the redactor, so the cell never holds
// the secret to re-spell it; OutputSize is the output's length redacted.
func TestCellHandedRedacted(t *testing.T) {
	const secret = "hunter2-cell-secret"
	red := redact.New()
	red.Register(secret)
	res, err := Run(context.Background(), Options{Page: secretPage{secret}, Redactor: red, Source: `
const seen = [await page.text("1")]
try { await page.click("1") } catch (e) { seen.push(e.message) }
emit(seen.map(s => s.split("").reverse().join("")))
emit("token=abcdefgh")`})
	if err != nil {
		t.Fatal(err)
	}
	rev := func(s string) string {
		r := []rune(s)
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		return string(r)
	}
	if out := string(res.Output); strings.Contains(out, rev(secret)) || !strings.Contains(out, rev("[redacted]")) {
		t.Fatalf("the cell saw the secret: output %s", out)
	}
	if want := len(red.JSON(res.Output)); res.OutputSize != want || want == len(res.Output) {
		t.Fatalf("OutputSize %d, want %d (the output redacted; %d as emitted)", res.OutputSize, want, len(res.Output))
	}
}

// What a cell is told of its own errors names its own lines and columns:
// never the wrapper the engine runs it in, a program counter, the engine's
// own JavaScript or a Go function.
func TestCellErrorPositions(t *testing.T) {
	cases := []struct {
		name, src string
		msg       string // in the message
		stack     string // the whole stack, when there is one
	}{
		{"syntax error on line 1", `await page.goto("x"`,
			"SyntaxError at line 1, column 20 (the end of the code): the code ends before something it began is complete", ""},
		{"syntax error on line 1, mid-line", `const r = await page.goto("x"));`,
			"SyntaxError at line 1, column 31: Unexpected token )", ""},
		{"syntax error on line 3", "const a = 1;\nconst b = 2;\nconst c = a +* b;",
			"SyntaxError at line 3, column 14: Unexpected token *", ""},
		{"a character before the error", "emit(\"é\" ]",
			"SyntaxError at line 1, column 10: Unexpected token ]", ""},
		{"a string left open", "emit(1)\nemit('abc\nemit(2)",
			"SyntaxError at line 2, column 6: Unexpected token ILLEGAL (a string left open", ""},
		{"compile error", "let x = 1;\nlet x = 2;",
			"SyntaxError at line 2, column 5: Identifier 'x' has already been declared", ""},
		{"a } too many", "if (true) { emit(1) }\n}",
			"SyntaxError at line 2, column 2 (the end of the code): there is a } too many", ""},
		{"runtime throw on line 2", "const a = 1;\nthrow new Error(\"boom \" + a)",
			"Error: boom 1 (at line 2, column 7)", "Error: boom 1\n\tat cell.js:2:7"},
		{"runtime error on line 1, after the wrapper's head", "await page.url(); null.x",
			"TypeError: Cannot read property 'x' of undefined (at line 1, column 24)", "TypeError: Cannot read property 'x' of undefined\n\tat cell.js:1:24"},
		{"thrown in a function", "function f() {\n  return null.x\n}\nf()",
			"(at line 2, column 15)", "TypeError: Cannot read property 'x' of undefined\n\tat f (cell.js:2:15)\n\tat cell.js:4:2"},
		{"a page call's failure", "await page.url()\nawait page.click(\"7\")",
			"PageError: id [7] is not in the latest snapshot (code stale_snapshot) (at line 2, column 17)",
			"PageError: id [7] is not in the latest snapshot\n\tat click (native)\n\tat cell.js:2:17"},
		{"a bounded builtin", `emit(1)
return "ab".repeat(1e9)`,
			"RangeError", "RangeError: a string of 2000000000 characters is over the cell's limit of 8388608\n\tat repeat (native)\n\tat cell.js:2:19"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err, _ := run(t, c.src, Options{Page: &fakePage{stale: map[string]bool{"7": true}}})
			if err == nil || err.Kind != KindCode {
				t.Fatalf("err %v, want a code error", err)
			}
			if !strings.Contains(err.Message, c.msg) || err.Stack != c.stack {
				t.Fatalf("message %q\nstack %q\nwant message containing %q, stack %q", err.Message, err.Stack, c.msg, c.stack)
			}
			for _, internal := range []string{"github.com", "jsengine", ".go", "builtins", "Line ", "(async function", "more errors"} {
				if strings.Contains(err.Message+err.Stack, internal) {
					t.Fatalf("%q shows the engine's %q", err.Message+"\n"+err.Stack, internal)
				}
			}
		})
	}
}

// The functions a cell is given are named as it calls them, not by the Go
// functions behind them.
func TestCellNativesNamed(t *testing.T) {
	res, err, _ := run(t, `return [page.click.name, String(page.goto), emit.name, String(console.log)]`, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := `["click","function goto() { [native code] }","emit","function log() { [native code] }"]`
	if string(res.Output) != want {
		t.Fatalf("output %s, want %s", res.Output, want)
	}
}
