package evidence

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxSegment bounds one cleaned key segment, so a long workflow id cannot
// push a key past S3's 1,024-byte limit.
const MaxSegment = 100

// ReceiptSuffix is appended to a body key to name its receipt.
const ReceiptSuffix = ".receipt.json"

// hashPrefixLen is how many hex digits of the body's SHA-256 go in its key.
const hashPrefixLen = 12

// ErrInvalidKey is returned for keys a store refuses.
var ErrInvalidKey = errors.New("invalid evidence key")

// CleanSegment maps s to one key segment of [A-Za-z0-9_.-]. Any other
// character becomes '_', a leading '.' becomes '_' (no ".", "..", or hidden
// names: a posix-backed gateway turns segments into directories), and the
// result is at most MaxSegment bytes. When cleaning lost information (a
// character replaced, or the segment shortened) a dash and 8 hex digits of
// the original's SHA-256 are appended, so distinct ids stay distinct keys.
// An empty s becomes "_".
func CleanSegment(s string) string {
	var b strings.Builder
	lossy := false
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		case r == '.' && i > 0:
			b.WriteRune(r)
		default:
			b.WriteByte('_')
			lossy = true
		}
	}
	out := b.String()
	if out == "" {
		return "_"
	}
	const suffix = 1 + 8
	if len(out) > MaxSegment {
		lossy = true
	}
	if lossy {
		if len(out) > MaxSegment-suffix {
			out = out[:MaxSegment-suffix]
		}
		out += "-" + SHA256Hex([]byte(s))[:8]
	}
	return out
}

// cleanPath cleans each '/'-separated segment of p and drops empty ones.
func cleanPath(p string) string {
	var parts []string
	for _, seg := range strings.Split(p, "/") {
		if seg == "" {
			continue
		}
		parts = append(parts, CleanSegment(seg))
	}
	return strings.Join(parts, "/")
}

// cleanExt makes a file extension: lowercase [a-z0-9._] (no '-', so the
// hash before it can be found again), no leading dots, at most 16 bytes;
// "bin" when empty.
func cleanExt(ext string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimLeft(ext, ".")) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	out := b.String()
	if len(out) > 16 {
		out = out[:16]
	}
	if out == "" {
		return "bin"
	}
	return out
}

// BodyKey is the deterministic key of a filed body:
// <prefix>/<workflow id>/<session tag>/<call id>-<tool>-<sha256[:12]>.<ext>,
// every segment cleaned with CleanSegment (the prefix may hold several).
func BodyKey(prefix, workflowID, sessionTag, callID, tool, sha256Hex, ext string) string {
	h := strings.ToLower(sha256Hex)
	if len(h) > hashPrefixLen {
		h = h[:hashPrefixLen]
	}
	name := CleanSegment(callID) + "-" + CleanSegment(tool) + "-" + CleanSegment(h) + "." + cleanExt(ext)
	parts := []string{}
	if p := cleanPath(prefix); p != "" {
		parts = append(parts, p)
	}
	parts = append(parts, CleanSegment(workflowID), CleanSegment(sessionTag), name)
	return strings.Join(parts, "/")
}

// ReceiptKey is the key of the receipt filed beside bodyKey.
func ReceiptKey(bodyKey string) string { return bodyKey + ReceiptSuffix }

// BodyKeyOf returns the body key for key, which may name the body or its
// receipt.
func BodyKeyOf(key string) string { return strings.TrimSuffix(key, ReceiptSuffix) }

// keyHashPrefix returns the hash prefix a BodyKey embeds, if key has that
// shape: the last '-' of the name is followed by the hash and the '.' of the
// extension (extensions hold no '-').
func keyHashPrefix(key string) (string, bool) {
	name := key[strings.LastIndexByte(key, '/')+1:]
	dash := strings.LastIndexByte(name, '-')
	if dash < 0 || len(name) < dash+1+hashPrefixLen+1 || name[dash+1+hashPrefixLen] != '.' {
		return "", false
	}
	h := name[dash+1 : dash+1+hashPrefixLen]
	for _, c := range h {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return "", false
		}
	}
	return h, true
}

// CheckKey refuses keys no filing produces and a posix-backed gateway could
// misread: empty, too long, not UTF-8, absolute, or with empty, "." or ".."
// segments.
func CheckKey(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("%w: empty key", ErrInvalidKey)
	case len(key) > 1024:
		return fmt.Errorf("%w: longer than 1024 bytes", ErrInvalidKey)
	case !utf8.ValidString(key):
		return fmt.Errorf("%w: not UTF-8", ErrInvalidKey)
	}
	for _, seg := range strings.Split(key, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("%w: %q has an empty, \".\" or \"..\" segment; use the key a filing returned", ErrInvalidKey, key)
		}
	}
	return nil
}
