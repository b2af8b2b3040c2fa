package jsengine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"
)

// builtinCalls are builtins that run in one native step the engine's
// interrupt does not reach, over an array a of length n (or n itself):
// the fuzzer picks one and a size, and the cell's own source runs after.
var builtinCalls = []string{
	`a.indexOf(1)`, `a.lastIndexOf(1)`, `a.includes(1)`, `JSON.stringify(a)`, `a.toLocaleString()`, `a.toString()`,
	`a.join("")`, `a.slice()`, `a.concat(a)`, `a.reverse()`, `a.sort()`, `a.map(x => x)`, `a.filter(x => x)`,
	`a.flat(2)`, `a.fill(0)`, `Array.from(a)`, `String(a)`, `Object.keys(a)`, `a.copyWithin(0, 1)`, `a.splice(0, 1)`,
	`a.findIndex(x => x)`, `a.every(x => true)`, `[...a]`, `"x".repeat(n)`, `"x".padEnd(n)`, `new Array(n).join()`,
	`JSON.parse(JSON.stringify(a))`, `/^(a+)+(?!x)$/.test("a".repeat(n % 64) + "b")`, `"a".repeat(n % 4096).split("")`,
	`a.keys().next()`, `Array.prototype.indexOf.call({length: n}, 1)`, `"ab".localeCompare("ba".repeat(n % 4096))`,
	`new Set(a).size`, `new Map(a.entries()).size`, `Object.entries(a).length`, `a.toSorted ? a.toSorted() : 0`,
}

// builtinProgram is the builtin k over size n, before the cell's source.
func builtinProgram(k uint8, n uint32) string {
	return fmt.Sprintf("const n = %d, a = []; a.length = n; try { %s } catch (e) {}\n", n, builtinCalls[int(k)%len(builtinCalls)])
}

// FuzzCell runs arbitrary source, after a builtin over an arbitrary size,
// against a fake page: the cell must answer with a result and a typed
// error or none, by its deadline plus the kill's grace, never panic or
// hang, and its output must be JSON within the limit.
func FuzzCell(f *testing.F) {
	for i, s := range []string{
		`return 1`, `emit({a: [1, "b"]}); emit(null)`, `await page.click("1", {button: "left"})`,
		`for (;;) {}`, `throw new Error("x")`, `page.eval((a) => a, 1n)`, `return {toJSON() { throw 1 }}`,
		`const o = {}; o.o = o; return o`, `await page.wait({ms: 1})`, `return Symbol()`, `while (1) emit("x".repeat(1000))`,
		`})(); (async function(){`, `return 'a'.repeat(2**31)`, `return [].join.call({length: 2**32})`,
		`console.log(...Array(100).fill({}))`, `page.select("1", [1, {}])`, `return page.snapshot({mode: 5})`,
	} {
		f.Add(s, uint8(i), uint32(10))
	}
	for k := range builtinCalls {
		f.Add(`return 1`, uint8(k), uint32(4294967295))
		f.Add(`emit(await page.url())`, uint8(k), uint32(3e8))
	}
	const deadline = 300 * time.Millisecond
	f.Fuzz(func(t *testing.T, src string, builtin uint8, size uint32) {
		start := time.Now()
		res, err := Run(context.Background(), Options{Source: builtinProgram(builtin, size) + src, Page: &fakePage{}, Deadline: deadline, MaxHeapGrowth: 128 << 20})
		if res == nil {
			t.Fatalf("no result: %v", err)
		}
		var ce *Error
		if err != nil && !errors.As(err, &ce) {
			t.Fatalf("untyped error %T %v", err, err)
		}
		if len(res.Output) > MaxOutputBytes+2 || (len(res.Output) > 0 && !json.Valid(res.Output)) {
			t.Fatalf("output %d bytes, valid %v", len(res.Output), json.Valid(res.Output))
		}
		if d := time.Since(start); d > deadline+killGrace+time.Second {
			t.Fatalf("took %s", d)
		}
	})
}
