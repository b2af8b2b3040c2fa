package states

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
)

// ErrInvalidName is wrapped by ValidName's errors.
var ErrInvalidName = errors.New("invalid state name")

// MaxNameLen bounds a state's name.
const MaxNameLen = 64

// NamePattern is what a state's name may be: a letter or digit, then
// letters, digits, '.', '-' and '_'. No '/', no spaces, no "..": a name
// becomes part of nothing but a hash, yet it shows in logs and messages.
var NamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ValidName checks a state's name.
func ValidName(name string) error {
	if !NamePattern.MatchString(name) || strings.Contains(name, "..") {
		return fmt.Errorf("%w %q: use 1 to %d letters, digits, '.', '-' or '_', starting with a letter or digit (e.g. shop-alice)", ErrInvalidName, clip(name), MaxNameLen)
	}
	return nil
}

// Allowed reports whether the host's patterns (path.Match globs such as
// "shop-*"; empty allows every valid name) admit name.
func Allowed(patterns []string, name string) bool {
	if len(patterns) == 0 {
		return true
	}
	for _, p := range patterns {
		if ok, err := path.Match(p, name); err == nil && ok {
			return true
		}
	}
	return false
}

// ValidPatterns checks the host's patterns.
func ValidPatterns(patterns []string) error {
	for _, p := range patterns {
		if _, err := path.Match(p, ""); err != nil || p == "" {
			return fmt.Errorf("state name pattern %q is not a glob (e.g. shop-* or team.?)", p)
		}
	}
	return nil
}

// NameHash is the object-key segment of a name: the hex SHA-256 of
// "durable-browser state\x00" + name. The bucket's listing shows no names.
func NameHash(name string) string {
	h := sha256.Sum256([]byte("durable-browser state\x00" + name))
	return hex.EncodeToString(h[:])
}

// clip keeps an untrusted name short in messages.
func clip(s string) string {
	if len(s) > MaxNameLen+8 {
		return s[:MaxNameLen] + "..."
	}
	return s
}
