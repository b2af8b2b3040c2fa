package tags

import "sync"

// Locks is a set of per-tag mutexes: Lock of one tag waits for the holder of
// that tag only. The zero value is ready to use; a tag's entry is dropped
// once nobody holds or waits for it, so the set does not grow with the
// number of tags ever seen. A Locks must not be copied after first use.
type Locks struct {
	mu sync.Mutex
	m  map[string]*tagLock
}

type tagLock struct {
	mu   sync.Mutex
	refs int // holders and waiters
}

// Lock blocks until tag is free and returns the function that frees it.
// Calling that function more than once is a no-op.
func (l *Locks) Lock(tag string) (unlock func()) {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]*tagLock{}
	}
	t := l.m[tag]
	if t == nil {
		t = &tagLock{}
		l.m[tag] = t
	}
	t.refs++
	l.mu.Unlock()
	t.mu.Lock()
	var once sync.Once
	return func() {
		once.Do(func() {
			t.mu.Unlock()
			l.mu.Lock()
			if t.refs--; t.refs == 0 {
				delete(l.m, tag)
			}
			l.mu.Unlock()
		})
	}
}

// size is the number of tags held or waited for.
func (l *Locks) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.m)
}

// Locked runs fn holding tag's lock, for a tag Valid accepts; an invalid
// tag is refused, nothing is locked and fn does not run.
func (l *Locks) Locked(tag string, fn func() error) error {
	if err := Valid(tag); err != nil {
		return err
	}
	defer l.Lock(tag)()
	return fn()
}
