package workflows

import (
	"crypto/sha256"
	"encoding/base64"

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
		// 64 bits in 11 characters (base64url): unguessable, and short,
		// as every answer with page text carries it twice.
		b.st.Fence = base64.RawURLEncoding.EncodeToString(sum[:8])
	}
	return b.st.Fence
}

// fenced returns a copy of a tool's result with every page-derived text
// (snapshot text, read and fetched content, search titles and snippets,
// dialog and console messages, what a check found) in the session's fence. The typed Go
// results are left as they are; the model's answers are fenced.
func fenced(nonce string, v any) any {
	f := func(s string) string { return contract.Fence(nonce, s) }
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
		c.Dialogs = append([]contract.Dialog(nil), r.Dialogs...)
		for i := range c.Dialogs {
			c.Dialogs[i].Message = f(c.Dialogs[i].Message)
		}
		c.ConsoleErrors = append([]string(nil), r.ConsoleErrors...)
		for i := range c.ConsoleErrors {
			c.ConsoleErrors[i] = f(c.ConsoleErrors[i])
		}
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
		c.Checks = append([]contract.CheckItem(nil), r.Checks...)
		for i := range c.Checks {
			if c.Checks[i].Check != "url" { // the URL is scrubbed, as every result's
				c.Checks[i].Found = f(c.Checks[i].Found)
			}
		}
		c.Warnings = append([]string(nil), r.Warnings...)
		for i := range c.Warnings {
			c.Warnings[i] = f(c.Warnings[i])
		}
		return &c
	case *contract.WebFetchResult:
		c := *r
		c.Content = f(c.Content)
		return &c
	case *contract.WebSearchResult:
		c := *r
		c.Hits = append([]contract.SearchHit(nil), r.Hits...)
		for i := range c.Hits {
			c.Hits[i].Title, c.Hits[i].Snippet = f(c.Hits[i].Title), f(c.Hits[i].Snippet)
		}
		return &c
	case *contract.HandoffResult:
		c := *r
		c.Snapshot = snap(r.Snapshot)
		return &c
	}
	return v
}
