package activities

import (
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/liveview"
)

// person_drove says a person sent input through the live view, not that
// the browser was handed to one: a handoff answered "done" with the viewer
// never opened leaves the agent's next result without it, and the ids of
// its snapshots valid; a person's click says so once.
func TestPersonDroveOnlyAfterInput(t *testing.T) {
	lv, err := liveview.Listen(liveview.Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lv.Close() })
	h := newHarness(t, func(o *Options) { o.LiveView = lv })
	ref := h.create("t-1", contract.SessionOptions{})
	snapshot := func() (*contract.SnapshotResult, error) {
		return call[contract.SnapshotResult](h, contract.ActivitySnapshot, contract.SnapshotRequest{Call: contract.Call{Session: ref}})
	}
	if _, err := snapshot(); err != nil {
		t.Fatal(err)
	}
	hands := lv.Hands(ref.Tag)
	if hands == nil {
		t.Fatal("the session has no live view")
	}

	// The handoff grants Take over; no one opens the viewer; it is
	// answered done, and the agent calls again.
	if _, ok, err := lv.Handoff(ref.Tag, "wf-1", "req-1"); !ok || err != nil {
		t.Fatalf("handoff: ok %v, err %v", ok, err)
	}
	snap, err := snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if snap.PersonDrove != "" {
		t.Fatalf("after a handoff no one took: person_drove %q", snap.PersonDrove)
	}
	if hands.State().TakenOver {
		t.Fatal("the handoff's grant outlived the agent's next call")
	}

	// Take over pressed and given back, no input: nobody drove either.
	hands.TakeOver()
	hands.GiveBack()
	if snap, err = snapshot(); err != nil || snap.PersonDrove != "" {
		t.Fatalf("after a take over without input: person_drove %q, err %v", snap.PersonDrove, err)
	}

	// A person's click: the agent is kept out for the drive window, then
	// told once.
	if err := hands.Person(func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(liveview.DriveWindow + 10*time.Second)
	for {
		snap, err = snapshot()
		if err == nil {
			break
		}
		if f := failure(t, err); f.Reason != contract.ReasonPersonDriving || time.Now().After(deadline) {
			t.Fatalf("snapshot after a person's click: %+v", f)
		}
		time.Sleep(50 * time.Millisecond) // poll interval: the refusal above is the condition
	}
	if snap.PersonDrove != contract.PersonDroveNote {
		t.Fatalf("after a person's click: person_drove %q", snap.PersonDrove)
	}
	if snap, err = snapshot(); err != nil || snap.PersonDrove != "" {
		t.Fatalf("told twice: person_drove %q, err %v", snap.PersonDrove, err)
	}
}
