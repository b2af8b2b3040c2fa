// Package s3log records the requests an S3 client sends, for tests that
// count a store's round trips (as net/http/httptest serves tests). Nothing
// outside tests uses it.
package s3log

import (
	"net/http"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Log is the requests sent through a client made by Client: each one's
// method, or LIST for a listing.
type Log struct {
	next s3.HTTPClient
	mu   sync.Mutex
	got  []string
}

// Client is c sending through a new Log.
func Client(c *s3.Client) (*s3.Client, *Log) {
	l := &Log{}
	return s3.New(c.Options(), func(o *s3.Options) { l.next = o.HTTPClient; o.HTTPClient = l }), l
}

// Do records r and sends it.
func (l *Log) Do(r *http.Request) (*http.Response, error) {
	m := r.Method
	if r.URL.Query().Has("list-type") {
		m = "LIST"
	}
	l.mu.Lock()
	l.got = append(l.got, m)
	l.mu.Unlock()
	return l.next.Do(r)
}

// Take answers the requests recorded since the last Take.
func (l *Log) Take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.got
	l.got = nil
	return out
}
