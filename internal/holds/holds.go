// Package holds describes a request the approval gate holds for a person,
// where that description leaves the worker: the hold signal to the
// session's workflow (and so history and the approver), the run's result
// and the log line. It is redacted here, once, so all three say the same.
package holds

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"unicode/utf8"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/driver"
	"github.com/durable-browser/durable-browser/internal/redact"
)

// Describer describes held requests for one worker process.
type Describer struct {
	red *redact.Redactor
	// key keys the digests that bind an approval to one request (Facts).
	// It never leaves this process; holds die with it.
	key [32]byte
}

// New returns a Describer redacting with red (nil: credential shapes only)
// under a key of its own.
func New(red *redact.Redactor) *Describer {
	d := &Describer{red: red}
	if _, err := rand.Read(d.key[:]); err != nil {
		panic("holds: no randomness for the hold key: " + err.Error()) // crypto/rand never fails on Linux
	}
	return d
}

// Sent is r as a run's journal, a hold and their log lines name it: the
// method, and the origin and path redacted.
func (d *Describer) Sent(r driver.GatedRequest) contract.SentRequest {
	return contract.SentRequest{Method: r.Method, Origin: d.red.URL(r.Origin), Path: d.red.String(r.Path)}
}

// Facts describe r for its approver: the scrubbed URL, the body when
// small, text and free of secrets, and a digest of the exact request keyed
// by this process's hold key (a plain hash of a body with a typed password
// in it would let anyone reading history guess the password offline).
func (d *Describer) Facts(r driver.GatedRequest) contract.RequestFacts {
	m := hmac.New(sha256.New, d.key[:])
	for _, part := range [][]byte{[]byte(strings.ToUpper(r.Method)), []byte(r.URL), r.Body} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		m.Write(n[:])
		m.Write(part)
	}
	f := contract.RequestFacts{URL: d.red.URL(r.URL), Digest: hex.EncodeToString(m.Sum(nil)), BodySize: len(r.Body)}
	if f.URL == "" {
		f.URL = d.red.URL(r.Origin) + d.red.String(r.Path)
	}
	if body := string(r.Body); len(body) <= contract.MaxShownBody && utf8.ValidString(body) && d.red.String(body) == body {
		f.Body = body
	}
	return f
}
