package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// profileLock is the content of <root>/.profiles/<name>.lock: the one
// session using the profile now, saving or on a copy.
type profileLock struct {
	Tag string `json:"tag"`
	// Save: the holder runs on the profile itself.
	Save bool `json:"save,omitempty"`
	// PID is the browser's pid, 0 while it starts.
	PID      int       `json:"pid"`
	OwnerPID int       `json:"owner_pid"`
	BootID   string    `json:"boot_id"`
	Since    time.Time `json:"since"`
}

func (p *Provider) profileDir(name string) string {
	return filepath.Join(p.root, ".profiles", name)
}

func (p *Provider) lockPath(name string) string {
	return filepath.Join(p.root, ".profiles", name+".lock")
}

// lockProfile makes tag the one user of profile name while it lives. A
// session replacing the holder (replaces) takes the lock over, unless both
// would run on the profile itself.
func (p *Provider) lockProfile(name, tag, replaces string, save bool) error {
	path := p.lockPath(name)
	mine := profileLock{Tag: tag, Save: save, OwnerPID: os.Getpid(), BootID: p.bootID, Since: time.Now().UTC()}
	for range 3 {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err == nil {
			err = json.NewEncoder(f).Encode(mine)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			return err
		}
		if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("locking profile %q: %w", name, err)
		}
		held, ok := readLock(path)
		switch {
		case ok && held.Tag == tag:
			// This tag's earlier browser died; it may take the lock again.
			return writeJSON(path, mine)
		case ok && replaces != "" && held.Tag == replaces && !(held.Save && save):
			// A relaunch: the old session is on its way out and the two never
			// share a directory (at most one of them runs on the profile).
			return writeJSON(path, mine)
		case ok && !lockStale(held):
			return &ProfileBusyError{Profile: name, HolderTag: held.Tag, HolderPID: held.PID, Save: held.Save}
		}
		p.log.Info().Str("profile", name).Str("holder", held.Tag).Msg("clearing stale profile lock")
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("clearing stale lock of profile %q: %w", name, err)
		}
	}
	return fmt.Errorf("locking profile %q: lock file keeps changing, try again", name)
}

// handOverSaver lets a relaunch take over a saved profile its session runs
// on: when the new browser would run on the profile itself (save) and the
// browser it replaces, started by this provider, runs on it now, that one
// is released first (two browsers never share a profile directory), so a
// session never locks itself out. A holder started elsewhere is left alone
// (lockProfile refuses).
func (p *Provider) handOverSaver(ctx context.Context, name, replaces string, save bool) error {
	if replaces == "" || !save {
		return nil
	}
	held, ok := readLock(p.lockPath(name))
	if !ok || held.Tag != replaces || !held.Save || held.OwnerPID != os.Getpid() || held.BootID != p.bootID {
		return nil
	}
	p.log.Info().Str("profile", name).Str("session", replaces).Msg("releasing the relaunched session's browser first: its successor runs on the same saved profile")
	if err := p.Release(ctx, replaces); err != nil {
		return fmt.Errorf("releasing %s, which runs on saved profile %q, before its relaunch can: %w", replaces, name, err)
	}
	return nil
}

// lockStale says the saver named in a lock can no longer be running.
func lockStale(l profileLock) bool {
	if l.PID != 0 {
		return !pidAlive(l.PID)
	}
	return !pidAlive(l.OwnerPID)
}

func readLock(path string) (profileLock, bool) {
	var l profileLock
	ok, err := readJSON(path, &l)
	return l, ok && err == nil
}

// setLockPID records the user's browser pid in the lock tag holds.
func (p *Provider) setLockPID(name, tag string, pid int) error {
	path := p.lockPath(name)
	l, ok := readLock(path)
	if !ok || l.Tag != tag {
		return fmt.Errorf("profile %q lock lost while starting", name)
	}
	l.PID = pid
	return writeJSON(path, l)
}

// unlockProfile drops the lock if tag holds it.
func (p *Provider) unlockProfile(name, tag string) error {
	path := p.lockPath(name)
	if l, ok := readLock(path); ok && l.Tag != tag {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("unlocking profile %q: %w", name, err)
	}
	return nil
}

// skipInProfile names files a profile copy leaves out: a running browser's
// locks and port file, and caches that only cost time to copy.
func skipInProfile(name string) bool {
	switch name {
	case "DevToolsActivePort", "lockfile", "Cache", "Code Cache", "GPUCache", "ShaderCache",
		"GrShaderCache", "GraphiteDawnCache", "DawnCache", "Crashpad", "Crash Reports":
		return true
	}
	return strings.HasPrefix(name, "Singleton")
}

// copyProfile copies a saved profile into dst for a non-saving session.
// A missing source gives an empty profile. Symlinks are not followed.
func copyProfile(src, dst string) error {
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return err
	}
	if _, err := os.Stat(src); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed by a running saver meanwhile
			}
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil || rel == "." {
			return err
		}
		if skipInProfile(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o700)
		case d.Type().IsRegular():
			return copyFile(path, target)
		}
		return nil
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// clearRunState removes what a previous browser left in a saved profile that
// would confuse the next one (its port file and singleton locks).
func clearRunState(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if e.Name() == "DevToolsActivePort" || strings.HasPrefix(e.Name(), "Singleton") {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
