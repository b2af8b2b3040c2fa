package workflows

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"strings"

	"github.com/tyler-smith/go-bip39/wordlists"

	"go.temporal.io/sdk/workflow"

	"github.com/durable-browser/durable-browser/contract"
)

// fenceNonce is the session's fence code: made once from the first run's
// id, which Temporal chose at random and no page sees, and carried across
// continue-as-new. Deterministic, so a replay fences alike.
func (b *Browser) fenceNonce(ctx workflow.Context) string {
	if b.st.Fence == "" {
		we := workflow.GetInfo(ctx).WorkflowExecution
		sum := sha256.Sum256([]byte("durable-browser fence\x00" + we.ID + "\x00" + we.RunID))
		if workflow.GetVersion(ctx, changeFenceWords, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
			b.st.Fence = base64.RawURLEncoding.EncodeToString(sum[:8]) // 64 bits in 11 characters
		} else {
			b.st.Fence = fenceWords(sum)
		}
	}
	return b.st.Fence
}

// fenceWords is six words of the BIP-39 English list (2,048 common words,
// each one token to most tokenizers) chosen by 66 bits of sum: a code as
// hard to guess as 11 random characters, in about six tokens instead of
// nine.
func fenceWords(sum [32]byte) string {
	bits := binary.BigEndian.Uint64(sum[:8])
	extra := uint64(sum[8]) // two more bits for the sixth word
	words := make([]string, 6)
	for i := range words {
		var n uint64
		if i < 5 {
			n = bits >> (64 - 11*(i+1)) & 0x7ff
		} else {
			n = (bits&0x1ff)<<2 | extra>>6 // the last 9 bits and 2 of the next byte
		}
		words[i] = wordlists.English[n]
	}
	return strings.Join(words, " ")
}

// fenced returns a copy of a tool's result with every page-derived text
// (snapshot text, read and fetched content, search titles and snippets,
// dialog and console messages, what a check found) in the session's fence. The typed Go
// results are left as they are; the model's answers are fenced.
func fenced(nonce string, v any) any {
	f := func(s string) string { return contract.Fence(nonce, s) }
	fs := func(s *string) { *s = f(*s) }
	snap := func(s *contract.SnapshotResult) *contract.SnapshotResult {
		if s == nil {
			return nil
		}
		c := *s
		c.Text = f(c.Text)
		return &c
	}
	switch r := v.(type) {
	case *contract.SnapshotResult:
		return snap(r)
	case *contract.RunResult:
		c := *r
		if r.Observed != nil {
			o := *r.Observed
			o.Text = f(o.Text)
			c.Observed = &o
		}
		c.Dialogs = fenceEach(r.Dialogs, func(d *contract.Dialog) { d.Message = f(d.Message) })
		c.ConsoleErrors = fenceEach(r.ConsoleErrors, fs)
		// A code cell's console lines: what its code logged, often the
		// page's text (console.log(snapshot.text)).
		c.Console = fenceEach(r.Console, fs)
		return &c
	case *contract.ReadResult:
		c := *r
		if c.What != "url" {
			c.Content = f(c.Content)
		}
		return &c
	case *contract.CheckResult:
		// What was found is the page's text (an excerpt, an element's
		// name, console messages); what was expected is the model's own.
		c := *r
		c.Checks = fenceEach(r.Checks, func(k *contract.CheckItem) {
			if k.Check != "url" { // the URL is scrubbed, as every result's
				k.Found = f(k.Found)
			}
		})
		c.Warnings = fenceEach(r.Warnings, fs)
		return &c
	case *contract.WebFetchResult:
		c := *r
		c.Content = f(c.Content)
		return &c
	case *contract.WebSearchResult:
		c := *r
		c.Hits = fenceEach(r.Hits, func(h *contract.SearchHit) { h.Title, h.Snippet = f(h.Title), f(h.Snippet) })
		return &c
	case *contract.HandoffResult:
		c := *r
		c.Snapshot = snap(r.Snapshot)
		return &c
	}
	return v
}

// fenceEach is a copy of items (nil when there are none) with fence applied
// to each.
func fenceEach[T any](items []T, fence func(*T)) []T {
	out := append([]T(nil), items...)
	for i := range out {
		fence(&out[i])
	}
	return out
}
