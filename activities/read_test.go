package activities

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/capture"
	"github.com/durable-browser/durable-browser/internal/evidence"
)

// A read of a page over the read cap (8 MiB) answers the whole's length,
// never the cap's, and says the evidence was cut and where: filed_cut and
// a note; the claim check's size is what was filed. A page under the cap
// is filed whole, and says nothing of a cut.
func TestReadOverTheCapSaysTheEvidenceWasCut(t *testing.T) {
	const words = 1_700_000 // 8.5 MB of text, 8,499,999 characters
	h := shotHarness(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.URL.Path == "/small" {
			fmt.Fprint(w, "<!doctype html><title>small</title><p>"+strings.Repeat("word ", 100)+"</p>")
			return
		}
		fmt.Fprint(w, "<!doctype html><title>big</title><p>"+strings.Repeat("word ", words)+"</p>")
	}))
	t.Cleanup(srv.Close)
	ref := h.create("t-1", contract.SessionOptions{AllowHosts: []string{"127.0.0.1"}})
	read := func(what string) *contract.ReadResult {
		t.Helper()
		res, err := call[contract.ReadResult](h, contract.ActivityRead, contract.ReadRequest{Call: contract.Call{Session: ref}, Args: contract.ReadArgs{What: what}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	filed := func(cc contract.ClaimCheck) []byte {
		t.Helper()
		body, _, err := h.a.o.Evidence.Store.Get(context.Background(), cc.Key)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(body)) != cc.Size {
			t.Fatalf("claim check size %d, filed %d bytes", cc.Size, len(body))
		}
		return body
	}
	// The receipt beside a cut body says it is the first part.
	receiptCut := func(cc contract.ClaimCheck) string {
		t.Helper()
		_, r, err := evidence.GetVerified(context.Background(), h.a.o.Evidence.Store, cc.Key)
		if err != nil {
			t.Fatal(err)
		}
		return r.Cut
	}

	if _, err := call[contract.RunResult](h, contract.ActivityRun, runReq(ref, []byte(`[{"op":"goto","url":"`+srv.URL+`/small"}]`))); err != nil {
		t.Fatal(err)
	}
	small := read("text")
	if small.FiledCut != 0 || small.Note != "" || small.FullLength != 499 || string(filed(small.Evidence)) != small.Content {
		t.Fatalf("a small page's read: full length %d, filed cut %d, note %q, evidence %d bytes", small.FullLength, small.FiledCut, small.Note, small.Evidence.Size)
	}
	if c := receiptCut(small.Evidence); c != "" {
		t.Fatalf("a whole read's receipt says it was cut: %q", c)
	}

	if _, err := call[contract.RunResult](h, contract.ActivityRun, runReq(ref, []byte(`[{"op":"goto","url":"`+srv.URL+`/big"},{"op":"wait","load":true}]`))); err != nil {
		t.Fatal(err)
	}
	html := len("<!DOCTYPE html><html><head><title>big</title></head><body><p>" + strings.Repeat("word ", words) + "</p></body></html>")
	for _, c := range []struct {
		what, note, receipt string
		full                int
	}{
		{"text", "the page's text is 8499999 characters (full_length)", "the page's text of 8499999 characters", words*5 - 1},
		{"html", fmt.Sprintf("the page's HTML is %d characters (full_length)", html), fmt.Sprintf("the page's html of %d characters", html), html},
		{"markdown", "only its first 8388608 bytes were converted to markdown", "the first 8388608 bytes of the page's HTML", 0},
	} {
		res := read(c.what)
		if got := receiptCut(res.Evidence); !strings.Contains(got, c.receipt) {
			t.Errorf("%s: the receipt's cut %q, want it to say %q", c.what, got, c.receipt)
		}
		if c.full != 0 && res.FullLength != c.full {
			t.Errorf("%s: full_length %d, want %d: the whole's, not the cap's", c.what, res.FullLength, c.full)
		}
		if res.FiledCut != capture.MaxRawBytes || !strings.Contains(res.Note, c.note) ||
			!strings.Contains(res.Note, fmt.Sprintf("(%d bytes)", res.Evidence.Size)) && !strings.Contains(res.Note, fmt.Sprintf("first %d bytes only", res.Evidence.Size)) {
			t.Errorf("%s: filed_cut %d, note %q; want the cut at %d and %q", c.what, res.FiledCut, res.Note, capture.MaxRawBytes, c.note)
		}
		body := filed(res.Evidence)
		if len(body) > capture.MaxRawBytes || !strings.HasPrefix(string(body), res.Content) || !res.Truncated {
			t.Errorf("%s: filed %d bytes, truncated %v; want at most the cap, starting with the content", c.what, len(body), res.Truncated)
		}
	}
}
