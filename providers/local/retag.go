package local

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/tags"
	"github.com/durable-browser/durable-browser/providers"
)

// ErrNotRetaggable is wrapped when Retag cannot hand a browser over: it is
// gone, or the new tag already has one.
var ErrNotRetaggable = errors.New("browser cannot be handed to the tag")

// Retag hands the live browser started under tag from (a warm browser,
// started ahead of any session) to tag to, made with made: from then on
// Find, Create and Release know it by to only. Its directories keep their
// place (Chrome's user-data-dir cannot move under it): the record names
// them, and Reap and release follow the record. It fails, and changes
// nothing, when from has no live browser of this boot or to has a record.
func (p *Provider) Retag(ctx context.Context, from, to string, made *contract.SessionOptions) (*providers.Session, error) {
	if err := tags.Valid(from); err != nil {
		return nil, err
	}
	if err := tags.Valid(to); err != nil {
		return nil, err
	}
	if from == to {
		return nil, fmt.Errorf("%w: %s to itself", ErrNotRetaggable, from)
	}
	// Both tags' locks, in one order, so two retags never wait on each other.
	first, second := from, to
	if second < first {
		first, second = second, first
	}
	defer p.locks.Lock(first)()
	defer p.locks.Lock(second)()

	rec, err := p.readRecord(from)
	if err != nil {
		return nil, err
	}
	if rec == nil || rec.BootID != p.bootID || rec.OwnerPID != os.Getpid() || !p.alive(ctx, rec) {
		return nil, fmt.Errorf("%w: %s has no live browser of this worker", ErrNotRetaggable, from)
	}
	if cur, err := p.readRecord(to); err != nil || cur != nil {
		return nil, fmt.Errorf("%w: %s already has a browser record", ErrNotRetaggable, to)
	}
	rec.Tag, rec.Options = to, made
	// The new record first: a reader between the two writes sees the
	// browser under both tags, never under none (Reap would then take its
	// directory for a leftover).
	if err := p.writeRecord(rec); err != nil {
		return nil, err
	}
	p.mu.Lock()
	if c, ok := p.children[from]; ok {
		delete(p.children, from)
		p.children[to] = c
	}
	p.mu.Unlock()
	if err := p.removeRecord(from); err != nil {
		return nil, err
	}
	p.log.Info().Str("session", to).Str("warm", from).Int("pid", rec.PID).Msg("warm browser handed to the session")
	return p.session(rec), nil
}
