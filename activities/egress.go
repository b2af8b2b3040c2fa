package activities

import (
	"fmt"

	"github.com/rs/zerolog"

	"github.com/durable-browser/durable-browser/internal/egress"
	"github.com/durable-browser/durable-browser/internal/netguard"
	"github.com/durable-browser/durable-browser/providers"
)

// capable is what a provider says it can do (local.Provider, cdp.Provider).
type capable interface {
	Capabilities() providers.Capabilities
}

// startEgress starts the egress proxy for a new session's browser when the
// worker guards the browser's reach (pol) and the provider can route the
// browser through it; nil otherwise.
func (a *Activities) startEgress(p providers.Provider, tag string, pol *netguard.Policy, log zerolog.Logger) (*egress.Proxy, error) {
	c, ok := p.(capable)
	if pol == nil || !ok || !c.Capabilities().Egress {
		return nil, nil
	}
	// The proxy reads https and wss too (a CA of its own, in memory, or
	// the provider's when its browsers are shared); the browser is started
	// with its pin.
	return egress.Start(egress.Options{Policy: pol, Resolver: a.o.Resolver, Intercept: true, RootCAs: a.o.SiteRoots, Owner: tag, CA: egressCA(p), Logger: log})
}

// egressCA is the CA a provider's sessions' proxies sign under when it
// shares one browser between sessions (local.Provider.EgressCA under
// context isolation), nil when each proxy makes its own.
func egressCA(p providers.Provider) *egress.CA {
	if c, ok := p.(interface{ EgressCA() *egress.CA }); ok {
		return c.EgressCA()
	}
	return nil
}

// foundEgress returns the proxy a found browser's traffic goes through. A
// browser started by this process already has it (another create of the
// tag holds it): eg is closed and nil returned, as that create keeps the
// session. A browser from an earlier worker process sends to an address
// no proxy serves any more: a proxy is started there, under this
// session's policy; if the address is taken (by another program, or by
// another session's proxy: ports are reused), the browser cannot be
// guarded and the error says so. That proxy cannot read the browser's TLS:
// the browser accepts only the CA its first proxy made, whose key died
// with that process, so TLS passes through judged by host and port.
func (a *Activities) foundEgress(eg *egress.Proxy, tag string, sess *providers.Session, pol *netguard.Policy, log zerolog.Logger) (*egress.Proxy, error) {
	if eg == nil || sess.Egress == eg.Addr() {
		return eg, nil
	}
	_ = eg.Close()
	switch {
	case sess.Egress == "":
		log.Warn().Msg("found a browser started without an egress proxy: its WebSockets and WebRTC are not guarded")
		return nil, nil
	}
	if owner, ok := egress.Owner(sess.Egress); ok {
		if owner != tag {
			// Under that proxy the browser would go by another session's
			// policy and secrets.
			return nil, fmt.Errorf("the found browser's egress proxy address %s now serves another session", sess.Egress)
		}
		return nil, nil // another create of this tag holds it
	}
	np, err := egress.Listen(sess.Egress, egress.Options{Policy: pol, Resolver: a.o.Resolver, Owner: tag, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("the found browser's egress proxy address: %w", err)
	}
	log.Warn().Msg("found a browser of an earlier worker process: its https and wss content is not searched for typed secrets (the key it trusts died with that process); release it to start one that is")
	return np, nil
}

// holdsSafely says whether the browser's traffic is in this worker's hands:
// whether a request held for approval (action policy ask) dies with this
// worker, and whether an allow list holds for every connection. Chrome sends a request paused by the DevTools
// connection that paused it once that connection drops. A browser routed
// through this worker's egress proxy cannot reach anything once the worker
// is gone; a browser that outlives the worker and reaches the network by
// itself (cdp, rented) would send the held request unapproved on a crash.
func holdsSafely(p providers.Provider) bool {
	c, ok := p.(capable)
	return !ok || c.Capabilities().Egress
}
