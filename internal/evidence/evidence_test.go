package evidence

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/contract"
)

var cleanRE = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9_.-]*$`)

func TestCleanSegment(t *testing.T) {
	h := func(s string) string { return SHA256Hex([]byte(s))[:8] }
	long := strings.Repeat("x", 150)
	for _, tc := range []struct{ in, want string }{
		{"abc", "abc"},
		{"wf-1_A.b", "wf-1_A.b"},
		{"", "_"},
		{"a/b", "a_b-" + h("a/b")},
		{"a b", "a_b-" + h("a b")},
		{".", "_-" + h(".")},
		{"..", "_.-" + h("..")},
		{".sgwtmp", "_sgwtmp-" + h(".sgwtmp")},
		{"ünïcode", "_n_code-" + h("ünïcode")},
		{"../../etc/passwd", "_._.._etc_passwd-" + h("../../etc/passwd")},
		{strings.Repeat("y", MaxSegment), strings.Repeat("y", MaxSegment)},
		{long, strings.Repeat("x", MaxSegment-9) + "-" + h(long)},
	} {
		if got := CleanSegment(tc.in); got != tc.want {
			t.Errorf("CleanSegment(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if CleanSegment("a/b") == CleanSegment("a:b") {
		t.Error("distinct ids cleaned to one segment")
	}
}

func TestBodyKeyShape(t *testing.T) {
	sum := SHA256Hex([]byte("body"))
	for _, tc := range []struct {
		name                             string
		prefix, wf, tag, call, tool, ext string
		want                             string
	}{
		{"plain", "evidence", "wf1", "wf1-1", "act7", "screenshot", "png",
			"evidence/wf1/wf1-1/act7-screenshot-" + sum[:12] + ".png"},
		{"no prefix", "", "wf1", "wf1-1", "act7", "browser_read", "md",
			"wf1/wf1-1/act7-browser_read-" + sum[:12] + ".md"},
		{"nested prefix, slashes trimmed", "/a//b/", "wf1", "t", "c", "web.fetch", ".HTML",
			"a/b/wf1/t/c-web.fetch-" + sum[:12] + ".html"},
		{"empty ext", "", "wf", "t", "c", "x", "",
			"wf/t/c-x-" + sum[:12] + ".bin"},
		{"dotted ext kept, dashes not", "", "wf", "t", "c", "x", "TAR.gz",
			"wf/t/c-x-" + sum[:12] + ".tar.gz"},
		{"ext that looks like a hash", "", "wf", "t", "c", "x", "x-aaaaaaaaaaaa.y",
			"wf/t/c-x-" + sum[:12] + ".x_aaaaaaaaaaaa.y"},
		{"hostile workflow id", "", "order/../1", "t", "c", "x", "png",
			"order_.._1-" + SHA256Hex([]byte("order/../1"))[:8] + "/t/c-x-" + sum[:12] + ".png"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := BodyKey(tc.prefix, tc.wf, tc.tag, tc.call, tc.tool, sum, tc.ext)
			if got != tc.want {
				t.Fatalf("BodyKey = %q, want %q", got, tc.want)
			}
			if err := CheckKey(got); err != nil {
				t.Fatal(err)
			}
			if p, ok := keyHashPrefix(got); !ok || p != sum[:12] {
				t.Fatalf("keyHashPrefix(%q) = %q, %v", got, p, ok)
			}
			if ReceiptKey(got) != got+".receipt.json" || BodyKeyOf(ReceiptKey(got)) != got || BodyKeyOf(got) != got {
				t.Fatal("receipt key does not round-trip")
			}
		})
	}
}

func TestCheckKey(t *testing.T) {
	for _, k := range []string{"", "/a", "a//b", "a/./b", "a/../b", "a/", strings.Repeat("k", 1025), "\xff"} {
		if err := CheckKey(k); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("CheckKey(%q) = %v, want ErrInvalidKey", k, err)
		}
	}
	ctx := context.Background()
	m := NewMemory()
	if _, err := m.Put(ctx, "../x", nil, ""); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("Put(../x) = %v", err)
	}
	if _, _, err := GetVerified(ctx, m, "a/../b"); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("GetVerified(a/../b) = %v", err)
	}
}

func FuzzCleanSegment(f *testing.F) {
	for _, s := range []string{"", "abc", ".", "..", "a/b", "wf:1 2", ".hidden", "ü", strings.Repeat("z", 200), "\x00\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := CleanSegment(s)
		if !cleanRE.MatchString(c) || len(c) > MaxSegment || c == "." || c == ".." {
			t.Fatalf("CleanSegment(%q) = %q", s, c)
		}
		if CleanSegment(c) != c {
			t.Fatalf("CleanSegment not idempotent on %q: %q", c, CleanSegment(c))
		}
		key := BodyKey(s, s, s, s, s, SHA256Hex([]byte(s)), s)
		if err := CheckKey(key); err != nil || len(key) > 1024 {
			t.Fatalf("BodyKey from %q = %q: %v", s, key, err)
		}
		if p, ok := keyHashPrefix(key); !ok || p != SHA256Hex([]byte(s))[:12] {
			t.Fatalf("hash prefix of %q = %q, %v", key, p, ok)
		}
	})
}

func TestInlineBudget(t *testing.T) {
	text := []byte("# Title\nsome words")
	big := []byte(strings.Repeat("a", int(DefaultInlineBudget)+1))
	png := []byte("\x89PNG\r\n\x1a\nfake")
	for _, tc := range []struct {
		name     string
		budget   InlineBudget
		ct       string
		body     []byte
		want     string
		encoding string
		ok       bool
	}{
		{"markdown", 0, "text/markdown; charset=utf-8", text, string(text), InlineText, true},
		{"json", 0, "application/json", []byte(`{"a":1}`), `{"a":1}`, InlineText, true},
		{"problem json", 0, "application/problem+json", []byte(`{}`), `{}`, InlineText, true},
		{"text exactly at budget", 0, "text/plain", big[:DefaultInlineBudget], string(big[:DefaultInlineBudget]), InlineText, true},
		{"text over budget", 0, "text/plain", big, "", "", false},
		{"not utf-8", 0, "text/plain", []byte{0xff, 0xfe}, "", "", false},
		{"small image", 0, "image/png", png, base64.StdEncoding.EncodeToString(png), InlineBase64, true},
		{"image over budget", 0, "image/png", big, "", "", false},
		{"image whose base64 is over budget", 12, "image/png", png, "", "", false},
		{"pdf", 0, "application/pdf", text, "", "", false},
		{"unknown", 0, "", text, "", "", false},
		{"negative budget", -1, "text/plain", text, "", "", false},
		{"custom budget", 4, "text/plain", text, "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, enc, ok := tc.budget.Inline(tc.ct, tc.body)
			if got != tc.want || enc != tc.encoding || ok != tc.ok {
				t.Fatalf("Inline = %.40q, %q, %v; want %.40q, %q, %v", got, enc, ok, tc.want, tc.encoding, tc.ok)
			}
		})
	}
}

// counting records what Puts actually wrote.
type counting struct {
	Store
	mu      sync.Mutex
	written []string
}

func (c *counting) Put(ctx context.Context, key string, body []byte, ct string) (PutResult, error) {
	r, err := c.Store.Put(ctx, key, body, ct)
	if err == nil && !r.Existed {
		c.mu.Lock()
		c.written = append(c.written, key)
		c.mu.Unlock()
	}
	return r, err
}

func (c *counting) PutReader(ctx context.Context, key string, r io.ReadSeeker, size int64, sum, ct string) (PutResult, error) {
	res, err := c.Store.PutReader(ctx, key, r, size, sum, ct)
	if err == nil && !res.Existed {
		c.mu.Lock()
		c.written = append(c.written, key)
		c.mu.Unlock()
	}
	return res, err
}

func (c *counting) writes() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.written...)
}

var when = time.Date(2026, 11, 3, 10, 0, 0, 0, time.FixedZone("CET", 3600))

func filing(body string) Filing {
	return Filing{
		Prefix: "ev", WorkflowID: "agent/run 1", SessionTag: "agent_run_1-1", CallID: "7",
		Tool: "browser_read", Ext: "md", ContentType: "text/markdown",
		Body: []byte(body),
		Receipt: contract.Receipt{
			Args: json.RawMessage(`{"url":"https://example.test/"}`), Status: "ok",
			RequestedURL: "https://example.test/", FinalURL: "https://example.test/", Title: "Example",
			HTTPStatus: 200, Extractor: "html-to-markdown", RunID: "r1", ActivityID: "7", Time: when,
		},
	}
}

func TestFileAndGet(t *testing.T) {
	ctx := context.Background()
	mem := NewMemory()
	cc, err := File(ctx, mem, filing("# Example\n"))
	if err != nil {
		t.Fatal(err)
	}
	sum := SHA256Hex([]byte("# Example\n"))
	wantKey := "ev/agent_run_1-" + SHA256Hex([]byte("agent/run 1"))[:8] + "/agent_run_1-1/7-browser_read-" + sum[:12] + ".md"
	if cc.Key != wantKey || cc.ReceiptKey != wantKey+ReceiptSuffix || cc.SHA256 != sum || cc.Size != 10 ||
		cc.ContentType != "text/markdown" || cc.Inline != "# Example\n" {
		t.Fatalf("claim check = %+v", cc)
	}
	if got := mem.Keys(); len(got) != 2 || got[0] != cc.Key || got[1] != cc.ReceiptKey {
		t.Fatalf("keys = %v", got)
	}
	for _, key := range []string{cc.Key, cc.ReceiptKey} {
		body, r, err := GetVerified(ctx, mem, key)
		if err != nil {
			t.Fatal(err)
		}
		if string(body) != "# Example\n" || r == nil {
			t.Fatalf("GetVerified(%s) = %q, %v", key, body, r)
		}
		if r.SHA256 != sum || r.BodyKey != cc.Key || r.Tool != "browser_read" || r.WorkflowID != "agent/run 1" ||
			r.SessionTag != "agent_run_1-1" || r.Size != 10 || r.ContentType != "text/markdown" || !r.Time.Equal(when) ||
			r.Time.Location() != time.UTC || r.Title != "Example" || string(r.Args) != `{"url":"https://example.test/"}` {
			t.Fatalf("receipt = %+v", r)
		}
	}
	if _, _, err := GetVerified(ctx, mem, "ev/nope/x-y-000000000000.md"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing = %v, want ErrNotFound", err)
	}
}

func TestFileRetryWritesNothing(t *testing.T) {
	ctx := context.Background()
	mem := NewMemory()
	store := &counting{Store: mem}
	first, err := File(ctx, store, filing("same bytes"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(store.writes()); n != 2 {
		t.Fatalf("first filing wrote %d objects, want 2", n)
	}
	// A retry with identical inputs, and one whose receipt differs (a later
	// clock reading): neither writes, both get the same claim check.
	retry := filing("same bytes")
	later := filing("same bytes")
	later.Receipt.Time = when.Add(time.Minute)
	for _, f := range []Filing{retry, later} {
		cc, err := File(ctx, store, f)
		if err != nil {
			t.Fatal(err)
		}
		if cc != first {
			t.Fatalf("retry claim check %+v != %+v", cc, first)
		}
	}
	if n := len(store.writes()); n != 2 || mem.Writes() != 2 {
		t.Fatalf("retries wrote: %v", store.writes())
	}
	_, r, err := GetVerified(ctx, mem, first.Key)
	if err != nil || !r.Time.Equal(when) {
		t.Fatalf("receipt after retries = %+v, %v; want the original time", r, err)
	}
}

func TestFileConflicts(t *testing.T) {
	ctx := context.Background()
	f := filing("body")
	key := BodyKey(f.Prefix, f.WorkflowID, f.SessionTag, f.CallID, f.Tool, SHA256Hex(f.Body), f.Ext)

	mem := NewMemory()
	if _, err := mem.Put(ctx, key, []byte("squatter"), "text/plain"); err != nil {
		t.Fatal(err)
	}
	_, err := File(ctx, mem, f)
	var ce *ConflictError
	if !errors.As(err, &ce) || !errors.Is(err, ErrKeyConflict) || ce.New != SHA256Hex(f.Body) {
		t.Fatalf("body conflict = %v", err)
	}

	mem = NewMemory()
	if _, err := mem.Put(ctx, ReceiptKey(key), []byte(`{"sha256":"feed","body_key":"elsewhere"}`), "application/json"); err != nil {
		t.Fatal(err)
	}
	if _, err := File(ctx, mem, f); !errors.Is(err, ErrReceiptMismatch) {
		t.Fatalf("foreign receipt = %v, want ErrReceiptMismatch", err)
	}

	if _, err := File(ctx, NewMemory(), Filing{Tool: "x"}); err == nil {
		t.Fatal("a filing without workflow and call ids was accepted")
	}
}

func TestTamperedBodyFailsVerification(t *testing.T) {
	ctx := context.Background()
	mem := NewMemory()
	cc, err := File(ctx, mem, filing("original"))
	if err != nil {
		t.Fatal(err)
	}
	mem.Overwrite(cc.Key, []byte("forged"))
	_, _, err = GetVerified(ctx, mem, cc.Key)
	var he *HashMismatchError
	if !errors.As(err, &he) || he.Want != cc.SHA256 || he.Got != SHA256Hex([]byte("forged")) {
		t.Fatalf("tampered get = %v", err)
	}
	if _, _, err := mem.Get(ctx, cc.Key); !errors.Is(err, ErrHashMismatch) {
		t.Fatalf("store get = %v", err)
	}
}

func TestBodyWithoutReceipt(t *testing.T) {
	ctx := context.Background()
	mem := NewMemory()
	f := filing("half filed")
	key := BodyKey(f.Prefix, f.WorkflowID, f.SessionTag, f.CallID, f.Tool, SHA256Hex(f.Body), f.Ext)
	if _, err := mem.Put(ctx, key, f.Body, f.ContentType); err != nil {
		t.Fatal(err)
	}
	body, r, err := GetVerified(ctx, mem, key)
	if err != nil || r != nil || string(body) != "half filed" {
		t.Fatalf("= %q, %v, %v", body, r, err)
	}
	// The retry completes the filing.
	if _, err := File(ctx, mem, f); err != nil {
		t.Fatal(err)
	}
	if _, r, err := GetVerified(ctx, mem, key); err != nil || r == nil {
		t.Fatalf("after retry: %v, %v", r, err)
	}
}

func TestInlineInClaimCheck(t *testing.T) {
	ctx := context.Background()
	f := filing(strings.Repeat("w", int(DefaultInlineBudget)+1))
	cc, err := File(ctx, NewMemory(), f)
	if err != nil || cc.Inline != "" {
		t.Fatalf("large body inlined: %v %d", err, len(cc.Inline))
	}
	shot := Filing{WorkflowID: "wf", SessionTag: "wf-1", CallID: "3", Tool: "screenshot", Ext: "png",
		ContentType: "image/png", Body: []byte(strings.Repeat("\x00", 64<<10)), Receipt: contract.Receipt{Status: "ok", Time: when}}
	cc, err = File(ctx, NewMemory(), shot)
	if err != nil || cc.Inline != "" || cc.InlineEncoding != "" {
		t.Fatalf("screenshot over budget inlined: %v", err)
	}
}

func TestS3OptionsRefused(t *testing.T) {
	ctx := context.Background()
	for _, o := range []S3Options{
		{},
		{Bucket: "b", SSE: "rot13"},
		{Bucket: "b", SSE: "AES256", KMSKeyID: "k"},
		{Bucket: "b", AccessKey: "only-half"},
	} {
		if _, err := NewS3(ctx, o); err == nil {
			t.Errorf("NewS3(%+v) accepted", o)
		}
	}
}
