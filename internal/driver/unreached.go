package driver

import (
	"fmt"
	"strings"

	"github.com/go-rod/rod/lib/proto"

	"github.com/durable-browser/durable-browser/internal/egress"
	"github.com/durable-browser/durable-browser/internal/scrub"
)

// unreachedMark is the egress proxy's mark on a document response (its own
// page saying the site could not be reached): the cause, or "". Only a
// browser behind the proxy is asked, since the proxy strips the header
// from every site's response and elsewhere a site could send it.
func (b *Browser) unreachedMark(r *proto.NetworkResponse) string {
	if b.o.Egress == nil || r == nil {
		return ""
	}
	for k, v := range r.Headers {
		if strings.EqualFold(k, egress.UnreachableHeader) {
			return truncate(strings.TrimSpace(v.Str()), 60) // the proxy's own words
		}
	}
	return ""
}

// unreachedErr fails an action after which tab t's main frame got a
// document (more than before of them) that is the egress proxy's "could
// not reach" page: Chrome would have failed that navigation itself had it
// connected on its own, and the action fails as it would.
func (b *Browser) unreachedErr(t *tab, before int) error {
	b.mu.Lock()
	n, cause, u := t.docResponses, t.unreached, t.unreachedURL
	b.mu.Unlock()
	if n == before || cause == "" {
		return nil
	}
	return &ActionError{Kind: KindNavigation, Reason: fmt.Sprintf("navigation to %s failed: %s; check the URL, and that its server is up", truncate(scrub.URL(u), 200), cause)}
}
