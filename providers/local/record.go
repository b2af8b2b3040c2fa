package local

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/tags"
)

// Record is what the provider keeps on disk per browser, under
// <ProfileRoot>/records/<tag>.json, so a restarted worker can find its
// browsers by tag and reap the ones nobody owns. The file is 0600: WSURL is a
// full-control credential.
type Record struct {
	Tag string `json:"tag"`
	// PID is the browser process; it leads its own process group.
	PID int `json:"pid"`
	// Port is the DevTools port, 0 while starting.
	Port  int    `json:"port"`
	WSURL string `json:"ws_url"`
	// ProfileDir is the browser's --user-data-dir.
	ProfileDir  string `json:"profile_dir"`
	SessionDir  string `json:"session_dir"`
	DownloadDir string `json:"download_dir"`
	// BootID and OwnerPID name the worker process that holds the browser.
	BootID    string    `json:"boot_id"`
	OwnerPID  int       `json:"owner_pid"`
	StartedAt time.Time `json:"started_at"`
	// Profile is the saved profile the session started from, if any; Save says
	// whether it runs on that profile itself.
	Profile string `json:"profile,omitempty"`
	Save    bool   `json:"save,omitempty"`
	Stealth bool   `json:"stealth,omitempty"`
	Headed  bool   `json:"headed,omitempty"`
	// Options are the session options the browser was made with
	// (CreateOptions.Session), handed back as Session.Made when a create
	// finds it. Absent in records written before they were kept.
	Options *contract.SessionOptions `json:"options,omitempty"`
	// Egress is the egress proxy the browser sends everything through.
	Egress string `json:"egress,omitempty"`
	// EgressSPKI is the pin of the proxy's interception CA the browser
	// accepts (public: a hash of a public key).
	EgressSPKI string `json:"egress_spki,omitempty"`
	// Shared: the session is a browser context in the worker's shared
	// browser (context isolation), not a browser of its own. PID, Port,
	// WSURL and ProfileDir are then the shared browser's, which release
	// never ends; it disposes of Context instead.
	Shared bool `json:"shared,omitempty"`
	// Context is the session's browser context in the shared browser,
	// Target the page it drives there.
	Context string `json:"context,omitempty"`
	Target  string `json:"target,omitempty"`
}

func (p *Provider) recordPath(tag string) string {
	return filepath.Join(p.root, "records", tag+".json")
}

func (p *Provider) sessionDir(tag string) string {
	return filepath.Join(p.root, "sessions", tag)
}

// readRecord returns nil, nil when the tag has no record.
func (p *Provider) readRecord(tag string) (*Record, error) {
	var r Record
	ok, err := readJSON(p.recordPath(tag), &r)
	if err != nil {
		return nil, fmt.Errorf("reading browser record: %w", err)
	}
	if !ok || r.Tag != tag {
		// None, or a torn or foreign file: treat as no record, but keep
		// nothing of it.
		_ = os.Remove(p.recordPath(tag))
		return nil, nil
	}
	return &r, nil
}

// writeRecord replaces the record atomically.
func (p *Provider) writeRecord(r *Record) error {
	if err := writeJSON(p.recordPath(r.Tag), r); err != nil {
		return fmt.Errorf("writing browser record: %w", err)
	}
	return nil
}

// readJSON decodes the JSON file at path into v; ok is false when there is
// no such file or it does not decode (torn by a crash, or foreign), err
// only when it could not be read.
func readJSON(path string, v any) (ok bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return json.Unmarshal(b, v) == nil, nil
}

// writeJSON replaces the file at path with v as JSON, through a temporary
// file, so a reader never sees half of it; 0600, as a record holds a
// DevTools address (full control of its browser).
func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func (p *Provider) removeRecord(tag string) error {
	if err := os.Remove(p.recordPath(tag)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing browser record: %w", err)
	}
	return nil
}

// Records lists the browser records under the profile root.
func (p *Provider) Records() ([]Record, error) {
	ents, err := os.ReadDir(filepath.Join(p.root, "records"))
	if err != nil {
		return nil, fmt.Errorf("listing browser records: %w", err)
	}
	var out []Record
	for _, e := range ents {
		tag, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || tags.Valid(tag) != nil {
			continue
		}
		r, err := p.readRecord(tag)
		if err != nil {
			return nil, err
		}
		if r != nil {
			out = append(out, *r)
		}
	}
	return out, nil
}
