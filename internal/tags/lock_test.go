package tags

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestLocksSerializeOneTag(t *testing.T) {
	var l Locks // zero value
	var inside, maxInside atomic.Int32
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				unlock := l.Lock("a")
				n := inside.Add(1)
				if n > maxInside.Load() {
					maxInside.Store(n)
				}
				time.Sleep(10 * time.Microsecond)
				inside.Add(-1)
				unlock()
			}
		}()
	}
	wg.Wait()
	if m := maxInside.Load(); m != 1 {
		t.Fatalf("%d goroutines held tag a at once", m)
	}
	if n := l.size(); n != 0 {
		t.Fatalf("%d entries left after every unlock", n)
	}
}

func TestLocksWaiterGetsTagAfterUnlock(t *testing.T) {
	var l Locks
	unlock := l.Lock("a")
	got := make(chan struct{})
	go func() {
		u := l.Lock("a")
		close(got)
		u()
	}()
	select {
	case <-got:
		t.Fatal("second Lock of a held tag returned")
	case <-time.After(50 * time.Millisecond):
	}
	unlock()
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("waiter did not get the tag after unlock")
	}
}

func TestLocksOtherTagsDoNotBlock(t *testing.T) {
	var l Locks
	unlockA := l.Lock("a")
	defer unlockA()
	for _, tag := range []string{"b", "c", "a-1", ""} {
		done := make(chan struct{})
		go func() {
			l.Lock(tag)()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("Lock(%q) blocked while only a was held", tag)
		}
	}
}

func TestLocksDoNotGrow(t *testing.T) {
	var l Locks
	for i := range 1000 {
		l.Lock("tag-" + strconv.Itoa(i))()
	}
	if n := l.size(); n != 0 {
		t.Fatalf("%d entries kept for tags nobody holds", n)
	}
	held := l.Lock("held")
	if n := l.size(); n != 1 {
		t.Fatalf("size %d with one tag held", n)
	}
	held()
	held() // a second unlock is a no-op
	if n := l.size(); n != 0 {
		t.Fatalf("size %d after unlock", n)
	}
	// The entry is reusable after removal.
	l.Lock("held")()
}

func TestLocksEntryKeptWhileWaited(t *testing.T) {
	var l Locks
	unlock := l.Lock("a")
	waiting := make(chan func())
	go func() { waiting <- l.Lock("a") }()
	// Wait until the second caller counts as a waiter.
	deadline := time.Now().Add(5 * time.Second)
	for {
		l.mu.Lock()
		refs := l.m["a"].refs
		l.mu.Unlock()
		if refs == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("waiter never registered")
		}
		time.Sleep(time.Millisecond)
	}
	unlock()
	if n := l.size(); n != 1 {
		t.Fatalf("size %d while a is handed to its waiter", n)
	}
	(<-waiting)()
	if n := l.size(); n != 0 {
		t.Fatalf("size %d after both unlocked", n)
	}
}

func TestLockedRefusesBadTagsUnlocked(t *testing.T) {
	var l Locks
	ran := false
	if err := l.Locked("bad tag/with spaces", func() error { ran = true; return nil }); err == nil || ran {
		t.Fatalf("Locked(invalid) = %v, ran %v; want an error and fn not run", err, ran)
	}
	if n := l.size(); n != 0 {
		t.Fatalf("an invalid tag left %d lock entries", n)
	}
	if err := l.Locked("wf-ok-1", func() error {
		if n := l.size(); n != 1 {
			t.Fatalf("size while held = %d, want 1", n)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n := l.size(); n != 0 {
		t.Fatalf("size after unlock = %d, want 0", n)
	}
}
