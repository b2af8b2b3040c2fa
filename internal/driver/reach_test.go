package driver

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/durable-browser/durable-browser/internal/netguard"
)

// reachServers are two loopback servers: A is a site the browser may use,
// B stands for one of the worker's own services. B counts every request
// that reaches it.
type reachServers struct {
	a, b   *httptest.Server
	bHits  atomic.Int64
	mu     sync.Mutex
	aPaths []string
	policy *netguard.Policy
}

func newReachServers(t testing.TB) *reachServers {
	rs := &reachServers{}
	rs.b = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rs.bHits.Add(1)
		_, _ = w.Write([]byte("service"))
	}))
	t.Cleanup(rs.b.Close)
	_, bPort, _ := net.SplitHostPort(rs.b.Listener.Addr().String())
	rs.a = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rs.mu.Lock()
		rs.aPaths = append(rs.aPaths, r.URL.Path)
		rs.mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/page.html":
			fmt.Fprintf(w, `<!doctype html><title>A</title><p>page A</p>
<iframe src="http://localhost:%[1]s/frame"></iframe>
<script>
const B = "http://127.0.0.1:%[1]s";
const img = () => new Promise(r => { const i = new Image(); i.onload = i.onerror = r; i.src = B + "/img.png"; });
Promise.allSettled([
  fetch(B + "/fetch"),
  fetch(B + "/post", {method: "POST", body: "x"}),
  fetch("http://[::ffff:127.0.0.1]:%[1]s/mapped"),
  img(),
  fetch("/same-origin"),
]).then(() => fetch("/done"));
</script>`, bPort)
		default:
			_, _ = w.Write([]byte("ok"))
		}
	}))
	t.Cleanup(rs.a.Close)
	rs.policy = &netguard.Policy{AllowLoopback: true, Services: []netguard.Service{{Name: "test service", Host: "127.0.0.1", Port: bPort}}}
	return rs
}

func (rs *reachServers) aSaw(path string) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for _, p := range rs.aPaths {
		if p == path {
			return true
		}
	}
	return false
}

func TestReachGuardBlocksSubresources(t *testing.T) {
	rs := newReachServers(t)
	b := attach(t, Options{Reach: rs.policy})
	first := mustRun(t, b, fmt.Sprintf(`[{"op":"goto","url":%q},{"op":"wait","load":true}]`, rs.a.URL+"/page.html"))
	eventually(t, "page A's requests to settle", func() bool { return rs.aSaw("/done") })
	if !rs.aSaw("/same-origin") {
		t.Fatalf("server A did not get the page's own request")
	}
	res := mustRun(t, b, `[{"op":"wait","ms":1}]`)
	res.Blocked = append(first.Blocked, res.Blocked...)
	res.Sent = append(first.Sent, res.Sent...)
	if n := rs.bHits.Load(); n != 0 {
		t.Fatalf("server B received %d requests", n)
	}
	rules := map[string]int{}
	methods := map[string]bool{}
	for _, br := range res.Blocked {
		rules[br.Rule]++
		methods[br.Method] = true
	}
	// fetch, POST, mapped-address fetch, image and the iframe.
	if rules["service"] < 5 || !methods["POST"] || !methods["GET"] {
		t.Fatalf("blocked %+v", res.Blocked)
	}
	if len(res.Sent) != 0 {
		t.Fatalf("a blocked POST was journaled as sent: %+v", res.Sent)
	}
}

func TestReachGuardBlocksGoto(t *testing.T) {
	rs := newReachServers(t)
	b := attach(t, Options{Reach: rs.policy})
	gotoPage(t, b, rs.a.URL+"/plain")
	for _, u := range []string{rs.b.URL + "/", strings.Replace(rs.b.URL, "127.0.0.1", "localhost", 1) + "/ui", strings.Replace(rs.b.URL, "127.0.0.1", "2130706433", 1)} {
		acts, err := ParseActions(json.RawMessage(fmt.Sprintf(`[{"op":"goto","url":%q}]`, u)))
		if err != nil {
			t.Fatal(err)
		}
		res, err := b.Run(ctxT(t), acts, RunOptions{})
		var ae *ActionError
		var be *BlockedError
		if !errors.As(err, &ae) || ae.Kind != KindBlocked || !errors.As(err, &be) || be.Rule != "service" {
			t.Fatalf("goto %s: %v, want a blocked navigation", u, err)
		}
		if !strings.Contains(err.Error(), "rule service") || res == nil || res.Completed != 0 || len(res.Blocked) == 0 {
			t.Fatalf("goto %s: %v %+v", u, err, res)
		}
	}
	if n := rs.bHits.Load(); n != 0 {
		t.Fatalf("server B received %d requests", n)
	}
	// The page the tab was on still works.
	gotoPage(t, b, rs.a.URL+"/plain")
}

// TestReachGuardMetadataAndAllowList: the strictest policy blocks the
// metadata address without any request leaving (Chrome never gets to
// connect), and a session allow list blocks every other host.
func TestReachGuardAllowList(t *testing.T) {
	rs := newReachServers(t)
	p := *rs.policy
	p.SessionHosts = []string{"127.0.0.1"}
	b := attach(t, Options{Reach: &p})
	gotoPage(t, b, rs.a.URL+"/plain")
	for u, rule := range map[string]string{
		"http://169.254.169.254/latest/meta-data/":                   "metadata",
		strings.Replace(rs.a.URL, "127.0.0.1", "localhost", 1) + "/": "allow_list",
	} {
		acts, _ := ParseActions(json.RawMessage(fmt.Sprintf(`[{"op":"goto","url":%q}]`, u)))
		_, err := b.Run(ctxT(t), acts, RunOptions{})
		var be *BlockedError
		if !errors.As(err, &be) || be.Rule != rule {
			t.Fatalf("goto %s: %v, want rule %s", u, err, rule)
		}
	}
}

func TestHostPort(t *testing.T) {
	for in, want := range map[string]string{
		"localhost:8080":                 "localhost:8080",
		"ws://LocalHost:8080/x?y":        "localhost:8080",
		"wss://a.example/socket":         "a.example:443",
		"http://u:p@a.example./x":        "a.example:80",
		"https://[::1]/":                 "::1:443",
		"[::1]:9":                        "::1:9",
		"data:text/plain,x":              "",
		"http://127.0.0.1:39349/img?p=1": "127.0.0.1:39349",
	} {
		got := hostPort(in)
		if want != "" {
			want = hostPortWant(want)
		}
		if got != want {
			t.Errorf("hostPort(%q) = %q, want %q", in, got, want)
		}
	}
}

// hostPortWant spells an IPv6 expectation in brackets, as JoinHostPort does.
func hostPortWant(s string) string {
	if strings.Count(s, ":") > 1 {
		i := strings.LastIndex(s, ":")
		return "[" + s[:i] + "]" + s[i:]
	}
	return s
}
