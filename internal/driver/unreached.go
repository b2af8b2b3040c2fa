package driver

import (
	"fmt"
	"slices"
	"strings"

	"github.com/go-rod/rod/lib/proto"

	"github.com/durable-browser/durable-browser/internal/egress"
	"github.com/durable-browser/durable-browser/internal/scrub"
)

// unreachedMark is the egress proxy's mark on a document response (its own
// page saying the site could not be reached): the cause, or "". Only a
// browser behind the proxy is asked, since the proxy strips the header
// from every site's response and elsewhere a site could send it.
//
// Only the proxy's own answer counts: a 502 from the network (a page's
// service worker can answer a navigation with any headers it likes, and
// that answer never passes the proxy), carrying one of the causes the
// proxy names, so no site puts its own words in the action's failure.
func (b *Browser) unreachedMark(r *proto.NetworkResponse) string {
	if b.o.Egress == nil || r == nil || r.Status != 502 || r.FromServiceWorker || r.FromPrefetchCache || r.FromDiskCache {
		return ""
	}
	for k, v := range r.Headers {
		if strings.EqualFold(k, egress.UnreachableHeader) {
			if c := strings.TrimSpace(v.Str()); slices.Contains(egress.UnreachableCauses, c) {
				return c
			}
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
