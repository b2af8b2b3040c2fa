package driver

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/durable-browser/durable-browser/internal/devstack"
	"github.com/durable-browser/durable-browser/internal/evidence"
	"github.com/durable-browser/durable-browser/internal/states"
)

// BenchmarkCheckpoint is what a checkpoint adds to a call that can change
// the browser (activities.saveTo: the state read out of Chrome, merged over
// the last one, sealed and written to S3), on a real Chrome and a real S3
// (versitygw on loopback). The page is a signed-in shop's: 12 cookies (a
// 300-byte session token among them), 24 local and 6 session storage
// items (about 6 KiB). "changed": each call changes a cookie and a storage
// item, so every checkpoint writes a version (export, list, head, seal,
// put, prune). "unchanged": nothing changed, so the save finds the same
// digest and writes nothing (export, list, head). It reports p50 and p95 of
// the per-call time and the sealed object's size. docs/benchmarks.md has
// the numbers and how to run it.
func BenchmarkCheckpoint(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i := range 11 {
			http.SetCookie(w, &http.Cookie{Name: fmt.Sprintf("pref_%d", i), Value: strings.Repeat("v", 40), Path: "/"})
		}
		http.SetCookie(w, &http.Cookie{Name: "shop_session", Value: strings.Repeat("s", 300), Path: "/", HttpOnly: true})
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<!doctype html><title>Your basket</title><h1>Basket</h1><script>
for (let i = 0; i < 24; i++) localStorage.setItem("item-" + i, JSON.stringify({sku: "sku-" + i, name: "x".repeat(200)}));
for (let i = 0; i < 6; i++) sessionStorage.setItem("step-" + i, "y".repeat(60));
</script>`))
	}))
	b.Cleanup(srv.Close)
	store, client, bucket := benchStateStore(b)
	ckpts := store.Under("checkpoints", 2)

	for _, mode := range []string{"changed", "unchanged"} {
		b.Run(mode, func(b *testing.B) {
			br := attach(b, Options{})
			gotoPage(b, br, srv.URL+"/basket")
			name := "bench-" + mode
			var prev *states.State
			var took []time.Duration
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if mode == "changed" {
					b.StopTimer()
					if _, err := br.Eval(ctx, fmt.Sprintf(`() => { document.cookie = "seen=%d; path=/"; localStorage.setItem("last", "%d"); }`, i, i), "[]"); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				began := time.Now()
				now, err := br.ExportState(ctx)
				if err != nil {
					b.Fatal(err)
				}
				now.Name = name
				merged := states.Merge(prev, now)
				if _, err := ckpts.Save(ctx, merged); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(began))
				prev = &merged
			}
			b.StopTimer()
			slices.Sort(took)
			b.ReportMetric(ms(took[len(took)*50/100]), "p50-ms")
			b.ReportMetric(ms(took[min(len(took)-1, len(took)*95/100)]), "p95-ms")
			// The sealed object's size: the newest version's, as S3 lists it.
			out, err := client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String("checkpoints/" + states.NameHash(name) + "/v/")})
			if err != nil || len(out.Contents) == 0 {
				b.Fatalf("no checkpoint written: %v", err)
			}
			b.ReportMetric(float64(aws.ToInt64(out.Contents[len(out.Contents)-1].Size)), "sealed-bytes")
			if len(prev.Cookies) < 12 || len(prev.Origins) != 1 || len(prev.Tabs) != 1 {
				b.Fatalf("the checkpoint lacks the page's state: %d cookies, %d origins, %d tabs", len(prev.Cookies), len(prev.Origins), len(prev.Tabs))
			}
		})
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// benchStateStore is a state store over a versitygw on loopback.
func benchStateStore(b *testing.B) (*states.Store, *s3.Client, string) {
	b.Helper()
	const bucket = "driver-bench"
	ctx := context.Background()
	port, err := devstack.FreePort()
	if err != nil {
		b.Fatal(err)
	}
	srv, err := devstack.StartS3(ctx, devstack.S3Options{Address: fmt.Sprintf("127.0.0.1:%d", port), Dir: filepath.Join(b.TempDir(), "s3"), Bucket: bucket})
	if err != nil {
		b.Fatalf("versitygw: %v", err)
	}
	b.Cleanup(func() { _ = srv.Stop() })
	ev, err := evidence.NewS3(ctx, evidence.S3Options{Bucket: bucket, Endpoint: srv.Endpoint(), PathStyle: true, Region: "us-east-1",
		AccessKey: srv.AccessKey(), SecretKey: srv.SecretKey()})
	if err != nil {
		b.Fatal(err)
	}
	sealer, err := states.NewSealer(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		b.Fatal(err)
	}
	st, err := states.New(states.Options{Client: ev.Client(), Bucket: bucket, Sealer: sealer})
	if err != nil {
		b.Fatal(err)
	}
	return st, ev.Client(), bucket
}
