package evidence

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"time"
)

// Memory is an in-process Store for tests of other packages. It behaves like
// the S3 store: idempotent Put, verified Get, ErrNotFound.
type Memory struct {
	mu      sync.Mutex
	objects map[string]memObject
	writes  int
}

type memObject struct {
	body        []byte
	sha256      string
	contentType string
	modified    time.Time
	etag        string
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory { return &Memory{objects: map[string]memObject{}} }

var _ Store = (*Memory)(nil)

// Put implements Store.
func (m *Memory) Put(ctx context.Context, key string, body []byte, contentType string) (PutResult, error) {
	if err := ctx.Err(); err != nil {
		return PutResult{}, err
	}
	if err := CheckKey(key); err != nil {
		return PutResult{}, err
	}
	sum := SHA256Hex(body)
	m.mu.Lock()
	defer m.mu.Unlock()
	if o, ok := m.objects[key]; ok {
		return existing(key, o.sha256, sum, int64(len(o.body)))
	}
	m.writes++
	m.objects[key] = memObject{
		body:        append([]byte(nil), body...),
		sha256:      sum,
		contentType: contentType,
		modified:    time.Now().UTC(),
		etag:        fmt.Sprintf("%q", fmt.Sprintf("mem-%d", m.writes)),
	}
	return PutResult{Key: key, SHA256: sum, Size: int64(len(body))}, nil
}

// PutReader implements Store. It checks the body against size and sha256.
func (m *Memory) PutReader(ctx context.Context, key string, r io.ReadSeeker, size int64, sha256, contentType string) (PutResult, error) {
	if err := ctx.Err(); err != nil {
		return PutResult{}, err
	}
	if err := CheckKey(key); err != nil {
		return PutResult{}, err
	}
	m.mu.Lock()
	o, ok := m.objects[key]
	m.mu.Unlock()
	if ok {
		return existing(key, o.sha256, sha256, int64(len(o.body)))
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return PutResult{}, err
	}
	body, err := io.ReadAll(io.LimitReader(r, size+1))
	if err != nil {
		return PutResult{}, err
	}
	if int64(len(body)) != size || SHA256Hex(body) != sha256 {
		return PutResult{}, fmt.Errorf("%q: the body is %d bytes hashing to %s, not the %d bytes hashing to %s it was given as", key, len(body), SHA256Hex(body), size, sha256)
	}
	return m.Put(ctx, key, body, contentType)
}

// Get implements Store.
func (m *Memory) Get(ctx context.Context, key string) ([]byte, Meta, error) {
	if err := ctx.Err(); err != nil {
		return nil, Meta{}, err
	}
	m.mu.Lock()
	o, ok := m.objects[key]
	m.mu.Unlock()
	if !ok {
		return nil, Meta{}, fmt.Errorf("%q: %w", key, ErrNotFound)
	}
	meta := o.meta(key)
	if err := verify(key, o.body, o.sha256); err != nil {
		return nil, meta, err
	}
	return append([]byte(nil), o.body...), meta, nil
}

// Head implements Store.
func (m *Memory) Head(ctx context.Context, key string) (Meta, error) {
	if err := ctx.Err(); err != nil {
		return Meta{}, err
	}
	m.mu.Lock()
	o, ok := m.objects[key]
	m.mu.Unlock()
	if !ok {
		return Meta{}, fmt.Errorf("%q: %w", key, ErrNotFound)
	}
	return o.meta(key), nil
}

// Keys lists stored keys in order.
func (m *Memory) Keys() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Sorted(maps.Keys(m.objects))
}

// Writes counts objects actually written (idempotent Puts do not count).
func (m *Memory) Writes() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.writes
}

// Overwrite replaces an object's bytes without updating its recorded hash,
// as damage or tampering would; for tests of the verification path.
func (m *Memory) Overwrite(key string, body []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o := m.objects[key]
	o.body = append([]byte(nil), body...)
	m.objects[key] = o
}

func (o memObject) meta(key string) Meta {
	return Meta{Key: key, SHA256: o.sha256, Size: int64(len(o.body)), ContentType: o.contentType, ETag: o.etag, LastModified: o.modified}
}
