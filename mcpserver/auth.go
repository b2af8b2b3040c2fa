package mcpserver

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
)

// MinTokenLength is the shortest bearer token the HTTP transport accepts.
const MinTokenLength = 16

// NewToken makes a bearer token: 32 random bytes, base64url.
func NewToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails on the platforms Go supports
	return base64.RawURLEncoding.EncodeToString(b)
}

// CheckToken says what is wrong with a bearer token chosen by the operator.
func CheckToken(token string) error {
	if len(token) < MinTokenLength {
		return fmt.Errorf("is %d characters; use at least %d (a random one: openssl rand -hex 32)", len(token), MinTokenLength)
	}
	for _, r := range token {
		if r <= ' ' || r > '~' {
			return fmt.Errorf("holds a space, a control or a non-ASCII character; use printable ASCII (a random one: openssl rand -hex 32)")
		}
	}
	return nil
}

// requireBearer serves next only for requests carrying
// "Authorization: Bearer <token>". The token is compared in constant time
// over its SHA-256, so neither its bytes nor its length leak through
// timing. An empty token refuses every request.
func requireBearer(token string, next http.Handler) http.Handler {
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := bearer(r.Header.Get("Authorization"))
		sum := sha256.Sum256([]byte(got))
		if !ok || token == "" || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="durable-browser mcp"`)
			http.Error(w, "durable-browser mcp: send the header `Authorization: Bearer <token>` with the token the server printed "+
				"at start (or the one it was given in DURABLE_BROWSER_HTTP_TOKEN / --http-token)", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// bearer reads the token of an Authorization header (the scheme is
// case-insensitive, RFC 9110).
func bearer(h string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}
