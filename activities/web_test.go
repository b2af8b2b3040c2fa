package activities

import (
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/webfetch"
)

// A host name that does not exist is said so and not retried; a name server
// that did not answer may be tried again.
func TestFetchFailureForUnresolvableHost(t *testing.T) {
	notFound := &webfetch.LookupError{Host: "no-such-host.invalid", Err: &net.DNSError{Err: "no such host", Name: "no-such-host.invalid", IsNotFound: true}}
	f := fetchFailure(notFound)
	if f.Code != contract.CodeCommandFailed || f.Retryable || !strings.Contains(f.Message, "no-such-host.invalid does not resolve") || !strings.Contains(f.Message, "retrying will not help") {
		t.Fatalf("unresolvable host: %+v", f)
	}
	if f := fetchFailure(&webfetch.LookupError{Host: "h.example", Err: errors.New("no addresses")}); f.Retryable {
		t.Fatalf("a name with no addresses: %+v", f)
	}
	timeout := &webfetch.LookupError{Host: "h.example", Err: &net.DNSError{Err: "i/o timeout", Name: "h.example", IsTimeout: true}}
	if f := fetchFailure(timeout); f.Code != contract.CodeCommandFailed || !f.Retryable {
		t.Fatalf("a name server that did not answer: %+v", f)
	}
}
