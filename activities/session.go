package activities

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/rs/zerolog"
	"go.temporal.io/sdk/activity"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/driver"
	"github.com/durable-browser/durable-browser/internal/egress"
	"github.com/durable-browser/durable-browser/internal/netguard"
	"github.com/durable-browser/durable-browser/internal/recorder"
	"github.com/durable-browser/durable-browser/internal/scrub"
	"github.com/durable-browser/durable-browser/internal/states"
	"github.com/durable-browser/durable-browser/internal/tags"
	"github.com/durable-browser/durable-browser/providers"
	"github.com/durable-browser/durable-browser/providers/browserbase"
	"github.com/durable-browser/durable-browser/providers/kernel"
	"github.com/durable-browser/durable-browser/providers/remote"
)

// driverOptions is how the session's browser is driven, found or started:
// the reach guard, and under "ask" and "deny" the approval gate, in force
// from the first request this worker lets go. unlist takes the browser's
// DevTools endpoint off the worker's services again when the create fails.
func (a *Activities) driverOptions(req contract.CreateRequest, prov providers.Provider, ls *liveSession, pol *netguard.Policy, log zerolog.Logger) (do driver.Options, unlist func()) {
	unlist = func() {}
	// Found or started, the browser is driven with the same options: the
	// reach guard, and under "ask" and "deny" the approval gate, are in
	// force on it from the first request this worker lets go.
	do = driver.Options{
		CDPURL:   ls.sess.CDPURL,
		TargetID: ls.sess.TargetID,
		// In a browser shared with other sessions, the session's own
		// context: downloads and new tabs stay in it.
		BrowserContextID: ls.sess.BrowserContextID,
		Stealth:          req.Options.Stealth,
		DownloadDir:      ls.sess.DownloadDir,
		ActionTimeout:    a.o.ActionTimeout,
		ViewportWidth:    ls.made.Viewport.Width,
		ViewportHeight:   ls.made.Viewport.Height,
		// Redact, for page text before the driver cuts it to length, is
		// the worker's Attach's.
		Logger: log,
		// A worker that can type secrets keeps them from leaving toward
		// origins they do not belong to.
		GuardSecrets: a.o.Secrets != nil,
	}
	// Every session's requests are held at the Request stage and judged
	// by the reach guard; "ask" and "deny" add the approval gate.
	if pol != nil {
		p := *pol
		// The browser's own DevTools endpoint is a service too, for this
		// session and (listed while it lives) for every other one of the
		// worker: through it a page would read and drive this browser.
		if s, ok := netguard.ServiceFromAddress("browser DevTools endpoint", ls.sess.CDPURL); ok {
			p.Services = append(append([]netguard.Service(nil), p.Services...), s)
			if l := p.Listeners; l != nil {
				key := fmt.Sprintf("%s %p", req.Tag, ls)
				l.Add(key, s)
				ls.unlist = func() { l.Remove(key) }
				unlist = ls.unlist
			}
		}
		do.Reach = &p
		if ls.egress != nil {
			ls.egress.SetPolicy(&p)
			do.Egress = ls.egress
		}
	}
	if p := req.Options.ActionPolicy; p == contract.PolicyAsk || p == contract.PolicyDeny {
		do.RequestGate = a.gate(ls)
	}
	a.openView(req.Tag, prov, ls.sess, ls)
	if ls.hands != nil {
		do.Takeover = takeoverGate{ls}
	}
	return do, unlist
}

// refuseCreate checks what a create asks for before anything starts: a
// provider this worker has, and options it can hold the browser to.
func (a *Activities) refuseCreate(req contract.CreateRequest) (providers.Provider, string, *contract.Failure) {
	name := req.Options.Provider
	if name == "" {
		name = a.o.DefaultProvider
	}
	p, ok := a.o.Providers[name]
	if !ok {
		if how, known := setup[name]; known {
			return nil, "", contract.Fail(contract.CodeRefused, "provider %q is not configured on this worker (%s); use one of %v", name, how, a.providerNames())
		}
		return nil, "", contract.Fail(contract.CodeRefused, "provider %q is not configured on this worker; use one of %v", name, a.providerNames())
	}
	if len(req.Options.AllowHosts) > 0 {
		if err := netguard.ValidateHostList(req.Options.AllowHosts); err != nil {
			return nil, "", contract.Fail(contract.CodeRefused, "allow_hosts: %v", err)
		}
		if a.o.Reach == nil {
			// Nothing here would hold the browser to the list: refuse
			// rather than open a session that ignores it.
			return nil, "", contract.Fail(contract.CodeRefused, "this worker cannot enforce the allow_hosts policy (it runs without the reach guard); open the session without allow_hosts or on another worker")
		}
		if !holdsSafely(p) {
			// Request interception holds pages' HTTP to the list, but a
			// WebSocket or WebRTC leaves such a browser unseen: only a
			// browser routed through this worker's egress proxy is held.
			return nil, "", contract.Fail(contract.CodeRefused,
				"a %s browser reaches the network by itself, so its WebSockets and WebRTC would escape the allow_hosts policy; use provider local for a session with allow_hosts, or open it without the list", name)
		}
	}
	if v := req.Options.Viewport; v != nil {
		if err := v.Validate(); err != nil {
			return nil, "", contract.Fail(contract.CodeRefused, "%v", err)
		}
	}
	if pr := req.Options.Profile; pr != nil {
		if err := pr.Validate(); err != nil {
			return nil, "", contract.Fail(contract.CodeRefused, "%v", err)
		}
		// The host grants profiles; whatever asked for this one (a model's
		// browser_relaunch) cannot.
		if !contract.Granted(req.Grants, *pr) && !contract.Granted(a.o.ProfileGrants, *pr) {
			what := "use"
			if pr.Save {
				what = "save"
			}
			return nil, "", contract.Fail(contract.CodeRefused,
				"profile %q is not granted to this session (to %s it); continue without it, or ask the host to grant it: the session's profile_grants (durable-browser call --grant-profile) or the worker's --profile-grants", pr.Name, what)
		}
	}
	if req.Options.ActionPolicy == contract.PolicyAsk && !holdsSafely(p) {
		return nil, "", contract.Fail(contract.CodeRefused,
			"action_policy ask holds a request in the browser until a person decides, and a %s browser would send it unapproved if this worker died meanwhile (it outlives the worker and reaches the network by itself); use provider local for ask, or action_policy deny", name)
	}
	return p, name, nil
}

// firstPages gives a new session its first pages: those of the checkpoint
// of the session it replaces when asked to restore (the guards were armed
// at Attach, before any tab loads), else its start URL; then it starts
// the session's own checkpoints.
func (a *Activities) firstPages(ctx context.Context, ls *liveSession, req contract.CreateRequest, found bool, log zerolog.Logger) *contract.Restored {
	// A session whose host was lost is made again from its checkpoint;
	// the guards were armed at Attach, before any tab loads.
	var restored *contract.Restored
	var from *states.State
	if req.Restore && req.Replaces != "" && !found {
		restored, from = a.restore(ctx, ls, req.Replaces, log)
	}
	if req.Options.StartURL != "" && !found && restored == nil {
		if _, err := ls.browser.Run(ctx, []driver.Action{{Op: "goto", URL: req.Options.StartURL}}, driver.RunOptions{}); err != nil {
			log.Warn().Err(err).Msg("opening start url")
		}
	}
	replaced := ""
	if restored != nil {
		replaced = req.Replaces
	}
	a.startCheckpoint(ls, req.Options, replaced, from, log)
	a.checkpointNow(ctx, ls)
	return restored
}

// refusePastLatency refuses a new session's create from the create queue
// while the worker is past its --latency-bound: the one poll it had out
// when it went past brought it. A tag this worker holds or is starting is
// never refused, nor a create from the shared queue (a takeover).
func (a *Activities) refusePastLatency(ctx context.Context, tag string) *contract.Failure {
	if a.o.PastLatency == nil || !activity.IsActivity(ctx) || activity.GetInfo(ctx).TaskQueue != contract.CreateQueue {
		return nil
	}
	a.mu.Lock()
	_, held := a.sessions[tag]
	_, starting := a.starting[tag]
	a.mu.Unlock()
	if held || starting {
		return nil
	}
	why := a.o.PastLatency()
	if why == "" {
		return nil
	}
	f := contract.Fail(contract.CodeBrowserUnavailable, "this worker is not taking new sessions: its %s; another worker will take the session", why)
	f.Retryable = true
	return f
}

// Create finds or starts the browser for a tag on this process and says
// which host queue serves it. Creating twice with one tag yields one browser.
func (a *Activities) Create(ctx context.Context, req contract.CreateRequest) (*contract.CreateResult, error) {
	log := a.logger(ctx, req.Tag)
	if req.Tag == "" {
		return nil, contract.Fail(contract.CodeRefused, "a session needs a tag")
	}
	if f := refuseWarmTag(req.Tag); f != nil {
		return nil, f
	}
	p, name, f := a.refuseCreate(req)
	if f != nil {
		return nil, f
	}
	if f := a.refusePastLatency(ctx, req.Tag); f != nil {
		return nil, f
	}
	// What the browser is made with, kept with it: a later create of the
	// tag that finds it must ask for the same, or is refused.
	want := req.Options.MadeWith(name)
	a.mu.Lock()
	if s, ok := a.sessions[req.Tag]; ok {
		a.mu.Unlock()
		return a.found(ctx, s, req, want)
	}
	if wait, ok := a.starting[req.Tag]; ok {
		a.mu.Unlock()
		// A retry of a create still starting here: the server judged the
		// first attempt lost (its heartbeats late on a starved host) while
		// it went on. Wait for it and take what it made, rather than count
		// the tag twice against --max-browsers or start a second browser.
		stop := a.heartbeat(ctx, nil)
		select {
		case <-wait:
		case <-ctx.Done():
			stop()
			f := contract.Fail(contract.CodeBrowserUnavailable, "the session's browser was still starting when the call ended; try again")
			f.Retryable = true
			return nil, f
		}
		stop()
		return a.Create(ctx, req)
	}
	if max := a.o.MaxBrowsers; max > 0 && len(a.sessions)+a.creating >= max {
		a.mu.Unlock()
		f := contract.Fail(contract.CodeBrowserUnavailable, "this worker already holds its %d browsers (--max-browsers); another worker will take the session", max)
		f.Retryable = true
		return nil, f
	}
	a.creating++
	if a.starting == nil {
		a.starting = map[string]chan struct{}{}
	}
	started := make(chan struct{})
	a.starting[req.Tag] = started
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.creating--
		delete(a.starting, req.Tag)
		w := a.warm
		a.mu.Unlock()
		close(started)
		w.wake() // refills wait for creates to end
	}()

	stop := a.heartbeat(ctx, nil)
	defer stop()
	// Where the create's time goes, logged with "session created"
	// (docs/benchmarks.md, the first call's steps).
	began := time.Now()
	steps := createSteps{last: began}
	kept := false
	// A named state: its lease for this session, and its newest version,
	// before any browser is started.
	var saved *states.State
	if name := req.Options.State; name != "" {
		var f *contract.Failure
		if saved, f = a.openState(ctx, name, req.Tag, req.Replaces); f != nil {
			return nil, f
		}
		defer func() {
			a.mu.Lock()
			_, live := a.sessions[req.Tag] // a concurrent create of the tag won and holds it
			a.mu.Unlock()
			if !kept && !live {
				_ = a.o.States.Release(context.WithoutCancel(ctx), name, req.Tag)
			}
		}()
	}
	// The reach guard of this session: the worker's policy narrowed by
	// its allow list. A provider that can route the browser through an
	// egress proxy gets one holding the same policy.
	var pol *netguard.Policy
	if a.o.Reach != nil {
		cp := *a.o.Reach
		cp.SessionHosts = append([]string(nil), req.Options.AllowHosts...)
		pol = &cp
	}
	// A browser another worker (or an earlier boot) made for the tag is
	// checked before Create adopts it.
	foundOne := false
	if fp, ok := p.(finder); ok {
		if found, err := fp.Find(ctx, req.Tag); err == nil {
			foundOne = true
			if f := checkFound(req.Tag, want, found.Made); f != nil {
				return nil, f
			}
		}
	}
	// A plain session takes a warm browser when one waits; else one starts.
	var sess *providers.Session
	var eg *egress.Proxy
	var err error
	warmUnlist := func() {}
	steps.mark(&steps.before)
	if !foundOne {
		var unlist func()
		if sess, eg, unlist = a.takeWarm(ctx, req, name, &want, pol, log); sess != nil {
			warmUnlist = unlist
			steps.warm = true
			steps.mark(&steps.browser)
		}
	}
	// Listed until the session lists the endpoint under its own key.
	defer func() { warmUnlist() }()
	if sess == nil {
		a.warmPool().trim()
		if eg, err = a.startEgress(p, req.Tag, pol, log); err != nil {
			log.Error().Err(err).Msg("starting the egress proxy")
			return nil, contract.Fail(contract.CodeBrowserUnavailable, "could not start the browser's egress proxy; try again").WithDetail(err.Error())
		}
		steps.mark(&steps.egress)
	}
	defer func() {
		if !kept && eg != nil {
			_ = eg.Close()
		}
	}()
	if sess == nil {
		sess, err = p.Create(ctx, providers.CreateOptions{
			Tag:      req.Tag,
			Headed:   req.Options.Headed,
			Stealth:  req.Options.Stealth,
			Profile:  req.Options.Profile,
			Replaces: req.Replaces,
			Session:  &want,
			Record:   req.Options.Record,
			State:    req.Options.State,
			Egress:   eg.Addr(),
			// The pin of the proxy's CA, so the browser accepts what the
			// proxy shows it for https and wss.
			EgressSPKI: eg.SPKI(),
		})
		if err != nil {
			log.Error().Err(err).Msg("creating browser")
			return nil, providerFailure(err)
		}
		steps.mark(&steps.browser)
	}
	if sess.Found {
		if f := checkFound(req.Tag, want, sess.Made); f != nil {
			return nil, f
		}
		if sess.Made == nil {
			log.Warn().Msg("found a browser whose provider kept no options; taking it as asked")
		}
		if eg, err = a.foundEgress(eg, req.Tag, sess, pol, log); err != nil {
			_ = p.Release(context.WithoutCancel(ctx), req.Tag)
			log.Error().Err(err).Msg("taking over a found browser's egress proxy")
			f := contract.Fail(contract.CodeBrowserUnavailable, "found the session's browser but could not take over its egress proxy, so it was released; try again")
			f.Retryable = true
			return nil, f
		}
	}
	ls := &liveSession{
		ref:      contract.SessionRef{Tag: req.Tag, Provider: name, HostQueue: a.o.HostQueue, State: req.Options.State},
		owner:    ownerOf(ctx, req.Tag, a.o.HostQueue),
		provider: p,
		sess:     sess,
		made:     want,
		policy:   req.Options.ActionPolicy,
		calls:    make(chan struct{}, 1),
		egress:   eg,
	}
	if rented(p) {
		ls.started = sess.StartedAt
		if ls.started.IsZero() {
			ls.started = time.Now()
		}
	}
	ls.lastUsed.Store(time.Now().UnixNano())
	do, unlist := a.driverOptions(req, p, ls, pol, log)
	defer func() {
		if !kept {
			unlist()
		}
	}()
	b, err := a.o.Attach(ctx, do)
	steps.mark(&steps.attach)
	if err != nil {
		a.endView(req.Tag, ls)
		_ = p.Release(context.WithoutCancel(ctx), req.Tag)
		log.Error().Err(err).Msg("attaching to browser")
		return nil, contract.Fail(contract.CodeBrowserUnavailable, "the browser started but could not be driven; try again").WithDetail(err.Error())
	}
	ls.browser = b
	if ctx.Err() != nil {
		// This attempt outlived its deadline; a retry may already be opening
		// the browser elsewhere. Leave nothing behind that nobody references.
		a.endView(req.Tag, ls)
		_ = b.Close()
		_ = p.Release(context.WithoutCancel(ctx), req.Tag)
		return nil, contract.Fail(contract.CodeTimeout, "opening the browser took too long; it will be retried")
	}
	a.mu.Lock()
	if prev, ok := a.sessions[req.Tag]; ok {
		// Lost a race with a concurrent create of the same tag: keep the first.
		a.mu.Unlock()
		_ = b.Close()
		if ls.egress != nil && ls.egress != prev.egress {
			_ = ls.egress.Close()
		}
		return a.found(ctx, prev, req, want)
	}
	if req.Options.State != "" {
		a.startState(ctx, ls, req.Options.State, saved, sess.Found, log)
	}
	ls.opened = make(chan struct{})
	a.sessions[req.Tag] = ls
	a.mu.Unlock()
	kept = true
	log.Info().Str("provider", name).Int("pid", sess.PID).Str("isolation", sess.Isolation).Bool("warm", steps.warm).
		Dict("steps_ms", steps.dict(began)).Msg("session created")

	if req.Options.Record {
		a.startRecording(ctx, ls, workflowIDOf(ctx))
	}
	restored := a.firstPages(ctx, ls, req, sess.Found, log)
	ls.restored = restored
	close(ls.opened)
	res := &contract.CreateResult{Session: ls.ref, Found: sess.Found, URL: scrub.URL(b.URL(ctx)), Title: b.Title(ctx),
		Viewport: want.Viewport.String(), Restored: restored, Isolation: sess.Isolation}
	return res, nil
}

// found answers a create of a tag this process already holds: a retry of
// the create that made it (its result lost, or its attempt timed out while
// a restore went on), or a concurrent one. It waits until that create has
// given the browser its first pages, so a retry of a restore answers the
// restore (a workflow told session_replaced would send the agent to a blank
// page the restore had filled).
func (a *Activities) found(ctx context.Context, s *liveSession, req contract.CreateRequest, want contract.SessionOptions) (*contract.CreateResult, error) {
	if f := checkFound(req.Tag, want, &s.made); f != nil {
		return nil, f
	}
	if s.opened != nil {
		stop := a.heartbeat(ctx, nil)
		select {
		case <-s.opened:
			stop()
		case <-ctx.Done():
			stop()
			f := contract.Fail(contract.CodeBrowserUnavailable, "the session's browser was still opening its first pages when the call ended; try again")
			f.Retryable = true
			return nil, f
		}
	}
	res := &contract.CreateResult{Session: s.ref, Found: true, URL: scrub.URL(s.browser.URL(ctx)), Title: s.browser.Title(ctx),
		Viewport: s.made.ViewportOrDefault().String()}
	if s.sess != nil {
		res.Isolation = s.sess.Isolation
	}
	if r := s.restored; r != nil && req.Restore && req.Replaces == r.From {
		res.Restored = r
	}
	return res, nil
}

// Release ends a session's browser. It is idempotent: a tag this process no
// longer holds is released again through its provider, which confirms.
func (a *Activities) Release(ctx context.Context, req contract.ReleaseRequest) (*contract.ReleaseResult, error) {
	log := a.logger(ctx, req.Session.Tag)
	stop := a.heartbeat(ctx, nil)
	defer stop()
	a.mu.Lock()
	s := a.sessions[req.Session.Tag]
	a.mu.Unlock()
	p := a.o.Providers[req.Session.Provider]
	if s != nil {
		// Never mid-call: wait for the call in flight, heartbeating, and give
		// up with the context (the release is retried) rather than kill it.
		if f := s.lock(ctx); f != nil {
			return nil, f
		}
		// The state as the session leaves it, before the browser goes.
		a.endState(ctx, s)
		// Released on purpose: nothing is left to restore.
		a.dropCheckpoint(ctx, req.Session.Tag, s)
		a.mu.Lock()
		if a.sessions[req.Session.Tag] == s {
			delete(a.sessions, req.Session.Tag)
		}
		a.mu.Unlock()
		s.stopRecording(recorder.GapReleased)
		a.closeBrowser(s)
		s.unlock()
		p = s.provider
		// The proxy goes once the browser did (or failed to): nothing of
		// the browser leaves around it meanwhile.
		defer s.closeEgress()
	}
	if s == nil {
		a.releaseStateLease(ctx, req.Session)
		a.dropCheckpoint(ctx, req.Session.Tag, nil)
	}
	if p == nil {
		return &contract.ReleaseResult{OK: true, Tag: req.Session.Tag}, nil
	}
	res := &contract.ReleaseResult{OK: true, Tag: req.Session.Tag, Released: s != nil}
	var err error
	if rp, ok := p.(providers.Rented); ok {
		var ran time.Duration
		ran, err = rp.ReleaseMetered(ctx, req.Session.Tag)
		res.RanS = ran.Round(time.Second).Seconds()
		if price, ok := a.o.Prices[req.Session.Provider]; ok && ran > 0 {
			res.Cost = math.Round(ran.Minutes()*price*1e4) / 1e4
		}
	} else {
		err = p.Release(ctx, req.Session.Tag)
	}
	if err != nil {
		log.Error().Err(err).Msg("releasing browser")
		f := providerFailure(err)
		if f.Code == contract.CodeBrowserUnavailable {
			f = contract.Fail(contract.CodeBrowserUnavailable, "release did not confirm; it will be retried").WithDetail(err.Error())
		}
		return nil, f
	}
	log.Info().Bool("held", s != nil).Float64("ran_s", res.RanS).Float64("cost", res.Cost).Msg("session released")
	return res, nil
}

// Reconcile answers whether this process still holds the session. It runs on
// the session's host queue: if that process is gone the call never starts,
// which the workflow reads as a lost host.
func (a *Activities) Reconcile(ctx context.Context, req contract.ReleaseRequest) (*contract.ReleaseResult, error) {
	if _, f := a.session(req.Session); f != nil {
		return nil, f
	}
	return &contract.ReleaseResult{OK: true, Tag: req.Session.Tag}, nil
}

// session finds a session this process holds.
func (a *Activities) session(ref contract.SessionRef) (*liveSession, *contract.Failure) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.sessions[ref.Tag]
	if !ok || (ref.HostQueue != "" && ref.HostQueue != a.o.HostQueue) {
		return nil, contract.Fail(contract.CodeSessionEnded, "session %s is not open on this worker (it was released or its worker restarted); open a new one with browser_relaunch", ref.Tag)
	}
	return s, nil
}

func (a *Activities) providerNames() []string {
	out := make([]string, 0, len(a.o.Providers))
	for n := range a.o.Providers {
		out = append(out, n)
	}
	return out
}

// providerFailure maps a provider's typed errors to failure codes.
func providerFailure(err error) *contract.Failure {
	var refusal interface{ Refusal() bool }
	if errors.As(err, &refusal) && refusal.Refusal() {
		return contract.Fail(contract.CodeRefused, "%v", err)
	}
	var re *remote.Error
	switch {
	case errors.Is(err, remote.ErrAuth):
		return contract.Fail(contract.CodeAuth, "%v; the worker's API key for the provider was refused: the host must fix it (%s)", err, keyFix(err))
	case errors.Is(err, remote.ErrRateLimited):
		f := contract.Fail(contract.CodeRateLimited, "%v; wait, then try again", err)
		if errors.As(err, &re) && re.RetryAfter > 0 {
			f.Message = fmt.Sprintf("%v; try again in %d s", err, int(math.Ceil(re.RetryAfter.Seconds())))
		}
		return f
	case errors.Is(err, remote.ErrUnavailable):
		return contract.Fail(contract.CodeBrowserUnavailable, "%v; try again shortly", err)
	case errors.Is(err, providers.ErrUnsupported), errors.Is(err, tags.ErrInvalid):
		return contract.Fail(contract.CodeRefused, "%v", err)
	}
	return contract.Fail(contract.CodeBrowserUnavailable, "could not start a browser: %v", err).WithDetail(fmt.Sprint(err))
}

// setup says how a host turns on each rented provider, for the refusal of
// a session asking for one this worker does not have.
var setup = map[string]string{
	browserbase.Name: "the host sets " + browserbase.EnvAPIKey + " and " + browserbase.EnvProjectID + " and runs the worker with --providers browserbase",
	kernel.Name:      "the host sets " + kernel.EnvAPIKey + " and runs the worker with --providers kernel",
}

// keyFix names the variable holding the refused key.
func keyFix(err error) string {
	var re *remote.Error
	if errors.As(err, &re) {
		switch re.Provider {
		case browserbase.Name:
			return browserbase.EnvAPIKey
		case kernel.Name:
			return kernel.EnvAPIKey
		}
	}
	return "the provider's API key"
}

// RelaunchRequest is browser.relaunch's input: the session to end and the
// tag and options of its replacement.
type RelaunchRequest struct {
	Session contract.SessionRef     `json:"session"`
	Tag     string                  `json:"tag"`
	Options contract.SessionOptions `json:"options"`
	// Grants are the profiles the host grants the new session (see
	// contract.CreateRequest.Grants).
	Grants []contract.Profile `json:"grants,omitempty"`
}

// Relaunch releases a session and opens a new one under a new tag on this
// worker, for callers in other SDKs. It runs on the old session's host
// queue; BrowserSession does the same in two steps, so it can relaunch even
// when the old host is gone.
func (a *Activities) Relaunch(ctx context.Context, req RelaunchRequest) (*contract.CreateResult, error) {
	if req.Tag == "" || req.Tag == req.Session.Tag {
		return nil, contract.Fail(contract.CodeRefused, "a relaunch needs a new tag, different from %s", req.Session.Tag)
	}
	if _, err := a.Release(ctx, contract.ReleaseRequest{Session: req.Session}); err != nil {
		return nil, err
	}
	return a.Create(ctx, contract.CreateRequest{Tag: req.Tag, Options: req.Options, Grants: req.Grants})
}

// createSteps times a create's steps: each is the time from the step
// before it (or the create's start) to its end; a step not taken stays 0.
type createSteps struct {
	last                            time.Time
	before, egress, browser, attach time.Duration
	warm                            bool
}

func (s *createSteps) mark(d *time.Duration) {
	now := time.Now()
	*d = now.Sub(s.last)
	s.last = now
}

// dict is the steps in milliseconds, for the create's log line: before
// (the checks, a named state's lease, a found browser), egress (the
// session's proxy), browser (the provider's create, or taking a warm
// one), attach (the driver), total (from the create's start).
func (s *createSteps) dict(began time.Time) *zerolog.Event {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }
	return zerolog.Dict().Float64("before", ms(s.before)).Float64("egress", ms(s.egress)).Float64("browser", ms(s.browser)).
		Float64("attach", ms(s.attach)).Float64("total", ms(time.Since(began)))
}
