package book

import (
	"os"
	"path/filepath"
	"testing"
)

func TestBook(t *testing.T) {
	b := Book{Dir: filepath.Join(t.TempDir(), "live-view")}
	if got, err := b.Read(); err != nil || len(got) != 0 {
		t.Fatalf("a book never written: %v, %v", got, err)
	}
	e := Entry{WorkflowID: "wf", RequestID: "h-1", SessionTag: "wf-1", URL: "http://127.0.0.1:1/v/x#t=secret"}
	if err := b.Put(e); err != nil {
		t.Fatal(err)
	}
	e.RequestID = "h-2" // a later handoff of the same session replaces it
	if err := b.Put(e); err != nil {
		t.Fatal(err)
	}
	if got, ok := b.Find("wf", "h-2"); !ok || got != e {
		t.Fatalf("Find = %+v, %v", got, ok)
	}
	if _, ok := b.Find("wf", "h-1"); ok {
		t.Fatal("a replaced entry is still found")
	}
	ents, _ := os.ReadDir(b.Dir)
	if len(ents) != 1 {
		t.Fatalf("%d files, want 1", len(ents))
	}
	fi, _ := os.Stat(filepath.Join(b.Dir, ents[0].Name()))
	di, _ := os.Stat(b.Dir)
	if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
		t.Fatalf("modes %v and %v, want 0600 and 0700", fi.Mode().Perm(), di.Mode().Perm())
	}
	b.Drop("wf-1")
	if got, _ := b.Read(); len(got) != 0 {
		t.Fatalf("dropped entry still read: %+v", got)
	}
}
