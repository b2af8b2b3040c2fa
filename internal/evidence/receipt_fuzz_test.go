package evidence

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/durable-browser/durable-browser/contract"
)

// FuzzReceipt: reading filed evidence back trusts nothing stored beside
// it. Whatever bytes replace a receipt (or its body), and whatever key a
// reader names, GetVerified never panics, and what it returns is the body
// filed, with a receipt naming that very body and its hash, or a typed
// failure (a receipt mismatch, a hash mismatch, an invalid or unknown key).
func FuzzReceipt(f *testing.F) {
	f.Add([]byte(`{"tool":"screenshot","sha256":"x","body_key":"y"}`), []byte("filed body"), []byte(""), "", false)
	f.Add([]byte(`not json`), []byte("<html>"), []byte("other body"), "../x", true)
	f.Add([]byte(`{"sha256":null,"body_key":7}`), []byte{}, []byte{0}, "a//b", false)
	f.Add([]byte(`[]`), []byte("x"), []byte("x"), "evidence/wf/tag/call-read-0123456789ab.md", false)
	f.Fuzz(func(t *testing.T, receipt, body, other []byte, key string, replaceBody bool) {
		ctx := context.Background()
		store := NewMemory()
		cc, err := File(ctx, store, Filing{WorkflowID: "wf", SessionTag: "tag", CallID: "call", Tool: "read", Ext: "md",
			ContentType: "text/markdown", Body: body, Receipt: contract.Receipt{Tool: "read"}})
		if err != nil {
			t.Fatal(err)
		}
		check := func(k string, want []byte) {
			got, r, err := GetVerified(ctx, store, k)
			if err != nil {
				var hm *HashMismatchError
				if !errors.Is(err, ErrReceiptMismatch) && !errors.As(err, &hm) && !errors.Is(err, ErrInvalidKey) && !errors.Is(err, ErrNotFound) {
					t.Fatalf("GetVerified(%q): untyped failure %v", k, err)
				}
				return
			}
			if want != nil && !bytes.Equal(got, want) {
				t.Fatalf("GetVerified(%q) returned %q, not the body filed %q", k, got, want)
			}
			if r != nil && (r.SHA256 != SHA256Hex(got) || r.BodyKey != BodyKeyOf(k)) {
				t.Fatalf("GetVerified(%q) returned a receipt for %s (%s), not for the body returned", k, r.BodyKey, r.SHA256)
			}
		}
		check(cc.Key, body)
		check(key, nil)
		store.Overwrite(ReceiptKey(cc.Key), receipt)
		if replaceBody {
			store.Overwrite(cc.Key, other)
		}
		check(cc.Key, body)
		check(ReceiptKey(cc.Key), body)
	})
}
