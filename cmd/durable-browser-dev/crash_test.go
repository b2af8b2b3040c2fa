package main

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/internal/demosite"
)

// The first order reaches the shop and is counted, and its answer is held
// until the client goes away; orders after it are answered as usual.
func TestOrderHold(t *testing.T) {
	site := demosite.New()
	h := &orderHold{next: site, arrived: make(chan struct{}), release: make(chan struct{})}
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer close(h.release)

	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	post := func(ctx context.Context, path string, form url.Values) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return client.Do(req)
	}
	must := func(resp *http.Response, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	must(post(context.Background(), "/shop/signin", url.Values{"email": {demosite.ShopEmail}, "password": {demosite.ShopPassword}}))
	must(post(context.Background(), "/shop/cart", url.Values{"product": {"lamp"}}))

	ctx, cancel := context.WithCancel(context.Background())
	answered := make(chan error, 1)
	go func() {
		resp, err := post(ctx, "/shop/order", nil)
		if err == nil {
			_ = resp.Body.Close()
		}
		answered <- err
	}()
	select {
	case <-h.arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("the order never arrived")
	}
	if n := len(site.Orders()); n != 1 {
		t.Fatalf("%d orders when the hold began, want 1 (placed before it is held)", n)
	}
	select {
	case err := <-answered:
		t.Fatalf("the held order was answered: %v", err)
	default:
	}
	cancel() // the browser's connection goes away
	if err := <-answered; err == nil {
		t.Fatal("the held order got an answer")
	}

	must(post(context.Background(), "/shop/cart", url.Values{"product": {"mug"}}))
	resp, err := post(context.Background(), "/shop/order", nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || len(site.Orders()) != 2 {
		t.Fatalf("a second order: status %d, %d orders", resp.StatusCode, len(site.Orders()))
	}
}
