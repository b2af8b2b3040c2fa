package liveview

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/url"
	"strings"
)

// TokenBytes is the size of a viewer token: 256 random bits.
const TokenBytes = 32

// newToken returns a fresh token, base64url without padding (43 characters).
func newToken() string {
	b := make([]byte, TokenBytes)
	if _, err := rand.Read(b); err != nil {
		panic("liveview: no randomness: " + err.Error()) // crypto/rand never fails on Linux
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// newID returns a session's viewer id: random, so the path names no
// workflow or tag.
func newID() string {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		panic("liveview: no randomness: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// Refusals of a viewer's connection.
var (
	ErrBadToken  = errors.New("liveview: wrong token")
	ErrBadOrigin = errors.New("liveview: the connection's Origin is not the viewer's own")
	ErrBusy      = errors.New("liveview: another viewer is connected to this session")
)

// checkToken compares a presented token with the session's in constant
// time. An empty token never matches.
func checkToken(want, got string) error {
	if want == "" || len(got) != len(want) || subtle.ConstantTimeCompare([]byte(want), []byte(got)) != 1 {
		return ErrBadToken
	}
	return nil
}

// checkOrigin accepts exactly the viewer's own origin (scheme, host and
// port of the base URL it was handed out under). A missing Origin is
// refused: every browser sends one on a WebSocket upgrade.
func checkOrigin(own *url.URL, origin string) error {
	if origin == "" {
		return ErrBadOrigin
	}
	o, err := url.Parse(origin)
	if err != nil || o.Path != "" && o.Path != "/" || o.User != nil {
		return ErrBadOrigin
	}
	if !strings.EqualFold(o.Scheme, own.Scheme) || !strings.EqualFold(o.Host, own.Host) {
		return ErrBadOrigin
	}
	return nil
}
