package local

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestProfileLockOneSessionAtATime(t *testing.T) {
	live := os.Getpid() // a process that is certainly running
	cases := []struct {
		name     string
		held     *profileLock // nil: no lock file
		tag      string
		replaces string
		save     bool
		wantBusy bool
	}{
		{"free, copy", nil, "b-1", "", false, false},
		{"free, save", nil, "b-1", "", true, false},
		{"copy holds, second copy refused", &profileLock{Tag: "a-1", PID: live}, "b-1", "", false, true},
		{"copy holds, saver refused", &profileLock{Tag: "a-1", PID: live}, "b-1", "", true, true},
		{"saver holds, copy refused", &profileLock{Tag: "a-1", Save: true, PID: live}, "b-1", "", false, true},
		{"saver holds, saver refused", &profileLock{Tag: "a-1", Save: true, PID: live}, "b-1", "", true, true},
		{"same tag again", &profileLock{Tag: "b-1", PID: live}, "b-1", "", false, false},
		{"holder died", &profileLock{Tag: "a-1", PID: 1 << 30}, "b-1", "", true, false},
		{"relaunch from a copy to a copy", &profileLock{Tag: "a-1", PID: live}, "a-2", "a-1", false, false},
		{"relaunch from a copy to a saver", &profileLock{Tag: "a-1", PID: live}, "a-2", "a-1", true, false},
		{"relaunch from a saver to a copy", &profileLock{Tag: "a-1", Save: true, PID: live}, "a-2", "a-1", false, false},
		{"relaunch from a saver to a saver refused", &profileLock{Tag: "a-1", Save: true, PID: live}, "a-2", "a-1", true, true},
		{"replacing another session does not take this one's lock", &profileLock{Tag: "x-1", PID: live}, "a-2", "a-1", false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if err := os.MkdirAll(filepath.Join(root, ".profiles"), 0o700); err != nil {
				t.Fatal(err)
			}
			p := &Provider{root: root, bootID: "boot"}
			if tc.held != nil {
				tc.held.Since = time.Now()
				if err := writeJSON(p.lockPath("shop"), *tc.held); err != nil {
					t.Fatal(err)
				}
			}
			err := p.lockProfile("shop", tc.tag, tc.replaces, tc.save)
			got, _ := readLock(p.lockPath("shop"))
			if tc.wantBusy {
				var busy *ProfileBusyError
				if !errors.As(err, &busy) || !errors.Is(err, ErrProfileBusy) {
					t.Fatalf("lockProfile = %v, want busy", err)
				}
				msg := err.Error()
				if !strings.Contains(msg, `"shop"`) || !strings.Contains(msg, "another session") || !strings.Contains(msg, tc.held.Tag) {
					t.Fatalf("busy message does not name the profile and its holder: %s", msg)
				}
				if got.Tag != tc.held.Tag {
					t.Fatalf("a refused session changed the lock to %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("lockProfile: %v", err)
			}
			if got.Tag != tc.tag || got.Save != tc.save {
				t.Fatalf("lock = %+v, want held by %s (save %v)", got, tc.tag, tc.save)
			}
			// The replaced session's release leaves the new holder's lock.
			if tc.replaces != "" {
				if err := p.unlockProfile("shop", tc.replaces); err != nil {
					t.Fatal(err)
				}
				if l, ok := readLock(p.lockPath("shop")); !ok || l.Tag != tc.tag {
					t.Fatalf("releasing the replaced session dropped the new lock: %+v %v", l, ok)
				}
			}
		})
	}
}
