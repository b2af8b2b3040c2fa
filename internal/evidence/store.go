// Package evidence files what the agent read (screenshots, page reads, fetched
// bodies, downloads) into an object store, beside a JSON receipt, under
// deterministic keys, so a retried activity finds its object already there and
// writes nothing twice. Bodies are verified against their SHA-256 on the way
// back out.
package evidence

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"
)

// Store holds evidence objects by key. Keys are relative to the store: an S3
// store's own prefix is applied inside it.
type Store interface {
	// Put writes body under key unless an object with the same SHA-256 is
	// already there (then PutResult.Existed is true and nothing is written).
	// An object with a different hash is a *ConflictError (ErrKeyConflict).
	Put(ctx context.Context, key string, body []byte, contentType string) (PutResult, error)
	// PutReader is Put for a body too large to hold in memory: size bytes
	// read from r, whose SHA-256 (lowercase hex) the caller computed in a
	// pass of its own. Nothing is read when the key already holds an
	// object. The store may read r more than once (it seeks to the start).
	PutReader(ctx context.Context, key string, r io.ReadSeeker, size int64, sha256, contentType string) (PutResult, error)
	// Get reads the object and verifies it against its recorded SHA-256; a
	// mismatch is a *HashMismatchError (ErrHashMismatch). A missing object is
	// ErrNotFound.
	Get(ctx context.Context, key string) ([]byte, Meta, error)
	// Head describes the object without reading it; ErrNotFound when absent.
	Head(ctx context.Context, key string) (Meta, error)
}

// PutResult says what Put did.
type PutResult struct {
	Key    string
	SHA256 string // lowercase hex
	Size   int64
	// Existed is true when an identical object was already stored and
	// nothing was written.
	Existed bool
}

// Meta describes a stored object.
type Meta struct {
	Key         string
	SHA256      string // as recorded when the object was written; "" if none
	Size        int64
	ContentType string
	ETag        string
	// LastModified is the store's write time (second precision on S3).
	LastModified time.Time
}

// ErrNotFound is returned (wrapped) when an object does not exist.
var ErrNotFound = errors.New("evidence object not found")

// ErrHashMismatch is matched by *HashMismatchError.
var ErrHashMismatch = errors.New("evidence hash mismatch")

// ErrKeyConflict is matched by *ConflictError.
var ErrKeyConflict = errors.New("evidence key already holds different bytes")

// HashMismatchError says stored bytes do not match their recorded SHA-256:
// the object was altered or damaged after it was filed.
type HashMismatchError struct {
	Key  string
	Want string // the recorded hash ("" when none was recorded)
	Got  string // the hash of the bytes read
}

func (e *HashMismatchError) Error() string {
	if e.Want == "" {
		return fmt.Sprintf("evidence %q has no recorded sha256, so it cannot be verified: it was not written by durable-browser; re-file it", e.Key)
	}
	return fmt.Sprintf("evidence %q fails verification: the body does not match the SHA-256 recorded when it was filed (recorded %s, the body hashes to %s); it was altered after filing, do not trust it", e.Key, e.Want, e.Got)
}

// Is makes errors.Is(err, ErrHashMismatch) true.
func (e *HashMismatchError) Is(target error) bool { return target == ErrHashMismatch }

// ConflictError says Put found different bytes under its key.
type ConflictError struct {
	Key      string
	Existing string // recorded hash of the stored object ("" when none)
	New      string // hash of the bytes Put was given
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("evidence key %q already holds other bytes (sha256 %q, refusing to overwrite with %s): keys are derived from content, so another writer used this key; check the key's call id and prefix", e.Key, e.Existing, e.New)
}

// Is makes errors.Is(err, ErrKeyConflict) true.
func (e *ConflictError) Is(target error) bool { return target == ErrKeyConflict }

// SHA256Hex is the lowercase hex SHA-256 of b.
func SHA256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// verify checks body against the recorded hash in m.
func verify(key string, body []byte, recorded string) error {
	got := SHA256Hex(body)
	if recorded == "" || got != recorded {
		return &HashMismatchError{Key: key, Want: recorded, Got: got}
	}
	return nil
}

// existing decides what Put does when key already holds an object.
func existing(key, recorded, want string, size int64) (PutResult, error) {
	if recorded != want {
		return PutResult{}, &ConflictError{Key: key, Existing: recorded, New: want}
	}
	return PutResult{Key: key, SHA256: want, Size: size, Existed: true}, nil
}
