package cell

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// FuzzCell runs arbitrary source against a fake page: the engine must
// answer with a result and a typed error or none, never panic or hang, and
// its output must be JSON within the limit.
func FuzzCell(f *testing.F) {
	for _, s := range []string{
		`return 1`, `emit({a: [1, "b"]}); emit(null)`, `await page.click("1", {button: "left"})`,
		`for (;;) {}`, `throw new Error("x")`, `page.eval((a) => a, 1n)`, `return {toJSON() { throw 1 }}`,
		`const o = {}; o.o = o; return o`, `await page.wait({ms: 1})`, `return Symbol()`, `while (1) emit("x".repeat(1000))`,
		`})(); (async function(){`, `return 'a'.repeat(2**31)`, `return [].join.call({length: 2**32})`,
		`console.log(...Array(100).fill({}))`, `page.select("1", [1, {}])`, `return page.snapshot({mode: 5})`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		start := time.Now()
		res, err := Run(context.Background(), Options{Source: src, Page: &fakePage{}, Deadline: 300 * time.Millisecond, MaxHeapGrowth: 128 << 20})
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
		if d := time.Since(start); d > 300*time.Millisecond+grace+time.Second {
			t.Fatalf("took %s", d)
		}
	})
}
