package driver

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-rod/rod/lib/proto"
	"github.com/ysmood/gson"

	"github.com/durable-browser/durable-browser/internal/netguard"
	"github.com/durable-browser/durable-browser/internal/redact"
)

// benchSecrets are three typed secrets bound to shop.example.
func benchSecrets() []redact.Secret {
	o := []string{"https://shop.example"}
	return []redact.Secret{
		{Name: "SHOP_PASSWORD", Value: "correct horse battery staple", Origins: o},
		{Name: "SHOP_TOKEN", Value: "tok_live_0123456789abcdef", Origins: o},
		{Name: "SHOP_PIN_PHRASE", Value: "pin-phrase-4242-xyz", Origins: o},
	}
}

// BenchmarkSecretScan is the guard's check of one request toward an
// origin the secrets are not bound to: its URL, a few headers and a 4 KiB
// body searched for three typed secrets in every spelling. "clean" holds
// none (the whole text is searched, the common case), "leak" holds one at
// the end of the body, "none-typed" is a session where no secret was typed
// (the check stops at once), "own-origin" a request to the secrets' own
// origin (nothing is searched).
func BenchmarkSecretScan(b *testing.B) {
	body := strings.Repeat("field=value&other=some+text+here&", 4096/33+1)[:4096]
	mk := func(url, body string) *proto.FetchRequestPaused {
		return &proto.FetchRequestPaused{RequestID: "1", Request: &proto.NetworkRequest{
			URL: url, Method: "POST", PostData: body, HasPostData: true,
			Headers: proto.NetworkHeaders{"Content-Type": gson.New("application/x-www-form-urlencoded"), "User-Agent": gson.New("Mozilla/5.0 (X11; Linux x86_64) Chrome/140"), "Referer": gson.New("https://shop.example/login")},
		}}
	}
	url := "https://analytics.example/collect?v=1&tid=UA-000000-1&cid=5555.7777&t=pageview&dp=%2Fcheckout%2Fstep-2"
	for _, tc := range []struct {
		name  string
		typed bool
		req   *proto.FetchRequestPaused
		found bool
	}{
		{"clean", true, mk(url, body), false},
		{"leak", true, mk(url, body[:4000]+"&p=tok_live_0123456789abcdef"), true},
		{"none-typed", false, mk(url, body), false},
		{"own-origin", true, mk("https://shop.example/login", body), false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			br := &Browser{ctx: context.Background()}
			if tc.typed {
				br.armSecrets(benchSecrets())
			}
			b.SetBytes(int64(len(tc.req.Request.URL) + len(tc.req.Request.PostData)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, _, found := br.secretIn(context.Background(), "", tc.req); found != tc.found {
					b.Fatalf("found = %v", found)
				}
			}
		})
	}
}

// BenchmarkSecretPageLoad loads a loopback page with 100 images and 10
// POSTs of 4 KiB to another origin, reach guard and secret guard on in
// both cases, in a session where no secret was typed ("untyped") and one
// where three were ("typed", bound to another origin, so every request is
// searched). The difference is what the search costs a page load.
func BenchmarkSecretPageLoad(b *testing.B) {
	const images, posts = 100, 10
	var served atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		served.Add(1)
	}))
	b.Cleanup(other.Close)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/page.html" {
			var sb strings.Builder
			sb.WriteString("<!doctype html><title>load</title>")
			for i := 0; i < images; i++ {
				fmt.Fprintf(&sb, `<img src="/img/%d.png?r=%s">`, i, r.URL.Query().Get("r"))
			}
			fmt.Fprintf(&sb, `<script>const body="x".repeat(4096); for (let i=0;i<%d;i++) fetch(%q+"/post?i="+i, {method:"POST", mode:"no-cors", body});</script>`, posts, other.URL)
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte(sb.String()))
			return
		}
		served.Add(1)
		w.Header().Set("Content-Type", "image/svg+xml")
		_, _ = w.Write([]byte(`<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>`))
	}))
	b.Cleanup(srv.Close)
	for _, mode := range []string{"untyped", "typed"} {
		b.Run(mode, func(b *testing.B) {
			br := attach(b, Options{Reach: &netguard.Policy{AllowLoopback: true}, GuardSecrets: true})
			if mode == "typed" {
				br.armSecrets(benchSecrets())
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				before := served.Load()
				mustRun(b, br, fmt.Sprintf(`[{"op":"goto","url":%q}]`, fmt.Sprintf("%s/page.html?r=%s-%d", srv.URL, mode, i)))
				eventually(b, "every request served", func() bool { return served.Load()-before >= images+posts })
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(images+posts+1)), "ns/request")
		})
	}
}
