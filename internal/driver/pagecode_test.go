package driver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/durable-browser/durable-browser/internal/redact"
)

// What a code cell reads through the driver: text, attributes and
// page-side functions, by the latest snapshot's ids, redacted.
func TestCellReads(t *testing.T) {
	const secret = "hunter2-cell-secret"
	b := attach(t, Options{Redact: func(s string) string { return strings.ReplaceAll(s, secret, "[redacted]") }})
	ctx := ctxT(t)
	gotoPage(t, b, siteURL+"/")
	s := snap(t, b, SnapshotOptions{})
	email, about := idOf(t, s.Text, `textbox "Email"`), idOf(t, s.Text, `link "About"`)
	mustRun(t, b, `[{"op":"fill","id":"`+email+`","value":"a-`+secret+`"}]`)

	if v, err := b.Text(ctx, about); err != nil || v != "About" {
		t.Fatalf("text %q %v", v, err)
	}
	if v, ok, err := b.Attr(ctx, "["+email+"]", "value"); err != nil || !ok || v != "a-[redacted]" {
		t.Fatalf("attr value %q %v %v", v, ok, err)
	}
	if _, ok, err := b.Attr(ctx, email, "data-none"); err != nil || ok {
		t.Fatalf("absent attribute: ok %v err %v", ok, err)
	}
	for _, c := range []struct{ src, args, want string }{
		{"(a, b) => a + b", "[1, 2]", "3"},
		{"document.title", "", `"Durable Browser Demo"`},
		{"async () => ({v: document.querySelector('input[name=email]').value})", "[]", `{"v":"a-[redacted]"}`},
		{"() => undefined", "[]", "null"},
	} {
		got, err := b.Eval(ctx, c.src, c.args)
		if err != nil || string(got) != c.want {
			t.Fatalf("eval %s: %s %v, want %s", c.src, got, err, c.want)
		}
	}
	var ae *ActionError
	if _, err := b.Eval(ctx, "() => { throw new Error('nope') }", "[]"); !errors.As(err, &ae) || !strings.Contains(ae.Reason, "nope") {
		t.Fatalf("throwing function: %v", err)
	}
	if _, err := b.Eval(ctx, "() => 'x'.repeat(70000)", "[]"); !errors.As(err, &ae) || !strings.Contains(ae.Reason, "65536-byte limit") {
		t.Fatalf("large result: %v", err)
	}
	if _, err := b.Eval(ctx, "(a) => a", "[1"); err == nil {
		t.Fatal("bad arguments accepted")
	}

	// After the page navigates, the ids are stale.
	mustRun(t, b, `[{"op":"click","id":"`+about+`"},{"op":"wait","load":true}]`)
	var stale *StaleError
	if _, err := b.Text(ctx, about); !errors.As(err, &stale) {
		t.Fatalf("text of a stale id: %v", err)
	}
	// Once a secret was typed, page-side code is refused.
	b.armSecrets([]redact.Secret{{Name: "PW", Value: secret, Origins: []string{siteURL}}})
	if _, err := b.Eval(ctx, "document.title", ""); !errors.Is(err, ErrSecretTyped) {
		t.Fatalf("eval after a secret was typed: %v", err)
	}
}

// Hold gives the request gate a code cell's context between its page calls:
// a request the page sends while no call runs meets the cell's context,
// and after release the session's own.
func TestHoldBetweenCalls(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			return
		}
		fmt.Fprint(w, `<!doctype html><title>later</title><button onclick="setTimeout(() => fetch('/later', {method: 'POST'}), 1000)">Later</button>`)
	}))
	t.Cleanup(srv.Close)
	type key struct{}
	var mu sync.Mutex
	var seen []any
	b := attach(t, Options{RequestGate: func(ctx context.Context, r GatedRequest) GateDecision {
		mu.Lock()
		seen = append(seen, ctx.Value(key{}))
		mu.Unlock()
		return GateAllow
	}})
	gotoPage(t, b, srv.URL+"/")
	button := idOf(t, snap(t, b, SnapshotOptions{}).Text, `button "Later"`)
	release := b.Hold(context.WithValue(ctxT(t), key{}, "cell"))
	// The click returns before the page posts; the post meets the hold.
	mustRun(t, b, `[{"op":"click","id":"`+button+`"}]`)
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(seen) }
	eventually(t, "the held post", func() bool { return count() == 1 })
	release()
	mustRun(t, b, `[{"op":"click","id":"`+button+`"}]`)
	eventually(t, "the post after release", func() bool { return count() == 2 })
	mu.Lock()
	defer mu.Unlock()
	if seen[0] != "cell" || seen[1] != nil {
		t.Fatalf("gate contexts %v, want the cell's then none", seen)
	}
}

// Once page code ran (page.eval), typing a secret in the session is
// refused, naming why: code the eval started (here a timer writing the
// field reversed and dotted into the title) would read it back. Nothing
// is typed, so the title never holds it in any spelling.
func TestEvalThenSecretRefused(t *testing.T) {
	const secret = "hunter2-eval-first-secret"
	b := attach(t, Options{Redact: func(s string) string { return strings.ReplaceAll(s, secret, "[redacted]") }})
	ctx := ctxT(t)
	gotoPage(t, b, siteURL+"/")
	email := idOf(t, snap(t, b, SnapshotOptions{}).Text, `textbox "Email"`)
	if _, err := b.Eval(ctx, `() => { setInterval(() => { const v = document.querySelector("input[name=email]").value;
  if (v) document.title = v.split("").reverse().join("") + " " + v.split("").join("."); }, 10) }`, "[]"); err != nil {
		t.Fatal(err)
	}
	pw := redact.Secret{Name: "PW", Value: secret, Origins: []string{siteURL}}
	_, err := b.Run(ctx, secretActs(t, `[{"op":"fill","id":"`+email+`","value":"`+secret+`"}]`, pw), RunOptions{})
	var ae *ActionError
	if !errors.Is(err, ErrPageCodeRan) || !errors.As(err, &ae) || ae.Kind != KindRefused || !strings.Contains(ae.Reason, "page.eval") {
		t.Fatalf("typing a secret after page.eval: %v", err)
	}
	mustRun(t, b, `[{"op":"wait","ms":100}]`)
	rev := []rune(secret)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	title := b.Title(ctx)
	for _, v := range []string{secret, string(rev), strings.Join(strings.Split(secret, ""), ".")} {
		if strings.Contains(title, v) {
			t.Fatalf("the title holds a spelling of the secret: %q", title)
		}
	}
	if len(b.TypedSecrets()) != 0 {
		t.Fatalf("secrets armed though none was typed: %v", b.TypedSecrets())
	}
}
