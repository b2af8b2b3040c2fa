package dial

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/durable-browser/durable-browser/internal/config"
)

// An address whose host does not exist is refused naming it, before gRPC
// can answer "no children to pick from".
func TestTemporalNamesAnUnresolvableHost(t *testing.T) {
	real := lookupHost
	t.Cleanup(func() { lookupHost = real })
	lookupHost = func(_ context.Context, host string) ([]string, error) {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	_, err := Temporal(context.Background(), config.Temporal{Address: "no-such-host.invalid:7233", Namespace: "default"}, zerolog.Nop(), nil)
	if err == nil || !strings.Contains(err.Error(), `the Temporal host "no-such-host.invalid" in no-such-host.invalid:7233 does not resolve`) ||
		strings.Contains(err.Error(), "no children") {
		t.Fatalf("dial of an unresolvable host: %v", err)
	}
}
