package driver

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-rod/rod/lib/proto"

	"github.com/durable-browser/durable-browser/internal/egress"
	"github.com/durable-browser/durable-browser/internal/netguard"

	"github.com/durable-browser/durable-browser/contract"
)

// blocked is a request the reach guard stopped before it left the browser,
// as a run lists it (no path, query or body; Secret names the typed secret
// a request of rule RuleSecret carried, never its value), and what the
// driver keeps of it besides.
type blocked struct {
	contract.BlockedRequest
	// message names the rule and what would allow the request.
	message string
	// tab is set when the request was that tab's own navigation.
	tab *tab
}

// BlockedError is a navigation the reach guard stopped.
type BlockedError struct {
	Method, Origin, Rule, Message string
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("navigation to %s blocked: %s", e.Origin, e.Message)
}

// Resolver looks names up for the reach guard (net.DefaultResolver).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

const (
	reachTTL       = 30 * time.Second
	reachLookupMax = 5 * time.Second
	reachCacheMax  = 2048
)

type reachEntry struct {
	addrs   []netip.Addr
	err     error
	expires time.Time
}

// reachCache remembers lookups for reachTTL, so a page's hundred requests
// to one host cost one lookup.
type reachCache struct {
	mu sync.Mutex
	m  map[string]reachEntry
}

// reachDecide is the guard's decision for one request URL.
func (b *Browser) reachDecide(ctx context.Context, raw string) netguard.Decision {
	p := b.o.Reach
	t, ok := netguard.ParseTarget(raw)
	if !ok {
		return netguard.Decision{}
	}
	var addrs []netip.Addr
	var err error
	if p.NeedsLookup(t) {
		addrs, err = b.resolveHost(ctx, t.Host.Name)
	}
	return p.Decide(t, addrs, err)
}

func (b *Browser) resolveHost(ctx context.Context, host string) ([]netip.Addr, error) {
	now := time.Now()
	c := &b.reach
	c.mu.Lock()
	if e, ok := c.m[host]; ok && now.Before(e.expires) {
		c.mu.Unlock()
		return e.addrs, e.err
	}
	c.mu.Unlock()
	r := b.o.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	lctx, cancel := context.WithTimeout(ctx, reachLookupMax)
	addrs, err := r.LookupNetIP(lctx, "ip", host)
	cancel()
	if ctx.Err() != nil {
		return nil, ctx.Err() // not remembered: the next request asks again
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= reachCacheMax {
		c.m = map[string]reachEntry{}
	}
	c.m[host] = reachEntry{addrs: addrs, err: err, expires: now.Add(reachTTL)}
	c.mu.Unlock()
	return addrs, err
}

// paused handles one request the Fetch domain holds at the Request stage:
// the reach guard first, then the approval gate. counted says the event
// loop counted it as a gate decision under way.
func (b *Browser) paused(sid proto.TargetSessionID, e *proto.FetchRequestPaused, counted bool) {
	// The host name first: the reach guard's lookup would carry a secret
	// spelled into it to the name's name servers.
	if e.ResponseStatusCode == nil {
		if br, hit := b.hostSecret(e.Request.URL); hit {
			b.block(sid, e, counted, br)
			return
		}
	}
	if b.o.Reach != nil && e.ResponseStatusCode == nil {
		d := b.reachDecide(b.ctx, e.Request.URL)
		if !d.Allowed() {
			b.block(sid, e, counted, blocked{BlockedRequest: contract.BlockedRequest{Rule: string(d.Rule)}, message: d.Message})
			return
		}
	}
	if e.ResponseStatusCode == nil {
		if name, why, ok := b.secretIn(b.ctx, sid, e); ok {
			o, _ := b.originPath(e.Request.URL)
			b.block(sid, e, counted, blocked{BlockedRequest: contract.BlockedRequest{Rule: RuleSecret, Secret: name},
				message: fmt.Sprintf("%s is not one of the origins secret %s belongs to, and %s", o, name, why)})
			return
		}
	}
	if b.o.RequestGate != nil {
		b.gate(sid, e)
		return
	}
	// Journaled here, once the guard let it go: Network events come
	// before the Fetch pause, so they would list blocked requests too.
	if !safeMethod(e.Request.Method) && e.ResponseStatusCode == nil {
		o, p := b.originPath(e.Request.URL)
		b.mu.Lock()
		b.ev.sent.Add(contract.SentRequest{Method: e.Request.Method, Origin: o, Path: p})
		b.mu.Unlock()
	}
	_ = proto.FetchContinueRequest{RequestID: e.RequestID}.Call(b.client(b.ctx, sid))
}

// block fails the paused request before it leaves and lists it as br.
func (b *Browser) block(sid proto.TargetSessionID, e *proto.FetchRequestPaused, counted bool, br blocked) {
	br.Method = e.Request.Method
	if br.Origin == "" {
		br.Origin, _ = b.originPath(e.Request.URL)
	}
	o := br.Origin
	b.mu.Lock()
	if t := b.sessions[sid]; t != nil && e.ResourceType == proto.NetworkResourceTypeDocument && string(e.FrameID) == string(t.id) {
		br.tab = t
		// What the error page the tab shows next says it failed for.
		t.failURL, t.failWhy = e.Request.URL, "the session's reach policy refused it: "+br.message
	}
	b.blockedLocked(br)
	if counted {
		b.gating--
	}
	b.mu.Unlock()
	// Listed before the page learns of the failure, so whatever the page
	// does next finds it in the run's result.
	if err := (proto.FetchFailRequest{RequestID: e.RequestID, ErrorReason: proto.NetworkErrorReasonBlockedByClient}).Call(b.client(b.ctx, sid)); err != nil {
		b.log.Debug().Err(err).Msg("driver: fail blocked request")
	}
	b.log.Debug().Str("rule", br.Rule).Str("secret", br.Secret).Str("origin", o).Msg("driver: request blocked")
}

// egressBlocked lists what the egress proxy refused, as the reach guard
// lists what it blocks: what carried a typed secret at once, a refused
// connection or request once a page of the session is known to have asked
// for its host and port (a WebSocket it opened, a request it made). The
// proxy also refuses connections Chrome makes on its own (update checks,
// sign-in); no page asked for those, so they are logged, not listed.
func (b *Browser) egressBlocked(e egress.Blocked) {
	br := blocked{BlockedRequest: contract.BlockedRequest{Method: e.Method, Origin: e.Origin, Rule: e.Rule, Secret: e.Secret}, message: e.Message}
	list := func() {
		b.mu.Lock()
		b.blockedLocked(br)
		b.mu.Unlock()
	}
	if e.Rule == egress.RuleSecret {
		list()
		return
	}
	key := hostPort(e.Origin)
	if b.pageAsked(key) {
		list()
		return
	}
	// The page's event may still be on its way from the browser.
	go func() {
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		deadline := time.NewTimer(askedGrace)
		defer deadline.Stop()
		for {
			select {
			case <-t.C:
				if b.pageAsked(key) {
					list()
					return
				}
			case <-deadline.C:
				b.log.Debug().Str("rule", e.Rule).Str("to", key).Msg("driver: the egress proxy refused a connection no page asked for")
				return
			case <-b.ctx.Done():
				return
			}
		}
	}()
}

// askedGrace is how long a refusal of the egress proxy waits for the
// event of the page that asked for it.
const askedGrace = 500 * time.Millisecond

// addAsked remembers that a page asked for rawURL's host and port; b.mu
// is held.
func (b *Browser) addAsked(rawURL string) {
	key := hostPort(rawURL)
	if key == "" {
		return
	}
	if b.asked == nil || len(b.asked) > 1000 {
		b.asked = map[string]struct{}{}
	}
	b.asked[key] = struct{}{}
}

func (b *Browser) pageAsked(key string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.asked[key]
	return key != "" && ok
}

// hostPort spells a URL's or a CONNECT's destination as host:port, the
// scheme's default port filled in.
func hostPort(s string) string {
	scheme := ""
	if i := strings.Index(s, "://"); i > 0 {
		scheme, s = strings.ToLower(s[:i]), s[i+3:]
		if j := strings.IndexAny(s, "/?#"); j >= 0 {
			s = s[:j]
		}
		if j := strings.LastIndex(s, "@"); j >= 0 {
			s = s[j+1:]
		}
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		host = strings.Trim(s, "[]")
		switch scheme {
		case "https", "wss":
			port = "443"
		case "http", "ws":
			port = "80"
		default:
			return ""
		}
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil || host == "" {
		return ""
	}
	return net.JoinHostPort(strings.TrimSuffix(strings.ToLower(host), "."), port)
}

// intercepting reports whether the driver holds requests in the Fetch domain.
func (b *Browser) intercepting() bool {
	return b.o.RequestGate != nil || b.o.Reach != nil || b.o.GuardSecrets
}
