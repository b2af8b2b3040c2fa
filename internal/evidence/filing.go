package evidence

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/durable-browser/durable-browser/contract"
)

// Filing is one body to file with its receipt.
type Filing struct {
	// Prefix goes before everything else in the key (may hold '/'); optional.
	Prefix     string
	WorkflowID string
	SessionTag string
	// CallID names the call within the workflow (for example the activity
	// id), so a retry of the same call lands on the same key.
	CallID      string
	Tool        string
	Ext         string // file extension without the dot, e.g. "png", "md"
	ContentType string
	Body        []byte
	// File, when set, is the body instead of Body: Size bytes whose SHA-256
	// (lowercase hex) is FileSHA256, streamed to the store and never held in
	// memory. Its body is not inlined.
	File       io.ReadSeeker
	Size       int64
	FileSHA256 string
	// Verbatim says Body is kept as it came (a download, as the site sent
	// it): a Filer does not redact it.
	Verbatim bool
	// Receipt is completed by File: Tool, SessionTag, WorkflowID (when
	// empty), ContentType (when empty), SHA256, Size and BodyKey are set
	// from the filing. Time must come from the caller (for example the
	// activity's scheduled time) so that a retry produces identical receipt
	// bytes; File never reads the clock.
	Receipt contract.Receipt
	// Inline is the budget for ClaimCheck.Inline; zero means the default.
	Inline InlineBudget
}

// ErrReceiptMismatch is returned when a receipt does not describe the body
// it is filed beside.
var ErrReceiptMismatch = errors.New("evidence receipt does not match its body")

// File writes f.Body and then its receipt under deterministic keys (see
// BodyKey and ReceiptKey) and returns the claim check.
//
// Both writes are idempotent, so a retried activity re-filing the same bytes
// writes nothing new. The receipt is written once: a retry that finds a
// receipt already present for the same body keeps the original, even when
// its own receipt differs (say, a later Time), and returns the same claim
// check.
func File(ctx context.Context, store Store, f Filing) (contract.ClaimCheck, error) {
	if f.WorkflowID == "" || f.CallID == "" || f.Tool == "" {
		return contract.ClaimCheck{}, errors.New("evidence filing needs WorkflowID, CallID and Tool: they make the key deterministic")
	}
	sum, size := "", int64(len(f.Body))
	if f.File != nil {
		if len(f.FileSHA256) != 64 || f.Size < 0 {
			return contract.ClaimCheck{}, errors.New("evidence filing of a file needs its Size and FileSHA256")
		}
		sum, size = f.FileSHA256, f.Size
	} else {
		sum = SHA256Hex(f.Body)
	}
	key := BodyKey(f.Prefix, f.WorkflowID, f.SessionTag, f.CallID, f.Tool, sum, f.Ext)
	rkey := ReceiptKey(key)

	r := f.Receipt
	r.Tool = f.Tool
	r.SessionTag = f.SessionTag
	if r.WorkflowID == "" {
		r.WorkflowID = f.WorkflowID
	}
	if r.ContentType == "" {
		r.ContentType = f.ContentType
	}
	r.SHA256 = sum
	r.Size = size
	r.BodyKey = key
	if !r.Time.IsZero() {
		r.Time = r.Time.UTC() // the zone must not change the bytes
	}
	receipt, err := json.Marshal(r)
	if err != nil {
		return contract.ClaimCheck{}, fmt.Errorf("encoding receipt: %w", err)
	}

	var perr error
	if f.File != nil {
		_, perr = store.PutReader(ctx, key, f.File, size, sum, f.ContentType)
	} else {
		_, perr = store.Put(ctx, key, f.Body, f.ContentType)
	}
	if err := perr; err != nil {
		return contract.ClaimCheck{}, fmt.Errorf("filing %s: %w", key, err)
	}
	if _, err := store.Put(ctx, rkey, receipt, "application/json"); err != nil {
		if !errors.Is(err, ErrKeyConflict) {
			return contract.ClaimCheck{}, fmt.Errorf("filing receipt %s: %w", rkey, err)
		}
		// A receipt from an earlier attempt: keep it if it describes this body.
		if _, err := readReceipt(ctx, store, rkey, key, sum); err != nil {
			return contract.ClaimCheck{}, err
		}
	}

	cc := contract.ClaimCheck{Key: key, ReceiptKey: rkey, SHA256: sum, Size: size, ContentType: f.ContentType}
	if f.File == nil {
		cc.Inline, cc.InlineEncoding, _ = f.Inline.Inline(f.ContentType, f.Body)
	}
	return cc, nil
}

// readReceipt reads and checks the receipt at rkey against its body.
func readReceipt(ctx context.Context, store Store, rkey, bodyKey, sum string) (*contract.Receipt, error) {
	raw, _, err := store.Get(ctx, rkey)
	if err != nil {
		return nil, fmt.Errorf("reading receipt %s: %w", rkey, err)
	}
	var r contract.Receipt
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("%w: %s is not a receipt: %v", ErrReceiptMismatch, rkey, err)
	}
	if r.SHA256 != sum || r.BodyKey != bodyKey {
		return nil, fmt.Errorf("%w: %s names body %s (sha256 %s), want %s (sha256 %s)", ErrReceiptMismatch, rkey, r.BodyKey, r.SHA256, bodyKey, sum)
	}
	return &r, nil
}

// GetVerified reads a filed body by key (the body's or its receipt's) and
// its receipt. The body is verified against the hash recorded with it, the
// hash its key embeds, and the receipt's hash. A body filed without a
// receipt (a filing interrupted between its two writes) is returned with a
// nil receipt.
func GetVerified(ctx context.Context, store Store, key string) ([]byte, *contract.Receipt, error) {
	return GetVerifiedMax(ctx, store, key, 0)
}

// ErrTooLarge is matched by *TooLargeError.
var ErrTooLarge = errors.New("evidence body too large")

// TooLargeError says a body is larger than the caller can take; it was not read.
type TooLargeError struct {
	Key       string
	Size, Max int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("evidence %q is %d bytes, over the %d this reader takes", e.Key, e.Size, e.Max)
}

// Is makes errors.Is(err, ErrTooLarge) true.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// GetVerifiedMax is GetVerified for at most max body bytes (0: no limit).
// The object's size is looked up first; a larger body is a *TooLargeError
// and is never read.
func GetVerifiedMax(ctx context.Context, store Store, key string, max int64) ([]byte, *contract.Receipt, error) {
	key = BodyKeyOf(key)
	if err := CheckKey(key); err != nil {
		return nil, nil, err
	}
	if max > 0 {
		m, err := store.Head(ctx, key)
		if err != nil {
			return nil, nil, err
		}
		if m.Size > max {
			return nil, nil, &TooLargeError{Key: key, Size: m.Size, Max: max}
		}
	}
	body, _, err := store.Get(ctx, key)
	if err != nil {
		return nil, nil, err
	}
	sum := SHA256Hex(body)
	// The store's recorded hash travels with the object; the key's does not,
	// so an object replaced together with its metadata is still caught.
	if want, ok := keyHashPrefix(key); ok && sum[:hashPrefixLen] != want {
		return nil, nil, &HashMismatchError{Key: key, Want: want + "…", Got: sum}
	}
	r, err := readReceipt(ctx, store, ReceiptKey(key), key, sum)
	if errors.Is(err, ErrNotFound) {
		return body, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return body, r, nil
}
