package driver

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/internal/egress"
	"github.com/durable-browser/durable-browser/internal/netguard"
)

// BenchmarkReachDecide is the guard's decision for one request, its name's
// lookup answered from the cache as it is for all but a host's first
// request.
func BenchmarkReachDecide(b *testing.B) {
	br := &Browser{o: Options{Reach: &netguard.Policy{Services: []netguard.Service{{Name: "Temporal frontend", Host: "127.0.0.1", Port: "7233"}}},
		Resolver: fixedResolver{netip.MustParseAddr("93.184.216.34")}}, ctx: context.Background()}
	urls := []string{"https://shop.example/assets/app.js?v=3", "http://93.184.216.34/img.png", "https://cdn.example/x/y/z.css"}
	for _, u := range urls {
		br.reachDecide(context.Background(), u)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if d := br.reachDecide(context.Background(), urls[i%len(urls)]); !d.Allowed() {
			b.Fatal(d.Message)
		}
	}
}

type fixedResolver struct{ a netip.Addr }

func (r fixedResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{r.a}, nil
}

// BenchmarkReachPageLoad loads a loopback page with 100 images, with the
// reach guard off (no interception), on (every request held and judged
// at the Request stage), and on with the browser behind the egress proxy
// as the local provider starts it (every request judged again and
// forwarded by the proxy). The differences divided by the requests are the
// guards' costs per request in real Chromium.
func BenchmarkReachPageLoad(b *testing.B) {
	const images = 100
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/page.html" {
			var sb strings.Builder
			sb.WriteString("<!doctype html><title>imgs</title>")
			for i := 0; i < images; i++ {
				fmt.Fprintf(&sb, `<img src="/img/%d.png?r=%s">`, i, r.URL.Query().Get("r"))
			}
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte(sb.String()))
			return
		}
		served.Add(1)
		w.Header().Set("Content-Type", "image/svg+xml")
		_, _ = w.Write([]byte(`<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>`))
	}))
	b.Cleanup(srv.Close)
	on := &netguard.Policy{AllowLoopback: true, Services: []netguard.Service{{Name: "Temporal frontend", Host: "127.0.0.1", Port: "7233"}}}
	for _, mode := range []struct {
		name   string
		reach  *netguard.Policy
		egress bool
	}{{"off", nil, false}, {"on", on, false}, {"egress", on, true}} {
		b.Run(mode.name, func(b *testing.B) {
			o := Options{Reach: mode.reach}
			if mode.egress {
				eg, err := egress.Start(egress.Options{Policy: mode.reach})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = eg.Close() })
				ws, _, stop, err := startChrome(b.TempDir(), "--proxy-server=http://"+eg.Addr(), "--proxy-bypass-list=<-loopback>")
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(stop)
				o.CDPURL, o.Egress = ws, eg
			}
			br := attachTo(b, o)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				before := served.Load()
				mustRun(b, br, fmt.Sprintf(`[{"op":"goto","url":%q}]`, fmt.Sprintf("%s/page.html?r=%s-%d", srv.URL, mode.name, i)))
				t0 := time.Now()
				eventually(b, "every image served", func() bool { return served.Load()-before >= images })
				if i == 0 {
					b.Logf("goto+settle done; images took %s more", time.Since(t0))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(images+1)), "ns/request")
		})
	}
}
