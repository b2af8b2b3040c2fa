// Package wire is the leak scan: sentinel secrets are used everywhere they
// could leak, then every byte the run produced is searched for them in every
// spelling. See docs/leak-scan.md.
package wire

import (
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/durable-browser/durable-browser/test/harness"
)

var (
	env *harness.Env
	// siteA is where the secrets belong (their origins), siteB elsewhere,
	// siteBS is siteB on https.
	siteA, siteB, siteBS *site
	// siteRoots is a PEM file of siteBS's certificate, the worker
	// process's roots (SSL_CERT_FILE) for the sites its browsers' egress
	// proxies verify.
	siteRoots string
	// deadURL is an address nothing listens on.
	deadURL string
	secrets []sentinel
)

// sentinel is one secret registered with the worker for this run.
type sentinel struct {
	Name, Value string
}

// Environment variable names the worker reads.
func (s sentinel) envVar() string { return "DURABLE_BROWSER_SECRET_" + s.Name }

func randomString(n int, alphabet string) string {
	b := make([]byte, n)
	for i := range b {
		k, err := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		if err != nil {
			panic(err)
		}
		b[i] = alphabet[k.Int64()]
	}
	return string(b)
}

const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// newSentinels makes this run's secrets: random, at least 32 characters; the
// password has characters that URL encoding changes (and '*', which
// markdown escapes, and < & > " ', which HTML serializers and JSON escape),
// the token an '_', the card is all digits.
func newSentinels() []sentinel {
	return []sentinel{
		{"WIRE_PASSWORD", "Pw" + randomString(18, alnum) + "+/=*<&>\"'" + randomString(14, alnum+"!$@")},
		{"WIRE_API_TOKEN", "tok_" + randomString(40, alnum)},
		{"WIRE_CARD", "4" + randomString(31, "0123456789")},
	}
}

func secretByName(name string) string {
	for _, s := range secrets {
		if s.Name == name {
			return s.Value
		}
	}
	panic("no sentinel " + name)
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	secrets = newSentinels()
	var err error
	if siteA, err = startSite("A", handlerA); err != nil {
		fmt.Fprintln(os.Stderr, "wire setup:", err)
		return 1
	}
	defer siteA.Close()
	if siteB, err = startSite("B", handlerB); err != nil {
		fmt.Fprintln(os.Stderr, "wire setup:", err)
		return 1
	}
	defer siteB.Close()
	if siteBS, err = startTLSSite("B (https)", handlerB); err != nil {
		fmt.Fprintln(os.Stderr, "wire setup:", err)
		return 1
	}
	defer siteBS.Close()
	dir, err := os.MkdirTemp("", "wire-roots")
	if err != nil {
		fmt.Fprintln(os.Stderr, "wire setup:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	siteRoots = filepath.Join(dir, "roots.pem")
	if err := os.WriteFile(siteRoots, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: siteBS.srv.Certificate().Raw}), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "wire setup:", err)
		return 1
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "wire setup:", err)
		return 1
	}
	deadURL = "http://" + l.Addr().String()
	_ = l.Close()
	// The secrets and their origins go into this process's environment:
	// in-process workers read it, and worker and CLI child processes
	// inherit it. Only site A is a secret's origin.
	for _, s := range secrets {
		os.Setenv(s.envVar(), s.Value)
		os.Setenv(s.envVar()+"_ORIGINS", siteA.URL)
	}
	env, err = harness.Start(harness.Options{Binary: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "wire setup:", err)
		return 1
	}
	defer env.Close()
	return m.Run()
}
