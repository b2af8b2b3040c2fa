package states

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// A lease says which session writes a state, until when. It is taken and
// renewed with conditional writes (If-None-Match when there is none,
// If-Match on the ETag read), so two writers can never both believe they
// hold it; a holder that stops renewing (its worker died) loses it at Until.
type lease struct {
	Owner string    `json:"owner"`
	Until time.Time `json:"until"`
}

// HeldError says another session holds the state's lease.
type HeldError struct {
	Name  string
	Until time.Time
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("state %q is in use by another session (its lease runs until %s unless that session ends first)", e.Name, e.Until.UTC().Format(time.RFC3339))
}

// ErrLeaseLost is returned by Renew when another session took the lease
// (this one's lapsed meanwhile).
var ErrLeaseLost = errors.New("the state's lease was taken by another session")

func (s *Store) leaseKey(hash string) string { return s.dir(hash) + "lease.json" }

// lease reads a lease and its ETag: the zero lease when there is none.
func (s *Store) lease(ctx context.Context, hash string) (lease, string, error) {
	b, etag, err := s.get(ctx, s.leaseKey(hash), 4096)
	if err != nil {
		if notFound(err) {
			return lease{}, "", nil
		}
		return lease{}, "", fmt.Errorf("reading the state's lease: %w", err)
	}
	var l lease
	_ = json.Unmarshal(b, &l) // an unreadable lease is a free one
	return l, etag, nil
}

// putLease writes l over the lease whose ETag was etag ("" : none).
func (s *Store) putLease(ctx context.Context, hash, etag string, l lease) error {
	b, _ := json.Marshal(l)
	return s.put(ctx, s.leaseKey(hash), "application/json", b, nil, etag)
}

// Acquire takes the lease of name for owner (a session tag). It succeeds
// when no one holds it, its holder's lease ran out, owner already holds it
// (a retried create), or takeFrom (the session owner replaces, "" for
// none) holds it. Else it is a *HeldError.
func (s *Store) Acquire(ctx context.Context, name, owner, takeFrom string) error {
	hash := NameHash(name)
	for range 5 {
		l, etag, err := s.lease(ctx, hash)
		if err != nil {
			return err
		}
		now := s.o.Now()
		if l.Owner != "" && l.Owner != owner && (takeFrom == "" || l.Owner != takeFrom) && l.Until.After(now) {
			return &HeldError{Name: name, Until: l.Until}
		}
		err = s.putLease(ctx, hash, etag, lease{Owner: owner, Until: now.Add(s.o.LeaseTTL)})
		if err == nil {
			return nil
		}
		if !conflict(err) {
			return fmt.Errorf("taking the state's lease: %w", err)
		}
	}
	return &HeldError{Name: name, Until: s.o.Now().Add(s.o.LeaseTTL)}
}

// Renew extends owner's lease; ErrLeaseLost when someone else holds it. A
// lease that lapsed with no one taking it is taken back.
func (s *Store) Renew(ctx context.Context, name, owner string) error {
	hash := NameHash(name)
	l, etag, err := s.lease(ctx, hash)
	if err != nil {
		return err
	}
	if l.Owner != owner && l.Owner != "" && l.Until.After(s.o.Now()) {
		return ErrLeaseLost
	}
	if err := s.putLease(ctx, hash, etag, lease{Owner: owner, Until: s.o.Now().Add(s.o.LeaseTTL)}); err != nil {
		if conflict(err) {
			return ErrLeaseLost
		}
		return fmt.Errorf("renewing the state's lease: %w", err)
	}
	return nil
}

// Holds reports whether owner holds name's lease now.
func (s *Store) Holds(ctx context.Context, name, owner string) (bool, error) {
	l, _, err := s.lease(ctx, NameHash(name))
	return err == nil && l.Owner == owner && l.Until.After(s.o.Now()), err
}

// Release gives owner's lease up; a lease owner does not hold is left
// alone (releasing twice is not an error).
func (s *Store) Release(ctx context.Context, name, owner string) error {
	hash := NameHash(name)
	l, etag, err := s.lease(ctx, hash)
	if err != nil || l.Owner != owner || etag == "" {
		return err
	}
	if err := s.putLease(ctx, hash, etag, lease{}); err != nil && !conflict(err) {
		return fmt.Errorf("releasing the state's lease: %w", err)
	}
	return nil
}
