package activities

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/egress"
	"github.com/durable-browser/durable-browser/internal/netguard"
	"github.com/durable-browser/durable-browser/providers"
)

// warmPrefix starts every warm browser's tag. tags.Encode, which makes the
// workflows' session tags, never writes it ('_' is followed there by '_',
// a hex pair or 'h'), and Create refuses a tag that starts with it.
const warmPrefix = "_warm-"

// retagger hands a browser started under one tag to another
// (local.Provider.Retag).
type retagger interface {
	Retag(ctx context.Context, from, to string, made *contract.SessionOptions) (*providers.Session, error)
}

// warmBrowser is a plain browser started ahead of any session, with its
// own egress proxy (unbound: it refuses everything until a session takes
// it), its DevTools endpoint listed among the worker's services.
type warmBrowser struct {
	tag    string
	pid    int
	eg     *egress.Proxy
	unlist func()
}

// warmPool keeps up to size plain browsers of one provider started, so a
// plain session's create takes one instead of waiting for a cold start.
// It refills one browser at a time, only while no create is under way
// (creates come first in the launch queue), and never past MaxBrowsers.
type warmPool struct {
	a    *Activities
	name string
	prov providers.Provider
	size int
	// id keeps this process's warm tags apart from another worker's
	// sharing the profile root.
	id string

	mu     sync.Mutex
	idle   []*warmBrowser
	seq    int
	closed bool

	kick chan struct{}
	stop context.CancelFunc
	done chan struct{}
}

// StartWarm starts keeping Options.WarmBrowsers plain browsers of the
// default provider started (the worker calls it once it has reaped what
// earlier boots left). It does nothing when WarmBrowsers is 0 or the
// provider cannot hand a browser to a tag.
func (a *Activities) StartWarm() {
	p, ok := a.o.Providers[a.o.DefaultProvider]
	if _, can := p.(retagger); !ok || !can || a.o.WarmBrowsers <= 0 || a.warm != nil {
		return
	}
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	ctx, cancel := context.WithCancel(context.Background())
	w := &warmPool{a: a, name: a.o.DefaultProvider, prov: p, size: a.o.WarmBrowsers, id: hex.EncodeToString(b),
		kick: make(chan struct{}, 1), stop: cancel, done: make(chan struct{})}
	a.mu.Lock()
	a.warm = w
	a.mu.Unlock()
	go w.run(ctx)
}

func (a *Activities) warmPool() *warmPool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.warm
}

// fits says a create may take a warm browser: a plain session of the
// pool's provider, whose browser needs nothing at launch that a warm one
// lacks (a profile or a named state in its user data, stealth, a window,
// a recording).
func (w *warmPool) fits(req contract.CreateRequest, provider string) bool {
	o := req.Options
	if w == nil || provider != w.name || o.Profile != nil || o.State != "" || o.Stealth || o.Headed || o.Record {
		return false
	}
	// A warm browser of a shared Chrome is a context there, which an
	// approval gate cannot hold popups in (local.Provider's ownBrowser).
	s, shares := w.prov.(interface{ SharesBrowsers() bool })
	return !shares || !s.SharesBrowsers() || (o.ActionPolicy != contract.PolicyAsk && o.ActionPolicy != contract.PolicyDeny)
}

// take hands out the oldest warm browser, nil when there is none.
func (w *warmPool) take() *warmBrowser {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.idle) == 0 {
		return nil
	}
	b := w.idle[0]
	w.idle = w.idle[1:]
	return b
}

// count is how many warm browsers wait, and their pids.
func (w *warmPool) count() (int, []int) {
	if w == nil {
		return 0, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	pids := make([]int, 0, len(w.idle))
	for _, b := range w.idle {
		pids = append(pids, b.pid)
	}
	return len(w.idle), pids
}

// wake asks the pool to look at its size again (a create ended).
func (w *warmPool) wake() {
	if w == nil {
		return
	}
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

func (w *warmPool) run(ctx context.Context) {
	defer close(w.done)
	// A failed start is tried again after a pause, not at once.
	retry := time.NewTicker(5 * time.Second)
	defer retry.Stop()
	for {
		for w.wants() && w.fill(ctx) {
		}
		select {
		case <-ctx.Done():
			return
		case <-w.kick:
		case <-retry.C:
		}
	}
}

// wants says one more warm browser is due: fewer than size wait, no
// create is under way, and the worker's browsers with one more stay
// within MaxBrowsers.
func (w *warmPool) wants() bool {
	a := w.a
	a.mu.Lock()
	defer a.mu.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	held := len(a.sessions) + a.creating + len(w.idle)
	return !w.closed && len(w.idle) < w.size && a.creating == 0 && (a.o.MaxBrowsers <= 0 || held < a.o.MaxBrowsers)
}

// fill starts one warm browser; false when it could not.
func (w *warmPool) fill(ctx context.Context) bool {
	w.mu.Lock()
	w.seq++
	tag := warmPrefix + w.id + "-" + strconv.Itoa(w.seq)
	w.mu.Unlock()
	log := w.a.log.With().Str("warm", tag).Logger()
	b, err := w.start(ctx, tag, log)
	if err != nil {
		if ctx.Err() == nil {
			log.Warn().Err(err).Msg("starting a warm browser")
		}
		return false
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		w.discard(b)
		return false
	}
	w.idle = append(w.idle, b)
	n := len(w.idle)
	w.mu.Unlock()
	log.Debug().Int("pid", b.pid).Int("warm", n).Msg("warm browser ready")
	if n == w.size {
		w.a.log.Info().Int("warm", n).Msg("warm browsers all ready")
	}
	return true
}

// start launches one warm browser through the provider (its launch queue
// included), with an unbound egress proxy when sessions get one.
func (w *warmPool) start(ctx context.Context, tag string, log zerolog.Logger) (*warmBrowser, error) {
	b := &warmBrowser{tag: tag, unlist: func() {}}
	if w.a.o.Reach != nil {
		if c, ok := w.prov.(capable); ok && c.Capabilities().Egress {
			eg, err := egress.Start(egress.Options{Unbound: true, Resolver: w.a.o.Resolver, Intercept: true,
				RootCAs: w.a.o.SiteRoots, Owner: tag, CA: egressCA(w.prov), Logger: log})
			if err != nil {
				return nil, err
			}
			b.eg = eg
		}
	}
	sess, err := w.prov.Create(ctx, providers.CreateOptions{Tag: tag, Egress: b.eg.Addr(), EgressSPKI: b.eg.SPKI()})
	if err != nil {
		if b.eg != nil {
			_ = b.eg.Close()
		}
		return nil, err
	}
	b.pid = sess.PID
	// Its DevTools endpoint is a service from now on: no session's page
	// may drive the browser another session will take.
	if w.a.o.Reach != nil && w.a.o.Reach.Listeners != nil {
		if s, ok := netguard.ServiceFromAddress("warm browser DevTools endpoint", sess.CDPURL); ok {
			l := w.a.o.Reach.Listeners
			key := "warm " + tag
			l.Add(key, s)
			b.unlist = func() { l.Remove(key) }
		}
	}
	return b, nil
}

// discard ends a warm browser nobody took.
func (w *warmPool) discard(b *warmBrowser) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := w.prov.Release(ctx, b.tag); err != nil {
		w.a.log.Warn().Err(err).Str("warm", b.tag).Msg("releasing a warm browser")
	}
	b.unlist()
	if b.eg != nil {
		_ = b.eg.Close()
	}
}

// trim releases warm browsers while they and the worker's sessions and
// creates are more than MaxBrowsers: a create that cannot take one must
// not bring the worker past its bound.
func (w *warmPool) trim() {
	if w == nil || w.a.o.MaxBrowsers <= 0 {
		return
	}
	a := w.a
	a.mu.Lock()
	w.mu.Lock()
	var drop []*warmBrowser
	for len(w.idle) > 0 && len(a.sessions)+a.creating+len(w.idle) > a.o.MaxBrowsers {
		drop = append(drop, w.idle[len(w.idle)-1])
		w.idle = w.idle[:len(w.idle)-1]
	}
	w.mu.Unlock()
	a.mu.Unlock()
	for _, b := range drop {
		go w.discard(b)
	}
}

// close stops refilling and releases every warm browser.
func (w *warmPool) close() {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.closed = true
	idle := w.idle
	w.idle = nil
	w.mu.Unlock()
	w.stop()
	<-w.done
	for _, b := range idle {
		w.discard(b)
	}
}

// takeWarm gives a plain session a warm browser: its proxy bound to the
// session (owner, reach policy) before the browser is handed to the tag,
// so the session's policy is in force before any page loads. Nil when
// the create does not fit, no warm browser waits, or the hand-over failed
// (the warm browser is then released and the create starts one cold).
// unlist takes the warm browser's DevTools endpoint off the services once
// the session has listed it under its own key.
func (a *Activities) takeWarm(ctx context.Context, req contract.CreateRequest, provider string, want *contract.SessionOptions,
	pol *netguard.Policy, log zerolog.Logger) (sess *providers.Session, eg *egress.Proxy, unlist func()) {
	w := a.warmPool()
	if !w.fits(req, provider) {
		return nil, nil, nil
	}
	b := w.take()
	if b == nil {
		return nil, nil, nil
	}
	if b.eg != nil {
		b.eg.Bind(req.Tag, pol, log)
	}
	sess, err := w.prov.(retagger).Retag(ctx, b.tag, req.Tag, want)
	if err != nil {
		log.Warn().Err(err).Str("warm", b.tag).Msg("taking a warm browser; starting one cold")
		go w.discard(b)
		return nil, nil, nil
	}
	log.Info().Str("warm", b.tag).Int("pid", sess.PID).Msg("took a warm browser")
	return sess, b.eg, b.unlist
}

// refuseWarmTag refuses a session tag that could be taken for a warm
// browser's.
func refuseWarmTag(tag string) *contract.Failure {
	if strings.HasPrefix(tag, warmPrefix) {
		return contract.Fail(contract.CodeRefused, "%s", fmt.Sprintf("tags starting %q are the worker's own (warm browsers); use another tag", warmPrefix))
	}
	return nil
}
