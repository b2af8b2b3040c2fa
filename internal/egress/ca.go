package egress

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// CA is the certificate authority one browser's proxy presents its
// intercepted TLS connections under. It is made in memory when the proxy
// starts and dies with it: its keys are never written anywhere, never
// logged, and no browser but the one started with its SPKI pin accepts
// what it signs (Chrome's --ignore-certificate-errors-spki-list, which
// needs --user-data-dir; the local provider sets both). Trust is by pin,
// not through a root store, so nothing outside that browser trusts it.
// Under context isolation one CA serves the proxies of every session of
// the worker's shared browser (Options.CA), and dies with the worker.
type CA struct {
	key     *ecdsa.PrivateKey
	cert    *x509.Certificate
	leafKey *ecdsa.PrivateKey // one key for every leaf: minting is one signature
	spki    string

	mu     sync.Mutex
	leaves map[string]*tls.Certificate
}

// maxLeaves bounds the leaf cache; past it the cache starts over.
const maxLeaves = 1024

// leafLife is how long a minted leaf is valid. The browser accepts it by
// its pin whatever its dates say; valid dates keep it ordinary.
const leafLife = 7 * 24 * time.Hour

// NewCA makes a CA: an ECDSA P-256 key and a self-signed certificate,
// and the key every leaf it mints carries.
func NewCA() (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("egress: CA key: %w", err)
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("egress: leaf key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "durable-browser egress proxy (this browser only)"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("egress: CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{key: key, cert: cert, leafKey: leafKey, spki: SPKIHash(cert), leaves: map[string]*tls.Certificate{}}, nil
}

// SPKIHash is the base64 of the SHA-256 of a certificate's public key
// info: the form --ignore-certificate-errors-spki-list takes.
func SPKIHash(c *x509.Certificate) string {
	sum := sha256.Sum256(c.RawSubjectPublicKeyInfo)
	return base64.StdEncoding.EncodeToString(sum[:])
}

// SPKI is the pin a browser is started with to accept this CA's leaves.
// It is public: it names the key, and reveals nothing of it.
func (c *CA) SPKI() string { return c.spki }

// Certificate is the CA's certificate (public).
func (c *CA) Certificate() *x509.Certificate { return c.cert }

// String names the CA by its pin, so a CA printed by mistake shows no key.
func (c *CA) String() string { return "egress.CA(" + c.spki + ")" }

// GoString: as String, for %#v.
func (c *CA) GoString() string { return c.String() }

// Leaf returns the certificate presented for host (a name or an IP
// address), minted on first use and then cached. The chain carries the
// CA's certificate, whose key is the pinned one.
func (c *CA) Leaf(host string) (*tls.Certificate, error) {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "" {
		return nil, errors.New("egress: no host to mint a certificate for")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if l, ok := c.leaves[host]; ok {
		return l, nil
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: host},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(leafLife),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		tmpl.IPAddresses = append(tmpl.IPAddresses, a.AsSlice())
	} else {
		tmpl.DNSNames = []string{host}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, &c.leafKey.PublicKey, c.key)
	if err != nil {
		return nil, fmt.Errorf("egress: minting a certificate for %s: %w", clip(host), err)
	}
	l := &tls.Certificate{Certificate: [][]byte{der, c.cert.Raw}, PrivateKey: c.leafKey}
	if len(c.leaves) >= maxLeaves {
		c.leaves = map[string]*tls.Certificate{}
	}
	c.leaves[host] = l
	return l, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		// crypto/rand does not fail on the systems Go supports.
		panic(err)
	}
	return n
}
