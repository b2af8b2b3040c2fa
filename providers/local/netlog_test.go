package local

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/durable-browser/durable-browser/internal/driver"
	"github.com/durable-browser/durable-browser/internal/egress"
	"github.com/durable-browser/durable-browser/internal/netguard"
	"github.com/durable-browser/durable-browser/providers"
)

// recordingResolver answers no name and remembers each it was asked.
type recordingResolver struct {
	mu    sync.Mutex
	names []string
}

func (r *recordingResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	r.names = append(r.names, host)
	r.mu.Unlock()
	return nil, errors.New("no such host")
}

func (r *recordingResolver) asked() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.names...)
}

// predictPage names hosts every way a page can make Chrome look a name up
// ahead of (or instead of) a request: dns-prefetch, preconnect, prefetch,
// a link, an image and a fetch. The names are under .test (RFC 6761): no
// resolver knows them, and none is ever asked here.
const predictPage = `<!doctype html><title>predict</title>
<link rel=dns-prefetch href="//prefetch-a.test">
<link rel=preconnect href="https://preconnect-b.test">
<link rel=prefetch href="https://prefetch-c.test/x">
<a href="https://link-f.test/">a link</a>
<img src="http://img-d.test/x.png">
<p id=s>loaded</p>
<script>fetch('https://fetch-e.test/').catch(() => { document.getElementById('s').textContent += ' fetched'; });</script>`

// resolverRequest is one request to Chrome's own host resolver.
type resolverRequest struct {
	Host        string `json:"host"` // scheme://host:port, after --host-resolver-rules
	Speculative bool   `json:"is_speculative"`
}

// taskEvents are the net log's events of a lookup leaving Chrome: a DNS
// task of its own DNS client and its transactions (UDP, TCP, DoH, the
// platform's), and the system resolver's (getaddrinfo).
var taskEvents = []string{"HOST_RESOLVER_DNS_TASK", "HOST_RESOLVER_SYSTEM_TASK", "DNS_TRANSACTION", "DNS_TRANSACTION_ATTEMPT",
	"DNS_TRANSACTION_TCP_ATTEMPT", "DNS_TRANSACTION_HTTPS_ATTEMPT", "DNS_TRANSACTION_PLATFORM_ATTEMPT"}

// lookups reads a Chrome net log (--log-net-log) and returns what Chrome
// asked its own host resolver for (HOST_RESOLVER_MANAGER_REQUEST, IP
// literals left out: the proxy's address, a loopback page) and the
// lookups that left the process (taskEvents).
func lookups(t *testing.T, path string) (asked []resolverRequest, sent []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var log struct {
		Constants struct {
			LogEventTypes map[string]int `json:"logEventTypes"`
		} `json:"constants"`
		Events []struct {
			Type   int             `json:"type"`
			Params json.RawMessage `json:"params"`
		} `json:"events"`
	}
	if err := json.Unmarshal(b, &log); err != nil {
		// A browser that did not exit cleanly leaves the list open.
		b = append(bytes.TrimRight(bytes.TrimSpace(b), ","), "]}"...)
		if err := json.Unmarshal(b, &log); err != nil {
			t.Fatalf("the net log does not parse: %v", err)
		}
	}
	if len(log.Events) == 0 {
		t.Fatal("the net log holds no events")
	}
	// The event types looked for are this Chromium's: a renamed one would
	// make the search find nothing, and prove nothing.
	for _, want := range append([]string{"HOST_RESOLVER_MANAGER_REQUEST"}, taskEvents...) {
		if _, ok := log.Constants.LogEventTypes[want]; !ok {
			t.Fatalf("this Chromium's net log has no event type %s; the check needs updating", want)
		}
	}
	name := map[int]string{}
	for k, v := range log.Constants.LogEventTypes {
		name[v] = k
	}
	for _, e := range log.Events {
		typ := name[e.Type]
		switch {
		case typ == "HOST_RESOLVER_MANAGER_REQUEST":
			var r resolverRequest
			_ = json.Unmarshal(e.Params, &r)
			if r.Host == "" {
				continue // the request's end
			}
			h := r.Host
			if i := strings.Index(h, "://"); i >= 0 {
				h = h[i+3:]
			}
			if ap, err := netip.ParseAddrPort(h); err == nil && ap.Addr().IsValid() {
				continue
			}
			if _, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
				continue
			}
			r.Host = h
			asked = append(asked, r)
		case slices.Contains(taskEvents, typ):
			sent = append(sent, typ+" "+string(e.Params))
		}
	}
	return asked, sent
}

// A browser behind its egress proxy looks no name up itself: not for a
// page's requests, and not ahead of them (DNS prefetch, preconnect,
// prefetch), so no lookup leaves Chrome but through the proxy, whose
// resolver is asked for the names the page requested. Shown from
// Chrome's net log, which lists every request to Chrome's host resolver
// and every lookup it sends. The control: a browser without the proxy,
// whose names go to a rule answering "not found" (so nothing leaves it
// either), shows the same page's names reaching its resolver, speculative
// ones included: the log would show a lookup if the egress browser made
// one.
func TestEgressBrowserLooksNoNameUp(t *testing.T) {
	ctx := testCtx(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, predictPage)
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	res := &recordingResolver{}
	eg, err := egress.Start(egress.Options{Policy: &netguard.Policy{AllowPrivate: true}, Resolver: res, Intercept: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eg.Close() })

	visit := func(tag string, extra []string, co providers.CreateOptions) string {
		t.Helper()
		netlog := filepath.Join(dir, tag+".json")
		p, err := New(Options{
			ChromePath:  chromePath(t),
			ProfileRoot: filepath.Join(dir, tag),
			BootID:      "boot-" + tag,
			ExtraFlags:  append([]string{"--log-net-log=" + netlog, "--net-log-capture-mode=Everything"}, extra...),
			Logger:      zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel),
		})
		if err != nil {
			t.Fatal(err)
		}
		co.Tag = tag
		s, err := p.Create(ctx, co)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Release(context.Background(), tag) })
		b, err := driver.Attach(ctx, driver.Options{CDPURL: s.CDPURL})
		if err != nil {
			t.Fatal(err)
		}
		acts, err := driver.ParseActions(json.RawMessage(fmt.Sprintf(`[{"op":"goto","url":%q},{"op":"wait","text":"fetched"}]`, srv.URL+"/")))
		if err != nil {
			t.Fatal(err)
		}
		r, err := b.Run(ctx, acts, driver.RunOptions{})
		if err != nil || r.Failed != nil {
			t.Fatalf("%s: %v %+v", tag, err, r)
		}
		_ = b.Close()
		// The log is complete once the browser has exited.
		if err := p.Release(ctx, tag); err != nil {
			t.Fatal(err)
		}
		return netlog
	}

	// Chromium 156 does ask its resolver for a proxied request's host
	// (next to the proxy's CONNECT); the egress flags' resolver rule
	// answers every such name "not found" before any lookup is made, so
	// the log shows only "~notfound", and nothing sent.
	asked, sent := lookups(t, visit("egress", nil, providers.CreateOptions{Egress: eg.Addr(), EgressSPKI: eg.SPKI()}))
	if len(sent) != 0 {
		t.Fatalf("the browser behind its egress proxy sent lookups of its own: %q", sent)
	}
	for _, r := range asked {
		if r.Host != "~notfound" || r.Speculative {
			t.Fatalf("the browser behind its egress proxy asked its own resolver for %+v (all asked: %+v)", r, asked)
		}
	}
	got := res.asked()
	for _, want := range []string{"img-d.test", "fetch-e.test"} {
		if !slices.Contains(got, want) {
			t.Fatalf("the proxy's resolver was not asked for %s (asked: %q)", want, got)
		}
	}
	// Network prediction is off: a name the page only hints at is not
	// even connected to ahead of a request.
	for _, hinted := range []string{"prefetch-a.test", "preconnect-b.test"} {
		if slices.Contains(got, hinted) {
			t.Fatalf("the proxy was asked to connect to %s, which the page only hints at (dns-prefetch, preconnect)", hinted)
		}
	}

	asked, sent = lookups(t, visit("control", []string{"--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"}, providers.CreateOptions{}))
	if len(sent) != 0 {
		t.Fatalf("the control browser sent lookups: %q", sent)
	}
	speculative := 0
	for _, r := range asked {
		if r.Speculative {
			speculative++
		}
	}
	if len(asked) < 2 || speculative == 0 {
		t.Fatalf("the control browser's log shows %d requests to its resolver, %d speculative (%+v): the log does not show lookups, so it proves nothing of the egress browser", len(asked), speculative, asked)
	}
}
