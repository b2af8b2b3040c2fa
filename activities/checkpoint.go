package activities

import (
	"context"
	"time"

	"github.com/rs/zerolog"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/driver"
	"github.com/durable-browser/durable-browser/internal/redact"
	"github.com/durable-browser/durable-browser/internal/scrub"
	"github.com/durable-browser/durable-browser/internal/states"
)

// Checkpoints: every session whose worker has a state key is saved after
// each call that can change it (run, upload, a create, and the first call
// after a handoff, which a person may have changed it in), by the same
// export, sealing and S3 code as named states, under the session's tag and
// beside named states (never among them). A session whose host is lost is
// made again from its last checkpoint on the next worker (restore).

// checkpointPrefix is where checkpoints live in the states' bucket.
const checkpointPrefix = "checkpoints"

// checkpointKeep is how many versions of a session's checkpoint are kept.
const checkpointKeep = 2

// notRestored is what a restore never brings back.
var notRestored = []string{
	"form fields typed but not submitted",
	"IndexedDB and other storage than cookies, localStorage and sessionStorage",
	"an open dialog",
	"a page reached by POST (its tab opens at about:blank; nothing is sent again)",
	"the snapshot ids of the lost browser",
}

// checkpoints is the store of session checkpoints, nil without a state key.
func (a *Activities) checkpoints() *states.Store {
	if a.o.States == nil {
		return nil
	}
	return a.o.States.Under(checkpointPrefix, checkpointKeep)
}

// startCheckpoint begins keeping s's checkpoint; from is the checkpoint s
// was restored from (its storage is kept for origins not shown yet).
func (a *Activities) startCheckpoint(s *liveSession, opts contract.SessionOptions, replaces string, from *states.State, log zerolog.Logger) {
	store := a.checkpoints()
	if store == nil || !opts.Restores() {
		return
	}
	sv := newStateSaver(store, s.ref.Tag, s.ref.Tag, from, log)
	sv.checkpoint, sv.replaces = true, replaces
	s.ckpt = sv
}

// checkpointNow saves s's checkpoint, waiting for it at most the worker's
// StateSaveWait (a create's, so a host lost right after it restores).
func (a *Activities) checkpointNow(ctx context.Context, s *liveSession) {
	if s.ckpt == nil {
		return
	}
	wait := a.o.StateSaveWait
	if wait <= 0 {
		wait = defaultStateWait
	}
	a.saveTo(ctx, s, wait, s.ckpt)
}

// keepCheckpoint saves s's checkpoint a last time as its worker stops (the
// session goes on, restored, on another worker).
func (a *Activities) keepCheckpoint(ctx context.Context, s *liveSession) {
	if s.ckpt == nil {
		return
	}
	a.saveTo(ctx, s, 5*time.Second, s.ckpt)
	s.ckpt.halt()
}

// dropCheckpoint deletes the checkpoint of a session that ended on
// purpose (released): nothing is left to restore.
func (a *Activities) dropCheckpoint(ctx context.Context, tag string, s *liveSession) {
	store := a.checkpoints()
	if store == nil {
		return
	}
	if s != nil && s.ckpt != nil {
		s.ckpt.halt()
		// Wait for a write under way, so it cannot land after the delete.
		s.ckpt.mu.Lock()
		defer s.ckpt.mu.Unlock()
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, err := store.Delete(dctx, states.NameHash(tag)); err != nil {
		log := a.logger(ctx, tag)
		log.Warn().Err(err).Msg("deleting the released session's checkpoint")
	}
}

// restorer is a driven browser a checkpoint can be put back into
// (driver.Browser; test fakes need not).
type restorer interface {
	stateKeeper
	RestoreTabs(ctx context.Context, tabs []states.Tab) []driver.TabRestored
	ArmSecrets(secrets ...redact.Secret)
}

// restore makes s's fresh browser from the last checkpoint of the session
// tagged from: the secrets typed there are armed first, then cookies and
// storage are put back, then each tab is loaded again by GET. It answers
// nil (a plain replacement) when there is no checkpoint to restore from.
func (a *Activities) restore(ctx context.Context, s *liveSession, from string, log zerolog.Logger) (*contract.Restored, *states.State) {
	store := a.checkpoints()
	r, ok := s.browser.(restorer)
	if store == nil || !ok {
		return nil, nil
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	st, v, err := store.Newest(rctx, from)
	cancel()
	if err != nil || st == nil {
		if err != nil {
			log.Warn().Err(err).Str("replaces", from).Msg("reading the lost session's checkpoint")
		}
		return nil, nil
	}
	// The egress guard knows the secrets typed before any page loads.
	if a.o.Secrets != nil {
		var armed []redact.Secret
		for _, name := range st.Secrets {
			if sec, ok := a.o.Secrets.Lookup(name); ok {
				armed = append(armed, sec)
			}
		}
		if len(armed) > 0 {
			r.ArmSecrets(armed...)
		}
	}
	out := &contract.Restored{From: from, Cookies: len(st.Cookies), Origins: len(st.Origins), NotRestored: notRestored, Tabs: []contract.RestoredTab{}}
	ictx, cancel := context.WithTimeout(ctx, 10*time.Second)
	err = r.ImportState(ictx, states.State{Cookies: st.Cookies, Origins: st.Origins})
	cancel()
	if err != nil {
		log.Warn().Err(err).Str("replaces", from).Msg("putting the checkpoint's cookies and storage back")
		out.Cookies, out.Origins = 0, 0
	}
	for _, t := range r.RestoreTabs(ctx, st.Tabs) {
		out.Tabs = append(out.Tabs, contract.RestoredTab{URL: scrub.URL(t.URL), Title: t.Title,
			Active: t.Active, Reason: t.Reason, Was: scrub.URL(t.Was)})
	}
	log.Info().Str("replaces", from).Int64("checkpoint_version", v).Int("tabs", len(out.Tabs)).Int("cookies", out.Cookies).Msg("session restored from its checkpoint")
	return out, st
}

// crashed says s's browser is gone under its worker (Chrome exited or
// crashed): the session is dropped, its leftovers released, and the call
// answers session_ended so the session restores on its next browser.
func (a *Activities) crashed(ctx context.Context, s *liveSession) *contract.Failure {
	c, ok := s.browser.(interface{ Closed() bool })
	if !ok || !c.Closed() {
		return nil
	}
	a.mu.Lock()
	if a.sessions[s.ref.Tag] == s {
		delete(a.sessions, s.ref.Tag)
	}
	a.mu.Unlock()
	if s.saver != nil {
		s.saver.halt()
	}
	if s.ckpt != nil {
		s.ckpt.halt()
	}
	a.closeBrowser(s)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_ = s.provider.Release(rctx, s.ref.Tag)
	s.closeEgress()
	log := a.logger(ctx, s.ref.Tag)
	log.Warn().Msg("the session's browser is gone (exited or crashed); dropped it")
	return contract.Fail(contract.CodeSessionEnded, "the browser of session %s exited unexpectedly (a crash); the session opens a new one on its next call", s.ref.Tag)
}
