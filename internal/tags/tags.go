// Package tags holds the rules for session tags, shared by the providers and
// by workflow code: which tags are valid, how a workflow turns a free-form
// name into one (Clean), and a per-tag lock. It imports only the standard
// library, and Clean is deterministic, so workflow code may call it.
package tags

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
)

// MaxLen bounds a session tag.
const MaxLen = 60

// ErrInvalid is wrapped by the error Valid returns.
var ErrInvalid = errors.New("bad session tag")

// Valid checks a session tag: 1-60 of [A-Za-z0-9_.-], not only dots (so never
// "." or ".."). A valid tag is safe as one path element. The error wraps
// ErrInvalid.
func Valid(tag string) error {
	if len(tag) == 0 || len(tag) > MaxLen || strings.Trim(tag, ".") == "" {
		return invalid(tag)
	}
	for i := 0; i < len(tag); i++ {
		if !allowed(rune(tag[i])) {
			return invalid(tag)
		}
	}
	return nil
}

func invalid(tag string) error {
	return fmt.Errorf("%w %q: use 1-%d letters, digits, '.', '-' or '_' (not only dots)", ErrInvalid, tag, MaxLen)
}

func allowed(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-'
}

// Clean builds a session tag from base and suffix: every rune outside
// [A-Za-z0-9_.-] (and every invalid UTF-8 byte) becomes '-', an empty base
// becomes "session", and a result over MaxLen becomes an 8-hex-digit FNV-1a
// hash of the raw base, '-', the tail of the cleaned base and the suffix, cut
// to its last MaxLen bytes, so long tags stay unique.
//
// Workflow code calls it, so its output for a given input must never change:
// running workflows replay it.
func Clean(base, suffix string) string {
	b, s := cleanRunes(base), cleanRunes(suffix)
	if b == "" {
		b = "session"
	}
	if len(b)+len(s) <= MaxLen {
		return b + s
	}
	h := fnv.New32a()
	h.Write([]byte(base))
	return squeeze(fmt.Sprintf("%08x-", h.Sum32()), b, s)
}

// squeeze is head, the tail of body and suffix, in at most MaxLen bytes:
// body gives up its start first, then head.
func squeeze(head, body, suffix string) string {
	keep := max(MaxLen-len(head)-len(suffix), 0)
	out := head + body[len(body)-min(keep, len(body)):] + suffix
	if len(out) > MaxLen {
		out = out[len(out)-MaxLen:]
	}
	return out
}

// cleanRunes replaces each rune outside [A-Za-z0-9_.-] with one '-'.
func cleanRunes(s string) string {
	var sb strings.Builder
	sb.Grow(len(s))
	for _, r := range s {
		if allowed(r) {
			sb.WriteRune(r)
		} else {
			sb.WriteByte('-')
		}
	}
	return sb.String()
}
