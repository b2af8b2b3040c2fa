package activities

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"go.temporal.io/sdk/activity"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/states"
)

// stateKeeper is a driven browser that can read and put back its sign-in
// state (driver.Browser; test fakes need not).
type stateKeeper interface {
	ExportState(ctx context.Context) (states.State, error)
	ImportState(ctx context.Context, st states.State) error
}

// Bounds of the named-state work around a call.
const (
	// exportTimeout bounds reading the state out of the browser.
	exportTimeout = 3 * time.Second
	// saveTimeout bounds one save to S3 (it goes on after the call's
	// answer, up to this).
	saveTimeout = 30 * time.Second
	// defaultStateWait is how long a call's answer waits for its save.
	defaultStateWait = 2 * time.Second
	// defaultLeaseWait is how long a create waits for another session to
	// give a state up before refusing.
	defaultLeaseWait = 10 * time.Second
)

// stateOff is the refusal of a state on a worker without the key.
func stateOff(name string) *contract.Failure {
	return contract.Fail(contract.CodeRefused,
		"named states are off on this worker, so state %q cannot be kept: the host sets %s (32 random bytes, base64) and an S3 evidence bucket; open the session without state, or on a worker that has them",
		name, states.EnvKey)
}

// openState checks a create's state name, takes its lease for the session
// (waiting a bounded time for another session to give it up) and reads its
// newest version. The caller gives the lease up if the create fails.
func (a *Activities) openState(ctx context.Context, name, tag, replaces string) (*states.State, *contract.Failure) {
	if a.o.States == nil {
		return nil, stateOff(name)
	}
	if err := contract.ValidStateName(name); err != nil {
		return nil, contract.Fail(contract.CodeRefused, "%v; open the session with a valid state name", err)
	}
	if !states.Allowed(a.o.StateNames, name) {
		return nil, contract.Fail(contract.CodeRefused,
			"state %q is not one this worker keeps (its --state-names allow %v); open the session with an allowed name, or ask the host to allow this one", name, a.o.StateNames)
	}
	wait := a.o.StateLeaseWait
	if wait <= 0 {
		wait = defaultLeaseWait
	}
	deadline := time.Now().Add(wait)
	for {
		err := a.o.States.Acquire(ctx, name, tag, replaces)
		var held *states.HeldError
		if errors.As(err, &held) && time.Now().Before(deadline) {
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
				continue
			}
		}
		switch {
		case err == nil:
		case errors.As(err, &held):
			return nil, contract.Fail(contract.CodeRefused,
				"%v: one session writes a state at a time. Release the other session (browser_release) and open this one again, or open it with another state name", held)
		default:
			f := contract.Fail(contract.CodeBrowserUnavailable, "could not take state %q for this session (S3 did not answer as expected); try again", name).WithDetail(err.Error())
			f.Retryable = true
			return nil, f
		}
		break
	}
	st, v, err := a.o.States.Newest(ctx, name)
	if err != nil {
		_ = a.o.States.Release(context.WithoutCancel(ctx), name, tag)
		if errors.Is(err, states.ErrTampered) {
			return nil, contract.Fail(contract.CodeRefused,
				"state %q cannot be opened: its newest version v%d fails authentication (changed in the bucket, or sealed with another %s); the host restores the key it was written with, or deletes it (durable-browser states delete %s)", name, v, states.EnvKey, name)
		}
		f := contract.Fail(contract.CodeBrowserUnavailable, "could not read state %q from S3; try again", name).WithDetail(err.Error())
		f.Retryable = true
		return nil, f
	}
	if st != nil {
		log := a.logger(ctx, tag)
		log.Info().Str("state", name).Int64("state_version", v).Int("cookies", len(st.Cookies)).Int("origins", len(st.Origins)).Msg("state read")
	}
	return st, nil
}

// stateSaver saves one session's state in the order it was read out of
// the browser; a save that finds a newer one done is skipped.
type stateSaver struct {
	name, tag string
	store     *states.Store
	log       zerolog.Logger
	// checkpoint: the saver keeps a session's checkpoint (its tabs too, no
	// lease: the tag is the session's alone) rather than a named state.
	checkpoint bool
	// replaces is the checkpoint of the session this one was restored
	// from, deleted once this one's first is written.
	replaces string

	mu       sync.Mutex // held for a save, in order
	seq      uint64     // reads handed to save
	done     uint64     // the newest read saved
	prev     *states.State
	last     states.Saved // the last save's answer: the next one writes without listing
	stopOnce sync.Once
	stop     chan struct{}
}

func newStateSaver(store *states.Store, name, tag string, prev *states.State, log zerolog.Logger) *stateSaver {
	return &stateSaver{name: name, tag: tag, store: store, prev: prev, log: log, stop: make(chan struct{})}
}

// save writes now (merged over the last saved) in the background and
// returns a channel closed when it is done.
func (sv *stateSaver) save(now states.State) <-chan struct{} {
	sv.mu.Lock()
	sv.seq++
	n := sv.seq
	sv.mu.Unlock()
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		sv.mu.Lock()
		defer sv.mu.Unlock()
		if n <= sv.done || (sv.checkpoint && n < sv.seq) {
			// Saved already, or (a checkpoint) a newer read waits to be:
			// one write at a time, the newest wins.
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), saveTimeout)
		defer cancel()
		// Only the lease's holder writes. A session whose lease
		// lapsed and went to another keeps running, unsaved.
		if !sv.checkpoint {
			if err := sv.store.Renew(ctx, sv.name, sv.tag); err != nil {
				sv.log.Warn().Err(err).Str("state", sv.name).Msg("state not saved: this session no longer holds it")
				return
			}
			// A named state is a sign-in, not a place.
			now.Tabs, now.Secrets = nil, nil
		}
		now.Name = sv.name
		merged := states.Merge(sv.prev, now)
		began := time.Now()
		saved, err := sv.store.SaveAfter(ctx, merged, sv.last)
		if err != nil {
			sv.last = states.Saved{}
			sv.log.Warn().Err(err).Str("state", sv.name).Bool("checkpoint", sv.checkpoint).Msg("saving state")
			return
		}
		took := time.Since(began)
		sv.prev, sv.done, sv.last = &merged, n, saved
		if sv.replaces != "" {
			// The session this one was restored from is done with.
			_, _ = sv.store.Delete(ctx, states.NameHash(sv.replaces))
			sv.replaces = ""
		}
		// The cost of keeping state, read back by the load run (test/load_test.go).
		sv.log.Debug().Str("state", sv.name).Bool("checkpoint", sv.checkpoint).Int64("state_version", saved.Version).
			Bool("wrote", saved.Wrote).Int("bytes", saved.Bytes).Float64("write_ms", ms(took)).Msg("state saved")
	}()
	return ch
}

// renew keeps the session's lease while this process holds the browser.
func (sv *stateSaver) renew(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-sv.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), every)
			if err := sv.store.Renew(ctx, sv.name, sv.tag); err != nil {
				sv.log.Warn().Err(err).Str("state", sv.name).Msg("renewing the state's lease")
			}
			cancel()
		}
	}
}

func (sv *stateSaver) halt() { sv.stopOnce.Do(func() { close(sv.stop) }) }

// startState begins keeping s's state: puts the saved one into a browser
// this create started, and renews the lease while s lives here.
func (a *Activities) startState(ctx context.Context, s *liveSession, name string, saved *states.State, found bool, log zerolog.Logger) {
	s.saver = newStateSaver(a.o.States, name, s.ref.Tag, saved, log)
	go s.saver.renew(a.o.States.LeaseTTL() / 3)
	if saved == nil || found {
		return
	}
	k, ok := s.browser.(stateKeeper)
	if !ok {
		return
	}
	ictx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := k.ImportState(ictx, *saved); err != nil {
		log.Warn().Err(err).Str("state", name).Msg("putting the saved state into the browser")
	}
}

// saveState reads s's state out of its browser once and saves it as its
// named state and its checkpoint, waiting for the saves at most wait (they
// go on in the background, bounded).
func (a *Activities) saveState(ctx context.Context, s *liveSession, wait time.Duration) {
	a.saveTo(ctx, s, wait, s.saver, s.ckpt)
}

// saveTo reads s's state out of its browser once and hands it to each of
// the savers that is not nil.
func (a *Activities) saveTo(ctx context.Context, s *liveSession, wait time.Duration, to ...*stateSaver) {
	savers := make([]*stateSaver, 0, len(to))
	for _, sv := range to {
		if sv != nil {
			savers = append(savers, sv)
		}
	}
	if len(savers) == 0 {
		return
	}
	k, ok := s.browser.(stateKeeper)
	if !ok {
		return
	}
	began := time.Now()
	ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), exportTimeout)
	now, err := k.ExportState(ectx)
	cancel()
	if err != nil {
		savers[0].log.Warn().Err(err).Str("state", savers[0].name).Msg("reading the state out of the browser")
		return
	}
	exported := time.Since(began)
	checkpoint := false
	for _, sv := range savers {
		checkpoint = checkpoint || sv.checkpoint
	}
	waited := "saved"
	defer func() {
		// What the call was held back by (its answer waits for this).
		savers[0].log.Debug().Bool("checkpoint", checkpoint).Float64("held_ms", ms(time.Since(began))).
			Float64("export_ms", ms(exported)).Str("waited", waited).Msg("state kept")
	}()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for _, sv := range savers {
		done := sv.save(now)
		select {
		case <-done:
		case <-timer.C:
			waited = "bound"
			return
		case <-ctx.Done():
			waited = "cancelled"
			return
		}
	}
}

// ms is d in milliseconds, for log fields a person reads.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// saveAfterEffect saves after a run or upload, holding the answer back at
// most the worker's StateSaveWait.
func (a *Activities) saveAfterEffect(ctx context.Context, s *liveSession) {
	wait := a.o.StateSaveWait
	if wait <= 0 {
		wait = defaultStateWait
	}
	a.saveState(ctx, s, wait)
}

// endState saves s's state a last time and gives its lease up, at release.
func (a *Activities) endState(ctx context.Context, s *liveSession) {
	if s.saver == nil {
		return
	}
	a.saveTo(ctx, s, saveTimeout, s.saver)
	s.saver.halt()
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	// Wait for a save still under way, then give the lease up.
	s.saver.mu.Lock()
	defer s.saver.mu.Unlock()
	if err := a.o.States.Release(rctx, s.saver.name, s.saver.tag); err != nil {
		s.saver.log.Warn().Err(err).Str("state", s.saver.name).Msg("giving the state's lease up")
	}
}

// releaseStateLease gives up the lease of a session this process does not
// hold (released from another worker after its own was lost).
func (a *Activities) releaseStateLease(ctx context.Context, ref contract.SessionRef) {
	if ref.State == "" || a.o.States == nil {
		return
	}
	if err := a.o.States.Release(ctx, ref.State, ref.Tag); err != nil && activity.IsActivity(ctx) {
		log := a.logger(ctx, ref.Tag)
		log.Warn().Err(err).Str("state", ref.State).Msg("giving the state's lease up")
	}
}
