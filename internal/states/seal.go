package states

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// EnvKey holds the host's state key: 32 random bytes, base64
// (`openssl rand -base64 32`). Environment only, never a flag.
const EnvKey = "DURABLE_BROWSER_STATE_KEY"

// ErrTampered is returned when a sealed state fails authentication: it was
// changed, moved to another key or version, or sealed with another key.
var ErrTampered = errors.New("state failed authentication (changed, moved, or sealed with another key)")

// magic starts every sealed object: format 1 is nonce || AES-256-GCM.
var magic = []byte("DBST1")

// Sealer seals states with the host's key.
type Sealer struct {
	aead cipher.AEAD
	mac  []byte // key for digests, derived from the state key
}

// ParseKey reads a base64 (standard or URL, padded or not) 32-byte key.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(s); err == nil {
			if len(k) != 32 {
				return nil, fmt.Errorf("%s holds %d bytes; it must be 32 random bytes in base64 (openssl rand -base64 32)", EnvKey, len(k))
			}
			return k, nil
		}
	}
	return nil, fmt.Errorf("%s is not base64; set it to 32 random bytes in base64 (openssl rand -base64 32)", EnvKey)
}

// NewSealer makes a sealer from a 32-byte key.
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("a state key is 32 bytes, not %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte("durable-browser state digest"))
	return &Sealer{aead: aead, mac: m.Sum(nil)}, nil
}

// Seal encrypts plaintext bound to aad (the name's hash and the version,
// so a version cannot pass for another name's or another version).
func (s *Sealer) Seal(aad string, plaintext []byte) ([]byte, error) {
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	out := append(append([]byte(nil), magic...), nonce...)
	return s.aead.Seal(out, nonce, plaintext, []byte(aad)), nil
}

// Open decrypts what Seal made with the same aad; anything else is
// ErrTampered.
func (s *Sealer) Open(aad string, sealed []byte) ([]byte, error) {
	n := len(magic) + s.aead.NonceSize()
	if len(sealed) < n+s.aead.Overhead() || string(sealed[:len(magic)]) != string(magic) {
		return nil, ErrTampered
	}
	pt, err := s.aead.Open(nil, sealed[len(magic):n], sealed[n:], []byte(aad))
	if err != nil {
		return nil, ErrTampered
	}
	return pt, nil
}

// Digest is a keyed hash of a plaintext: stored beside a version so a save
// of the same state is recognised without decrypting, and tells nothing
// about the content to a reader of the bucket.
func (s *Sealer) Digest(plaintext []byte) string {
	m := hmac.New(sha256.New, s.mac)
	m.Write(plaintext)
	return hex.EncodeToString(m.Sum(nil))
}
