package activities

import (
	"context"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/contract"
)

// A handoff's end is checkpointed: what a person did in the browser (a
// sign-in) is saved by the first call after the handoff, the snapshot the
// workflow takes when it is answered or expires, as a run's effects are. A
// read with no handoff before it saves nothing, and only the first call
// after a handoff does.
func TestCheckpointAfterHandoff(t *testing.T) {
	store := stateStore(t)
	var kept []*keepingBrowser
	h := newHarness(t, func(o *Options) {
		withStates(store, &kept)(o)
		o.Notifier = &fakeNotifier{}
	})
	ckpts := store.Under(checkpointPrefix, checkpointKeep)
	ref := h.create("t-1", contract.SessionOptions{})
	// newest waits for the session's checkpoint to hold cookie (a call's
	// answer waits for its write only so long) and answers its version.
	newest := func(cookie string) int64 {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			st, v, err := ckpts.Newest(context.Background(), ref.Tag)
			if err != nil {
				t.Fatal(err)
			}
			if st != nil && len(st.Cookies) == 1 && st.Cookies[0].Value == cookie {
				return v
			}
			if time.Now().After(deadline) {
				t.Fatalf("the checkpoint never held %q: %+v v%d", cookie, st, v)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	snapshot := func() {
		t.Helper()
		if _, err := call[contract.SnapshotResult](h, contract.ActivitySnapshot, contract.SnapshotRequest{Call: contract.Call{Session: ref}}); err != nil {
			t.Fatal(err)
		}
	}
	if v := newest("signed-out"); v != 1 {
		t.Fatalf("the create's checkpoint is v%d", v)
	}
	// A read changes nothing: its cookie is not written.
	kept[0].setCookie("changed-under-a-read")
	snapshot()
	// A person signs in during a handoff; the workflow's snapshot after it
	// checkpoints the sign-in.
	req := contract.NotifyRequest{Session: ref, WorkflowID: "wf", RequestID: "r1", Instruction: "sign in", ExpiresAt: time.Now().Add(time.Minute)}
	if _, err := call[contract.ReleaseResult](h, contract.ActivityNotify, req); err != nil {
		t.Fatal(err)
	}
	kept[0].setCookie("signed-in-by-a-person")
	snapshot()
	if v := newest("signed-in-by-a-person"); v != 2 {
		t.Fatalf("the checkpoint after the handoff is v%d, want v2 (the read before it wrote one)", v)
	}
	// Only the first call after it: the next read writes nothing.
	kept[0].setCookie("changed-under-a-later-read")
	snapshot()
	kept[0].setCookie("changed-by-a-run")
	if _, err := call[contract.RunResult](h, contract.ActivityRun, runReq(ref, []byte(`[{"op":"click","id":"3"}]`))); err != nil {
		t.Fatal(err)
	}
	if v := newest("changed-by-a-run"); v != 3 {
		t.Fatalf("the run's checkpoint is v%d, want v3 (the read after the handoff's snapshot wrote one)", v)
	}
}

// A retry of a create that restored a session (its first attempt timed out
// while the restore went on, or its result was lost) finds the session and
// answers the restore again: told only Found, the workflow would answer
// session_replaced and send the agent to a blank page the restore had filled.
func TestCreateRetryAnswersTheRestore(t *testing.T) {
	h := newHarness(t, nil)
	ref := h.create("restored-1", contract.SessionOptions{})
	want := &contract.Restored{From: "lost-1", Cookies: 3, Tabs: []contract.RestoredTab{{URL: "http://127.0.0.1/shop"}}}
	h.a.mu.Lock()
	ls := h.a.sessions[ref.Tag]
	h.a.mu.Unlock()
	if ls.opened == nil {
		t.Fatal("a created session has no opened channel")
	}
	select {
	case <-ls.opened:
	default:
		t.Fatal("the create returned before the session's first pages were given")
	}
	ls.restored = want
	for _, tc := range []struct {
		name     string
		req      contract.CreateRequest
		restored bool
	}{
		{"retry of the restore", contract.CreateRequest{Tag: ref.Tag, Restore: true, Replaces: "lost-1"}, true},
		{"a restore from another session", contract.CreateRequest{Tag: ref.Tag, Restore: true, Replaces: "lost-2"}, false},
		{"no restore asked", contract.CreateRequest{Tag: ref.Tag, Replaces: "lost-1"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := call[contract.CreateResult](h, contract.ActivityCreate, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Found {
				t.Fatalf("the retry made a second browser: %+v", res)
			}
			if got := res.Restored != nil; got != tc.restored {
				t.Fatalf("restored = %+v, want restored %v", res.Restored, tc.restored)
			}
			if tc.restored && (res.Restored.From != want.From || res.Restored.Cookies != want.Cookies || len(res.Restored.Tabs) != 1) {
				t.Fatalf("restored = %+v, want %+v", res.Restored, want)
			}
		})
	}
}
