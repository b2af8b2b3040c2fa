package dial

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"go.temporal.io/sdk/client"

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

// On loopback the connection is not gzipped; elsewhere it keeps the SDK's
// default (gzip).
func TestCompression(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:7233", "[::1]:7233", "localhost:7233"} {
		if _, ok := Compression(addr).(*client.GrpcCompressionNone); !ok {
			t.Errorf("%s: want no compression on loopback, got %T", addr, Compression(addr))
		}
	}
	for _, addr := range []string{"temporal.example.com:7233", "10.0.0.5:7233", "ns.tmprl.cloud:7233"} {
		if c := Compression(addr); c != nil {
			t.Errorf("%s: want the SDK's default, got %T", addr, c)
		}
	}
}
