// Package book keeps the live view addresses handed to people for
// handoffs, one file each (mode 0600, in a 0700 directory), so
// `durable-browser handoff list --show-url` on the worker's machine can show
// them again. An address is a full-control credential: it is kept here and
// sent to the handoff port, never to history, a result or a log. The
// package uses the standard library only, so the CLI stays light.
package book

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Entry is one handoff's way to the browser.
type Entry struct {
	WorkflowID string `json:"workflow_id"`
	RequestID  string `json:"request_id"`
	SessionTag string `json:"session_tag"`
	URL        string `json:"url"`
}

// Book is a directory of entries, one per session.
type Book struct{ Dir string }

func (b Book) file(tag string) string {
	sum := sha256.Sum256([]byte(tag))
	return filepath.Join(b.Dir, hex.EncodeToString(sum[:16])+".json")
}

// Put writes (or replaces) the entry of its session.
func (b Book) Put(e Entry) error {
	if err := os.MkdirAll(b.Dir, 0o700); err != nil {
		return fmt.Errorf("live view book: %w", err)
	}
	if err := os.Chmod(b.Dir, 0o700); err != nil {
		return fmt.Errorf("live view book: %w", err)
	}
	raw, err := json.Marshal(e)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(b.Dir, ".entry-*")
	if err != nil {
		return fmt.Errorf("live view book: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(raw); err != nil {
		tmp.Close()
		return fmt.Errorf("live view book: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("live view book: %w", err)
	}
	// CreateTemp makes it 0600.
	return os.Rename(tmp.Name(), b.file(e.SessionTag))
}

// Drop removes a session's entry: its view ended.
func (b Book) Drop(tag string) {
	_ = os.Remove(b.file(tag))
}

// Read lists the entries. A missing directory is an empty book.
func (b Book) Read() ([]Entry, error) {
	ents, err := os.ReadDir(b.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, de := range ents {
		if !strings.HasSuffix(de.Name(), ".json") || !de.Type().IsRegular() {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(b.Dir, de.Name()))
		if err != nil {
			continue
		}
		var e Entry
		if json.Unmarshal(raw, &e) == nil && e.URL != "" {
			out = append(out, e)
		}
	}
	return out, nil
}

// Find is the entry of a handoff, if the book has it.
func (b Book) Find(workflowID, requestID string) (Entry, bool) {
	all, _ := b.Read()
	for _, e := range all {
		if e.WorkflowID == workflowID && e.RequestID == requestID {
			return e, true
		}
	}
	return Entry{}, false
}
