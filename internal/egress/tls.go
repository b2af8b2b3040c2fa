package egress

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"
)

// RuleCertificate is the rule of a tunnel refused because the site's
// certificate did not verify: the browser sees the connection fail, as it
// would without the proxy, never a page the proxy accepted for it.
const RuleCertificate = "certificate"

// handshakeMax bounds each side's TLS handshake.
const handshakeMax = 30 * time.Second

// browserSide is the browser's end of an intercepted tunnel: what it sent
// after the CONNECT (the ClientHello the proxy peeked at) is read first.
// It carries what the leaf is minted for: the host the proxy judged and
// connected to, not a name the ClientHello might claim.
type browserSide struct {
	net.Conn
	r    *bufio.Reader
	host string
	// upstream is why the site's side failed; the browser's handshake
	// then fails too, so the page sees an error.
	upstream error
}

func (b *browserSide) Read(p []byte) (int, error) { return b.r.Read(p) }

// browserTLS is how the proxy answers the browser: HTTP/1.1 only in ALPN,
// so every request and frame of the tunnel is one the proxy can read
// (Chrome speaks HTTP/2 to a site only when the handshake offers it).
func (p *Proxy) browserTLS() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"http/1.1"},
		GetCertificate: func(h *tls.ClientHelloInfo) (*tls.Certificate, error) {
			b, ok := h.Conn.(*browserSide)
			if !ok {
				return nil, errors.New("egress: not an intercepted tunnel")
			}
			if b.upstream != nil {
				return nil, b.upstream
			}
			return p.ca.Leaf(b.host)
		},
	}
}

// tlsTunnel serves an intercepted TLS tunnel to authority (already judged
// and connected as up). The site's side comes first, verified against
// Options.RootCAs: only when the site proved its name does the browser get
// a leaf for it; otherwise the browser's handshake fails. Then the
// decrypted HTTP/1.1 is served as a plain tunnel's is.
func (p *Proxy) tlsTunnel(c net.Conn, br *bufio.Reader, up net.Conn, authority string) {
	host, _, err := net.SplitHostPort(authority)
	if err != nil {
		return
	}
	site := tls.Client(up, &tls.Config{
		ServerName:         host,
		RootCAs:            p.o.RootCAs,
		MinVersion:         tls.VersionTLS12,
		NextProtos:         []string{"http/1.1"},
		ClientSessionCache: p.sessions,
	})
	bs := &browserSide{Conn: c, r: br, host: host}
	ctx, cancel := context.WithTimeout(context.Background(), handshakeMax)
	defer cancel()
	if err := site.HandshakeContext(ctx); err != nil {
		var verr *tls.CertificateVerificationError
		if errors.As(err, &verr) {
			p.refused(Blocked{Method: "CONNECT", Origin: clip(authority), Rule: RuleCertificate,
				Message: fmt.Sprintf("the certificate of %s did not verify (rule certificate): %s", clip(authority), clip(verr.Err.Error()))})
		} else {
			p.logger().Debug().Str("to", clip(authority)).Err(err).Msg("egress: TLS handshake with the site failed")
		}
		bs.upstream = fmt.Errorf("egress: the site's TLS handshake failed")
	}
	browser := tls.Server(bs, p.toBrowser)
	if err := browser.HandshakeContext(ctx); err != nil || bs.upstream != nil {
		return
	}
	cancel()
	p.exchanges(browser, bufio.NewReader(browser), site, bufio.NewReader(site), "https", authority)
}
