package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/durable-browser/durable-browser/internal/tags"
)

// Reap releases the browsers no live worker holds, and returns their tags.
//
// A browser is released when its browser process is already dead (leftovers
// are cleaned whatever its boot), or when its record names another boot
// (BootID) whose worker process is gone, unless keep returns true for it. A
// worker that restarts calls Reap with a keep that says which sessions its
// workflows still want; a nil keep releases every unowned browser. Records
// from another boot of a still-running worker process (another worker
// sharing the profile root) are never touched. Session directories with no
// record and no process (a crash mid-start) are deleted too.
func (p *Provider) Reap(ctx context.Context, keep func(rec Record) bool) ([]string, error) {
	recs, err := p.Records()
	if err != nil {
		return nil, err
	}
	var released []string
	var errs []error
	seen := map[string]bool{}
	for _, r := range recs {
		seen[r.Tag] = true
		// A browser Retag handed over keeps the directory of its first tag.
		seen[filepath.Base(r.SessionDir)] = true
		if ctx.Err() != nil {
			return released, ctx.Err()
		}
		if !p.reapable(ctx, r, keep) {
			continue
		}
		done, err := p.reapTag(ctx, r.Tag, func(cur *Record) bool {
			// Re-check under the tag lock: a Create may have adopted it.
			return cur != nil && p.reapable(ctx, *cur, keep)
		})
		if err != nil {
			errs = append(errs, err)
		} else if done {
			released = append(released, r.Tag)
		}
	}
	// Session directories no record explains.
	ents, _ := os.ReadDir(filepath.Join(p.root, "sessions"))
	for _, e := range ents {
		tag := e.Name()
		if seen[tag] || tags.Valid(tag) != nil {
			continue
		}
		if p.dirInUse(p.sessionDir(tag)) {
			continue
		}
		done, err := p.reapTag(ctx, tag, func(cur *Record) bool { return cur == nil && !p.dirInUse(p.sessionDir(tag)) })
		if err != nil {
			errs = append(errs, err)
		} else if done {
			released = append(released, tag)
		}
	}
	if len(released) > 0 {
		p.log.Info().Strs("sessions", released).Msg("reaped browsers nobody holds")
	}
	p.reapShared(ctx)
	return released, errors.Join(errs...)
}

func (p *Provider) reapable(ctx context.Context, r Record, keep func(Record) bool) bool {
	if r.OwnerPID != os.Getpid() && pidAlive(r.OwnerPID) {
		return false // another running worker holds it
	}
	if !p.alive(ctx, &r) {
		if r.BootID == p.bootID {
			p.mu.Lock()
			starting := p.starting[r.Tag]
			p.mu.Unlock()
			if starting {
				return false // our own Create is still starting it (or queued to)
			}
		}
		return true
	}
	if r.BootID == p.bootID {
		return false
	}
	return keep == nil || !keep(r)
}

// reapTag releases tag if still holds for its record under the tag lock.
func (p *Provider) reapTag(ctx context.Context, tag string, still func(*Record) bool) (bool, error) {
	unlock := p.locks.Lock(tag)
	defer unlock()
	cur, err := p.readRecord(tag)
	if err != nil {
		return false, err
	}
	if !still(cur) {
		return false, nil
	}
	return true, p.release(ctx, tag)
}

// dirInUse says a browser of this provider runs in the session directory,
// or a record names it (read afresh: a Retag moves a record between two
// listings).
func (p *Provider) dirInUse(dir string) bool {
	p.mu.Lock()
	for _, c := range p.children {
		if c.dir == dir {
			p.mu.Unlock()
			return true
		}
	}
	p.mu.Unlock()
	recs, err := p.Records()
	if err != nil {
		return true // unsure: keep it for the next reap
	}
	for _, r := range recs {
		if r.SessionDir == dir {
			return true
		}
	}
	return false
}
