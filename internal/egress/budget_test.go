package egress

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/internal/netguard"
	"github.com/durable-browser/durable-browser/internal/redact"
)

// What the proxies hold to search for secrets is bounded worker-wide:
// with the budget taken, a body that must be searched waits, then is
// refused as unchecked, never buffered beyond it; every request gives back
// what it took, so the whole budget is free again afterwards.
func TestScanBudgetBoundsBufferedBytes(t *testing.T) {
	old := budgetWait
	budgetWait = 200 * time.Millisecond
	defer func() { budgetWait = old }()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		hits.Add(1)
	}))
	defer srv.Close()
	p, blocked := startRecording(t, Options{Policy: &netguard.Policy{AllowPrivate: true}})
	p.Arm((&redact.Matcher{}).With(redact.Secret{Name: "PW", Value: "budget-Secret-Value-3321", Origins: []string{"https://a.example"}}))
	pu, _ := url.Parse("http://" + p.Addr())
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}
	post := func() int {
		resp, err := c.Post(srv.URL+"/p", "text/plain", strings.NewReader(strings.Repeat("x", 64<<10)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}

	// The budget taken (by other connections): refused, not buffered.
	if err := budget.Acquire(context.Background(), ScanBudget); err != nil {
		t.Fatal(err)
	}
	code := post()
	budget.Release(ScanBudget)
	if code != http.StatusForbidden || hits.Load() != 0 {
		t.Fatalf("with the budget taken: %d, %d requests reached the site; want 403 and none", code, hits.Load())
	}
	if b := blocked(); len(b) != 1 || b[0].Rule != RuleSecret || !strings.Contains(b[0].Message, "buffer") {
		t.Fatalf("blocked %+v", b)
	}

	// With room, they pass, and give back all they took.
	for i := 0; i < 20; i++ {
		if code := post(); code != http.StatusOK {
			t.Fatalf("post %d: %d", i, code)
		}
	}
	if !budget.TryAcquire(ScanBudget) {
		t.Fatal("requests kept part of the budget")
	}
	budget.Release(ScanBudget)
}
