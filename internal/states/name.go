package states

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"

	"github.com/durable-browser/durable-browser/contract"
)

// ErrInvalidName is wrapped by ValidName's errors.
var ErrInvalidName = errors.New("invalid state name")

// MaxNameLen bounds a state's name.
const MaxNameLen = 64

// ValidName checks a state's name (contract.ValidStateName); its errors
// wrap ErrInvalidName.
func ValidName(name string) error {
	if err := contract.ValidStateName(name); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidName, err)
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

// NameHash is the object-key segment of a name: the hex SHA-256 of
// "durable-browser state\x00" + name. The bucket's listing shows no names.
func NameHash(name string) string {
	h := sha256.Sum256([]byte("durable-browser state\x00" + name))
	return hex.EncodeToString(h[:])
}
