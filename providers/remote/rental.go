package remote

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/rs/zerolog"

	"github.com/durable-browser/durable-browser/internal/tags"
	"github.com/durable-browser/durable-browser/providers"
)

// Service is one rental service's API as the shared lifecycle drives it.
// T is the service's own session object. Every method but CheckTag and
// Session talks to the service; the lifecycle holds the tag's lock around
// each create and release.
type Service[T any] interface {
	// CheckTag refuses a tag the service cannot carry.
	CheckTag(tag string) error
	// Refuse refuses create options the service cannot honour.
	Refuse(o providers.CreateOptions) error
	// List answers the live sessions carrying the tag.
	List(ctx context.Context, tag string) ([]T, error)
	// Session is a found session as Find answers it.
	Session(s T, tag string) *providers.Session
	// Reuse is a found session as a create answers it (what it was made
	// with, its live view: whatever the service reports).
	Reuse(ctx context.Context, s T, o providers.CreateOptions) *providers.Session
	// Start creates a new session for o.
	Start(ctx context.Context, o providers.CreateOptions) (*providers.Session, error)
	// End ends one session and waits until it has, answering how long it
	// ran.
	End(ctx context.Context, s T, tag string) (time.Duration, error)
}

// Rental is the lifecycle both rented-browser providers share: a create
// finds the tag's session or starts one, a find lists by tag, a release
// ends every session carrying the tag within ReleaseTimeout. It keeps
// nothing about sessions: the service is the state.
type Rental[T any] struct {
	// C talks to the service; Log is the provider's logger.
	C              *Client
	Log            zerolog.Logger
	svc            Service[T]
	releaseTimeout time.Duration
	locks          tags.Locks
}

// NewRental drives svc through c, logging to log; a release waits at most
// releaseTimeout (default 30s) for the service to end its sessions.
func NewRental[T any](svc Service[T], c *Client, log zerolog.Logger, releaseTimeout time.Duration) *Rental[T] {
	if releaseTimeout <= 0 {
		releaseTimeout = 30 * time.Second
	}
	return &Rental[T]{C: c, Log: log.With().Str("provider", c.Provider).Logger(), svc: svc, releaseTimeout: releaseTimeout}
}

// Create finds the tag's session or starts one.
func (r *Rental[T]) Create(ctx context.Context, o providers.CreateOptions) (*providers.Session, error) {
	if err := r.svc.CheckTag(o.Tag); err != nil {
		return nil, err
	}
	if err := r.svc.Refuse(o); err != nil {
		return nil, err
	}
	unlock := r.locks.Lock(o.Tag)
	defer unlock()
	found, err := r.svc.List(ctx, o.Tag)
	if err != nil {
		return nil, err
	}
	if len(found) > 0 {
		s := r.svc.Reuse(ctx, found[0], o)
		s.Found = true
		return s, nil
	}
	return r.svc.Start(ctx, o)
}

// Find returns the tag's session; any worker finds it.
func (r *Rental[T]) Find(ctx context.Context, tag string) (*providers.Session, error) {
	if err := r.svc.CheckTag(tag); err != nil {
		return nil, err
	}
	found, err := r.svc.List(ctx, tag)
	if err != nil {
		return nil, err
	}
	if len(found) == 0 {
		return nil, providers.ErrNotFound
	}
	s := r.svc.Session(found[0], tag)
	s.Found = true
	return s, nil
}

// Release ends every session carrying the tag and waits until the service
// no longer runs them. An unknown tag is not an error.
func (r *Rental[T]) Release(ctx context.Context, tag string) error {
	_, err := r.ReleaseMetered(ctx, tag)
	return err
}

// ReleaseMetered is Release, answering how long the sessions ran.
func (r *Rental[T]) ReleaseMetered(ctx context.Context, tag string) (time.Duration, error) {
	if err := r.svc.CheckTag(tag); err != nil {
		return 0, err
	}
	unlock := r.locks.Lock(tag)
	defer unlock()
	ctx, cancel := context.WithTimeout(ctx, r.releaseTimeout)
	defer cancel()
	found, err := r.svc.List(ctx, tag)
	if err != nil {
		return 0, err
	}
	var total time.Duration
	for _, s := range found {
		ran, err := r.svc.End(ctx, s, tag)
		if err != nil {
			return 0, err
		}
		total += ran
	}
	return total, nil
}

// Await polls gone, backing off up to 2s between polls, until it says the
// session is gone. A context that ends first is providers.ErrNotReleased,
// saying what was still there.
func Await(ctx context.Context, provider, still string, gone func() (bool, error)) error {
	for n := 0; ; n++ {
		ok, err := gone()
		if err != nil || ok {
			return err
		}
		if err := Backoff(ctx, n, 2*time.Second); err != nil {
			return fmt.Errorf("%s: %w: %s", provider, providers.ErrNotReleased, still)
		}
	}
}

// Account is what a provider needs to reach its service: the key, sent by
// auth on every request, and the base URL (def when empty).
type Account struct {
	Provider string
	Key      string
	// KeyEnv is the variable a missing key is asked for in.
	KeyEnv  string
	BaseURL string
	Default string
	HTTP    *http.Client
	Auth    func(r *http.Request, key string)
}

// Client checks the account (a key, an http(s) base URL) and answers a
// client for it.
func (a Account) Client() (*Client, error) {
	if a.Key == "" {
		return nil, MissingKey(a.Provider, a.KeyEnv)
	}
	base, err := BaseURL(a.Provider, a.BaseURL, a.Default)
	if err != nil {
		return nil, err
	}
	key, auth := a.Key, a.Auth
	return &Client{Provider: a.Provider, Base: base, HTTP: a.HTTP, Auth: func(r *http.Request) { auth(r, key) }}, nil
}
