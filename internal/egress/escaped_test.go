package egress

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/durable-browser/durable-browser/internal/netguard"
	"github.com/durable-browser/durable-browser/internal/redact"
)

// escapedSecret has every character HTML escapes and some JSON escapes.
const escapedSecret = `Pw<&>"q'x/y+z=9`

// escapedBodies are the bodies a page on the secret's origin can send it
// in, each in a form its own server (or another) decodes: JSON.stringify
// (which escapes only '"' and '\', unlike Go's \u003c), every character
// \u-escaped, HTML-escaped as Chrome writes a text node and an attribute,
// as Go's html.EscapeString writes it, and every character a decimal or
// hex reference.
func escapedBodies() map[string]string {
	var allU, dec, hexRefs strings.Builder
	for _, r := range escapedSecret {
		fmt.Fprintf(&allU, `\u%04x`, r)
		fmt.Fprintf(&dec, "&#%d;", r)
		fmt.Fprintf(&hexRefs, "&#x%X;", r)
	}
	return map[string]string{
		"JSON.stringify":                      `{"v":"Pw<&>\"q'x/y+z=9"}`,
		"every character \\u":                 `{"v":"` + allU.String() + `"}`,
		"HTML text node":                      `<p>Pw&lt;&amp;&gt;"q'x/y+z=9</p>`,
		"HTML attribute":                      `<p title="Pw<&amp;>&quot;q'x/y+z=9">`,
		"html.EscapeString":                   "v=" + html.EscapeString(escapedSecret),
		"every character a decimal reference": dec.String(),
		"every character a hex reference":     hexRefs.String(),
	}
}

// The guard reads the secret in each escaped body: toward another origin
// the request is refused (plain http, and http inside a CONNECT tunnel,
// which is how a browser sends ws:// and what an intercepted https
// tunnel carries), naming the secret and not showing it; toward its own
// origin the same request arrives intact.
func TestProxyRefusesEscapedSecretInBodies(t *testing.T) {
	var homeHits, otherHits atomic.Int32
	echo := func(n *atomic.Int32) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			n.Add(1)
			b, _ := io.ReadAll(r.Body)
			_, _ = w.Write(b)
		}
	}
	home := httptest.NewServer(echo(&homeHits))
	defer home.Close()
	other := httptest.NewServer(echo(&otherHits))
	defer other.Close()
	p, blocked := startRecording(t, Options{Policy: &netguard.Policy{AllowPrivate: true}})
	p.Arm((&redact.Matcher{}).With(redact.Secret{Name: "PW", Value: escapedSecret, Origins: []string{redact.OriginOf(home.URL)}}))
	pu, _ := url.Parse("http://" + p.Addr())
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}
	n := 0
	for name, body := range escapedBodies() {
		t.Run(name, func(t *testing.T) {
			resp, err := c.Post(other.URL+"/json", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Fatalf("toward another origin: status %d, want 403", resp.StatusCode)
			}
			n++
			if code := tunnelPost(t, p.Addr(), other.Listener.Addr().String(), body); code != http.StatusForbidden {
				t.Fatalf("toward another origin through a tunnel: status %d, want 403", code)
			}
			n++
			b := blocked()
			if len(b) != n || b[n-1].Rule != RuleSecret || b[n-1].Secret != "PW" || strings.Contains(b[n-1].Message, "q'x/y") {
				t.Fatalf("blocked %+v", b)
			}
			resp, err = c.Post(home.URL+"/json", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || string(got) != body {
				t.Fatalf("toward its own origin: %d %q, want 200 and the body", resp.StatusCode, got)
			}
			if code := tunnelPost(t, p.Addr(), home.Listener.Addr().String(), body); code != http.StatusOK {
				t.Fatalf("toward its own origin through a tunnel: status %d, want 200", code)
			}
		})
	}
	if otherHits.Load() != 0 {
		t.Fatalf("the other origin was reached %d times", otherHits.Load())
	}
	if want := int32(2 * len(escapedBodies())); homeHits.Load() != want {
		t.Fatalf("the secret's own origin was reached %d times, want %d", homeHits.Load(), want)
	}
}

// tunnelPost POSTs body to host over a CONNECT tunnel through the proxy
// and answers the status.
func tunnelPost(t *testing.T, proxy, host, body string) int {
	t.Helper()
	conn, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", host, host)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	fmt.Fprintf(conn, "POST /json HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", host, len(body), body)
	if resp, err = http.ReadResponse(br, nil); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// A WebSocket frame carrying the secret JSON.stringify'd or \u-escaped is
// stopped toward another origin and passed toward its own.
func TestFramesSearchEscapedSecret(t *testing.T) {
	armed := (&redact.Matcher{}).With(redact.Secret{Name: "PW", Value: escapedSecret, Origins: []string{"http://a.example"}})
	for name, body := range escapedBodies() {
		for _, origin := range []string{"http://b.example", "http://a.example"} {
			p := &Proxy{o: Options{MaxScan: 1 << 20}}
			p.Arm(armed)
			f := frame(true, 1, []byte(body), false)
			var out strings.Builder
			_, isBlocked := p.frames(strings.NewReader(string(f)), &out, origin, "ws://b.example")
			if want := origin == "http://b.example"; isBlocked != want {
				t.Errorf("%s toward %s: blocked = %v, want %v", name, origin, isBlocked, want)
			}
		}
	}
}
