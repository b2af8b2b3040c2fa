// Package dial connects to Temporal as the command-line flags say. It is
// shared by the durable-browser binary's client verbs and the worker binary.
package dial

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/rs/zerolog"
	"go.temporal.io/sdk/client"

	"github.com/durable-browser/durable-browser/internal/config"
	"github.com/durable-browser/durable-browser/internal/logging"
)

// Temporal connects to Temporal as the flags say. metrics, when not nil,
// receives the SDK's metrics (the worker's --metrics).
func Temporal(ctx context.Context, t config.Temporal, log zerolog.Logger, metrics client.MetricsHandler) (client.Client, error) {
	opts := client.Options{
		HostPort:          t.Address,
		Namespace:         t.Namespace,
		Logger:            logging.NewSDKLogger(log.With().Str("component", "temporal-sdk").Logger()),
		MetricsHandler:    metrics,
		ConnectionOptions: client.ConnectionOptions{GrpcCompression: Compression(t.Address)},
	}
	if t.TLSCert != "" || t.TLSCA != "" || t.APIKey != "" || t.TLSServerName != "" {
		tc := &tls.Config{ServerName: t.TLSServerName, MinVersion: tls.VersionTLS12}
		if t.TLSCert != "" {
			cert, err := tls.LoadX509KeyPair(t.TLSCert, t.TLSKey)
			if err != nil {
				return nil, &config.Error{Flag: "tls-cert", Problem: fmt.Sprintf("cannot load the key pair: %v", err), Fix: "give a PEM certificate and its matching key"}
			}
			tc.Certificates = []tls.Certificate{cert}
		}
		if t.TLSCA != "" {
			pem, err := os.ReadFile(t.TLSCA)
			if err != nil {
				return nil, &config.Error{Flag: "tls-ca", Problem: err.Error()}
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, &config.Error{Flag: "tls-ca", Problem: "no PEM certificate in the file"}
			}
			tc.RootCAs = pool
		}
		opts.ConnectionOptions.TLS = tc
	}
	if t.APIKey != "" {
		opts.Credentials = client.NewAPIKeyStaticCredentials(t.APIKey)
	}
	if err := resolvable(ctx, t.Address); err != nil {
		return nil, err
	}
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("connecting to Temporal at %s (namespace %s): %w; check --address and --namespace, and that the server is running (`durable-browser dev` starts one)", t.Address, t.Namespace, err)
	}
	return c, nil
}

// Compression is the gRPC compression for a Temporal frontend at address:
// none on loopback, where gzip only spends CPU on both ends (every poll,
// answer and payload compressed and decompressed), else the SDK's default
// (gzip), which saves bandwidth on a real network.
func Compression(address string) client.GrpcCompression {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return nil
	}
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return &client.GrpcCompressionNone{}
	}
	return nil
}

// lookupHost resolves a host name; tests swap it so no query leaves loopback.
var lookupHost = net.DefaultResolver.LookupHost

// resolvable refuses an address whose host name does not exist, which gRPC
// would report only as "no children to pick from".
func resolvable(ctx context.Context, address string) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return &config.Error{Flag: "address", Problem: fmt.Sprintf("%q is not host:port", address), Fix: "e.g. 127.0.0.1:7233"}
	}
	if host == "" || net.ParseIP(host) != nil {
		return nil
	}
	_, err = lookupHost(ctx, host)
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return &config.Error{Flag: "address", Problem: fmt.Sprintf("the Temporal host %q in %s does not resolve (no such name)", host, address), Fix: "give the Temporal frontend's host:port, e.g. 127.0.0.1:7233 for `durable-browser dev`"}
	}
	return nil
}
