// Package remote holds what the providers that rent browsers from a service
// (browserbase, kernel) share: one JSON-over-HTTP exchange with the service's
// REST API, its failures as typed errors, and the session-minute meter.
//
// Service keys, connect URLs and live-view URLs are credentials: nothing
// here puts them in an error, a log line or a result.
package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Sentinels a caller maps to failure codes.
var (
	// ErrAuth: the service refused the key (401, 403).
	ErrAuth = errors.New("the service refused the API key")
	// ErrRateLimited: the service asked to slow down (429).
	ErrRateLimited = errors.New("the service is rate limiting this account")
	// ErrUnavailable: the service could not be reached or failed (network
	// errors, 5xx).
	ErrUnavailable = errors.New("the service is unavailable")
	// ErrNoKey: the provider was chosen but its key is not set.
	ErrNoKey = errors.New("API key not set")
)

// Error is a failed exchange with a service. Its text names the provider,
// the operation and the status, never a URL, key or body that could hold one.
type Error struct {
	Provider string
	Op       string
	Status   int
	// RetryAfter is the wait a 429 asked for (0 when it named none).
	RetryAfter time.Duration
	// Message is the service's own error message, cut short; services do
	// not echo keys in them.
	Message string
	kind    error
	cause   error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %v", e.Provider, e.Op, e.kind)
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, "; retry after %s", e.RetryAfter.Round(time.Second))
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	return b.String()
}

// Is matches the error's kind (ErrAuth, ErrRateLimited, ErrUnavailable).
func (e *Error) Is(target error) bool { return target == e.kind }

// Unwrap is the network error, when there was one.
func (e *Error) Unwrap() error { return e.cause }

// BaseURL returns raw, or def when raw is empty, once it is an http(s) URL
// with a host.
func BaseURL(provider, raw, def string) (string, error) {
	if raw == "" {
		raw = def
	}
	if u, err := url.Parse(raw); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", fmt.Errorf("%s: base URL must be http(s)://host", provider)
	}
	return raw, nil
}

// FromEnv sets each empty field to its environment variable (fields maps a
// variable's name to its field), read with getenv, os.Getenv when nil. A
// required variable whose field is still empty is provider's MissingKey
// (the first, in the order given).
func FromEnv(provider string, getenv func(string) string, fields map[string]*string, required ...string) error {
	if getenv == nil {
		getenv = os.Getenv
	}
	for env, p := range fields {
		if *p == "" {
			*p = getenv(env)
		}
	}
	for _, env := range required {
		if *fields[env] == "" {
			return MissingKey(provider, env)
		}
	}
	return nil
}

// MissingKey is the error for a provider chosen without its key: it names
// the variable to set.
func MissingKey(provider, env string) error {
	return fmt.Errorf("provider %s: %w: set %s", provider, ErrNoKey, env)
}

// Client makes one kind of exchange: JSON in, JSON out, with the service's
// auth header.
type Client struct {
	Provider string
	Base     string
	// Auth sets the request's credentials.
	Auth func(*http.Request)
	HTTP *http.Client
}

// Do sends body (nil for none) as JSON to Base+path and decodes a 2xx
// answer into out (nil to ignore it). A 404 is returned as *Error with
// Status 404 and kind ErrUnavailable; callers that expect one check Status.
func (c *Client) Do(ctx context.Context, op, method, path string, body, out any) (http.Header, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.Base, "/")+path, rd)
	if err != nil {
		return nil, &Error{Provider: c.Provider, Op: op, kind: ErrUnavailable}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	c.Auth(req)
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	res, err := hc.Do(req)
	if err != nil {
		// The error text of net/http quotes the URL, which is ours and
		// holds no credential, but keep it out anyway: say what failed.
		return nil, &Error{Provider: c.Provider, Op: op, kind: ErrUnavailable, Message: netReason(ctx, err), cause: ctx.Err()}
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(res.Body, 4<<20))
	if res.StatusCode/100 == 2 {
		if out != nil && len(bytes.TrimSpace(raw)) > 0 {
			if err := json.Unmarshal(raw, out); err != nil {
				return nil, &Error{Provider: c.Provider, Op: op, Status: res.StatusCode, kind: ErrUnavailable, Message: "the answer was not the documented JSON"}
			}
		}
		return res.Header, nil
	}
	e := StatusError(c.Provider, op, res.StatusCode, retryAfter(res.Header.Get("Retry-After"), time.Now()), serviceMessage(raw))
	return res.Header, e
}

// StatusError is the error for a service's answer with a failing status:
// 401 and 403 are ErrAuth, 429 ErrRateLimited (with the wait it asked
// for), anything else ErrUnavailable.
func StatusError(provider, op string, status int, after time.Duration, msg string) *Error {
	e := &Error{Provider: provider, Op: op, Status: status, Message: msg}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.kind = ErrAuth
	case status == http.StatusTooManyRequests:
		e.kind = ErrRateLimited
		e.RetryAfter = after
	default:
		e.kind = ErrUnavailable
	}
	return e
}

// NotFound says err is the service answering 404.
func NotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusNotFound
}

func netReason(ctx context.Context, err error) string {
	if ctx.Err() != nil {
		return "the request timed out"
	}
	var ne interface{ Timeout() bool }
	if errors.As(err, &ne) && ne.Timeout() {
		return "the request timed out"
	}
	return "could not reach the service"
}

// serviceMessage is the "message" or "error" of a JSON error body, short.
func serviceMessage(raw []byte) string {
	var m struct {
		Message string `json:"message"`
		Error   any    `json:"error"`
	}
	_ = json.Unmarshal(raw, &m)
	s := m.Message
	if s == "" {
		if str, ok := m.Error.(string); ok {
			s = str
		}
	}
	if len(s) > 200 {
		s = s[:200]
	}
	return strings.ToValidUTF8(s, "")
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if n, err := strconv.Atoi(h); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// Backoff waits before the n-th poll (0-based): 100ms doubling to max.
func Backoff(ctx context.Context, n int, max time.Duration) error {
	d := 100 * time.Millisecond
	for i := 0; i < n && d < max; i++ {
		d *= 2
	}
	if d > max {
		d = max
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
