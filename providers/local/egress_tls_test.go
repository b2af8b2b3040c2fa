package local

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"

	"github.com/durable-browser/durable-browser/internal/driver"
	"github.com/durable-browser/durable-browser/internal/egress"
	"github.com/durable-browser/durable-browser/internal/netguard"
	"github.com/durable-browser/durable-browser/internal/redact"
	"github.com/durable-browser/durable-browser/providers"

	"github.com/durable-browser/durable-browser/contract"
)

// tlsSite is a loopback https site: an echo WebSocket (/echo), a
// WebSocket that keeps what it is sent (/keep), and a POST sink (/post).
type tlsSite struct {
	srv  *httptest.Server
	mu   sync.Mutex
	got  []string // frames on /keep and bodies on /post
	page string   // served at /page
}

func newTLSSite(t *testing.T) *tlsSite {
	s := &tlsSite{}
	keep := func(m string) { s.mu.Lock(); s.got = append(s.got, m); s.mu.Unlock() }
	mux := http.NewServeMux()
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			typ, b, err := c.Read(context.Background())
			if err != nil {
				return
			}
			_ = c.Write(context.Background(), typ, b)
		}
	})
	mux.HandleFunc("/keep", func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			_, b, err := c.Read(context.Background())
			if err != nil {
				return
			}
			keep(string(b))
		}
	})
	mux.HandleFunc("POST /post", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		keep(string(b))
		w.Header().Set("Access-Control-Allow-Origin", "*")
	})
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		s.mu.Lock()
		defer s.mu.Unlock()
		fmt.Fprint(w, s.page)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>plain</title><p>an ordinary https page</p>`)
	})
	s.srv = httptest.NewTLSServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

func (s *tlsSite) received() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.got...)
}

// A real Chromium behind an intercepting egress proxy, pinned to its CA:
// ordinary https pages and a wss echo work; once a secret bound to another
// origin is typed (armed), a wss frame and an https POST carrying it never
// reach the site, while what does not carry it does; a site whose
// certificate does not verify fails in the page. The driver's own secret
// guard is off: only the proxy stands between the page and the site.
func TestEgressInterceptsChromiumTLS(t *testing.T) {
	const secret = "chromium-TLS-Secret-8812-k"
	ctx := testCtx(t)
	site := newTLSSite(t)
	// A site whose certificate no root the proxy trusts signed.
	other, err := egress.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	badLeaf, err := other.Leaf("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	bad := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the site with a bad certificate was asked for %s", r.URL.Path)
	}))
	bad.TLS = &tls.Config{Certificates: []tls.Certificate{*badLeaf}}
	bad.StartTLS()
	t.Cleanup(bad.Close)

	roots := x509.NewCertPool()
	roots.AddCert(site.srv.Certificate())
	eg, err := egress.Start(egress.Options{Policy: &netguard.Policy{AllowPrivate: true}, Intercept: true, RootCAs: roots})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eg.Close() })
	var mu sync.Mutex
	var blocked []egress.Blocked
	eg.OnBlock(func(b egress.Blocked) { mu.Lock(); blocked = append(blocked, b); mu.Unlock() })

	p := newProvider(t, t.TempDir(), "boot-tls")
	s, err := p.Create(ctx, providers.CreateOptions{Tag: "tls-1", Egress: eg.Addr(), EgressSPKI: eg.SPKI()})
	if err != nil {
		t.Fatal(err)
	}
	b, err := driver.Attach(ctx, driver.Options{CDPURL: s.CDPURL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	run := func(acts string) *contract.RunResult {
		t.Helper()
		a, err := driver.ParseActions(json.RawMessage(acts))
		if err != nil {
			t.Fatal(err)
		}
		res, err := b.Run(ctx, a, driver.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Failed != nil {
			t.Fatalf("run %s: %+v", acts, res.Failed)
		}
		return res
	}
	wss := "wss" + strings.TrimPrefix(site.srv.URL, "https")

	// Ordinary https and a wss echo, nothing typed yet.
	run(fmt.Sprintf(`[{"op":"goto","url":%q},{"op":"wait","text":"an ordinary https page"}]`, site.srv.URL+"/"))
	site.page = fmt.Sprintf(`<!doctype html><title>t</title><p id=s>start</p><script>
const s = document.getElementById('s'), log = m => { s.textContent += ' ' + m; };
const e = new WebSocket(%[1]q + '/echo');
e.onopen = () => e.send('ping');
e.onmessage = m => log('echo:' + m.data);
e.onerror = () => log('echo:error');
if (location.search === '?go') {
  const pw = %[4]q;
  const k = new WebSocket(%[1]q + '/keep');
  k.onopen = () => { k.send('hello'); k.send('pw=' + pw); k.send(btoa(pw)); log('keep:sent'); };
  k.onclose = () => log('keep:closed');
  fetch(%[2]q + '/post', {method: 'POST', body: 'pw=' + pw}).then(r => log('post:' + r.status), () => log('post:error'));
  fetch(%[2]q + '/post', {method: 'POST', body: 'nothing secret'}).then(r => log('clean:' + r.status), () => log('clean:error'));
  fetch(%[3]q + '/').then(r => log('bad:' + r.status), () => log('bad:error'));
}
</script>`, wss, site.srv.URL, bad.URL, secret)
	run(fmt.Sprintf(`[{"op":"goto","url":%q},{"op":"wait","text":"echo:ping"}]`, site.srv.URL+"/page"))
	eg.Arm((&redact.Matcher{}).With(redact.Secret{Name: "PW", Value: secret, Origins: []string{"https://a.example"}}))
	run(fmt.Sprintf(`[{"op":"goto","url":%q},{"op":"wait","text":"echo:ping"},{"op":"wait","text":"keep:closed"},{"op":"wait","text":"post:"},{"op":"wait","text":"clean:200"},{"op":"wait","text":"bad:error"}]`, site.srv.URL+"/page?go"))

	got := site.received()
	if !slices.Contains(got, "hello") || !slices.Contains(got, "nothing secret") {
		t.Fatalf("the site should have received the frame and the body without the secret: %q", got)
	}
	for _, m := range got {
		if strings.Contains(m, secret) || strings.HasPrefix(m, "pw=") {
			t.Fatalf("the site received the secret (%d bytes)", len(m))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	var ws, post, cert bool
	for _, x := range blocked {
		ws = ws || (x.Rule == egress.RuleSecret && x.Method == "WS")
		post = post || (x.Rule == egress.RuleSecret && x.Method == "POST")
		cert = cert || (x.Rule == egress.RuleCertificate && x.Origin == strings.TrimPrefix(bad.URL, "https://"))
	}
	if !ws || !post || !cert {
		t.Fatalf("blocked %+v: want a WS frame and a POST by rule secret and the bad site by rule certificate", blocked)
	}
}

// The pin admits the proxy's CA and nothing else: a browser pinned to
// another CA's key refuses the certificates its proxy shows it, so a page
// over https fails to load (Chrome does not ignore certificate errors in
// general).
func TestEgressPinAdmitsOnlyItsCA(t *testing.T) {
	ctx := testCtx(t)
	site := newTLSSite(t)
	roots := x509.NewCertPool()
	roots.AddCert(site.srv.Certificate())
	eg, err := egress.Start(egress.Options{Policy: &netguard.Policy{AllowPrivate: true}, Intercept: true, RootCAs: roots})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eg.Close() })
	other, err := egress.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	p := newProvider(t, t.TempDir(), "boot-pin")
	s, err := p.Create(ctx, providers.CreateOptions{Tag: "pin-1", Egress: eg.Addr(), EgressSPKI: other.SPKI()})
	if err != nil {
		t.Fatal(err)
	}
	b, err := driver.Attach(ctx, driver.Options{CDPURL: s.CDPURL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	a, err := driver.ParseActions(json.RawMessage(fmt.Sprintf(`[{"op":"goto","url":%q},{"op":"wait","text":"an ordinary https page"}]`, site.srv.URL+"/")))
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Run(ctx, a, driver.RunOptions{})
	if err == nil || !strings.Contains(err.Error(), "ERR_CERT_AUTHORITY_INVALID") {
		t.Fatalf("a browser pinned to another key went to the page its proxy signed: %v", err)
	}
}
