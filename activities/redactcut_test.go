package activities

import (
	"errors"
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/contract"
)

func TestFailureDetailRedactedBeforeCut(t *testing.T) {
	const secret = "Zq7vXw2LmN9pR4tY6uB1cD3eF5gH8jK0aS2dQ4wE" // 40 characters
	h := newHarness(t, nil)
	h.red.Register(secret)
	// The browser's error ends with the secret, and the detail's bound
	// falls 20 characters into it.
	h.setup = func(b *fakeBrowser) {
		b.snapErr = errors.New(strings.Repeat("e", contract.MaxDetail-20) + secret)
	}
	ref := h.create("t-1", contract.SessionOptions{})
	_, err := call[contract.SnapshotResult](h, contract.ActivitySnapshot, contract.SnapshotRequest{Call: contract.Call{Session: ref}})
	f := failure(t, err)
	if len(f.Detail) > contract.MaxDetail {
		t.Fatalf("detail is %d bytes, over %d", len(f.Detail), contract.MaxDetail)
	}
	for i := 0; i+8 <= len(secret); i++ {
		if strings.Contains(f.Detail, secret[i:i+8]) || strings.Contains(f.Message, secret[i:i+8]) {
			t.Fatalf("failure keeps %q of the secret", secret[i:i+8])
		}
	}
}
