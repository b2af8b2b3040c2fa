package browserbase

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/internal/chrome"
	"github.com/durable-browser/durable-browser/internal/tags"
	"github.com/durable-browser/durable-browser/providers"
	"github.com/durable-browser/durable-browser/providers/remote"
	"github.com/durable-browser/durable-browser/providers/rentfake"
)

const testKey = "bb_live_test_key_0123456789"

func fake(t *testing.T) *rentfake.Browserbase {
	t.Helper()
	b, err := rentfake.NewBrowsers(t.TempDir())
	if err != nil {
		t.Fatalf("this test needs Chromium: %v", err)
	}
	f := rentfake.NewBrowserbase(b, testKey, "proj-1")
	t.Cleanup(f.Close)
	return f
}

func provider(t *testing.T, f *rentfake.Browserbase, o Options) *Provider {
	t.Helper()
	o.APIKey, o.ProjectID, o.BaseURL = testKey, "proj-1", f.URL()
	p, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// pages dials the connect URL as the driver would and counts page targets.
func pages(t *testing.T, ctx context.Context, cdpURL string) int {
	t.Helper()
	ws, err := chrome.ResolveWS(ctx, cdpURL)
	if err != nil {
		t.Fatal(err)
	}
	c, err := chrome.Dial(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var res struct {
		TargetInfos []struct {
			Type string `json:"type"`
		} `json:"targetInfos"`
	}
	if err := c.Call(ctx, "Target.getTargets", nil, &res); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ti := range res.TargetInfos {
		if ti.Type == "page" {
			n++
		}
	}
	return n
}

func TestBrowserbaseCreateFindRelease(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	f := fake(t)
	p := provider(t, f, Options{Lifetime: 2 * time.Hour, Region: "eu-central-1", Proxies: true, AdvancedStealth: true})

	s, err := p.Create(ctx, providers.CreateOptions{Tag: "wf-a-1", Stealth: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.Found || s.CDPURL == "" || s.RemoteID == "" || s.StartedAt.IsZero() {
		t.Fatalf("new session: %+v", s)
	}
	if !strings.Contains(s.LiveViewURL, f.LiveViewSecret) {
		t.Fatalf("live view URL not taken from the debug endpoint")
	}
	if pages(t, ctx, s.CDPURL) == 0 {
		t.Fatal("the connect URL reaches no page")
	}
	body := f.CreateBodies()[0]
	meta, _ := body["userMetadata"].(map[string]any)
	bs, _ := body["browserSettings"].(map[string]any)
	if body["keepAlive"] != true || body["timeout"] != float64(7200) || body["region"] != "eu-central-1" ||
		body["proxies"] != true || bs["advancedStealth"] != true || meta[metaKey] != "wf-a-1" {
		t.Fatalf("create body: %v", body)
	}

	// Another worker (another Provider) finds it by tag through the list.
	p2 := provider(t, f, Options{})
	again, err := p2.Create(ctx, providers.CreateOptions{Tag: "wf-a-1", Stealth: true})
	if err != nil {
		t.Fatal(err)
	}
	if !again.Found || again.RemoteID != s.RemoteID || again.CDPURL != s.CDPURL || again.Made != nil && !again.Made.Stealth {
		t.Fatalf("found session differs: %+v", again)
	}
	if n := len(f.CreateBodies()); n != 1 {
		t.Fatalf("%d sessions created for one tag", n)
	}
	if _, err := p2.Find(ctx, "wf-b-1"); !errors.Is(err, providers.ErrNotFound) {
		t.Fatalf("find of an unknown tag: %v", err)
	}

	ran, err := p2.ReleaseMetered(ctx, "wf-a-1")
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Session(s.RemoteID); got == nil || got.Status != "COMPLETED" {
		t.Fatalf("session not completed after release: %+v", got)
	}
	if n := f.Requests("GET /v1/sessions/{id}"); n < 3 {
		t.Fatalf("release polled status %d times; the fake shows RUNNING twice first", n)
	}
	if ran <= 0 {
		t.Fatalf("metered %s", ran)
	}
	if _, err := p.Find(ctx, "wf-a-1"); !errors.Is(err, providers.ErrNotFound) {
		t.Fatalf("status after release: %v", err)
	}
	if err := p.Release(ctx, "wf-a-1"); err != nil {
		t.Fatalf("second release: %v", err)
	}
}

func TestBrowserbaseFailures(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f := fake(t)
	p := provider(t, f, Options{})

	cases := []struct {
		name   string
		status int
		retry  string
		want   error
		after  time.Duration
	}{
		{"unauthorized", http.StatusUnauthorized, "", remote.ErrAuth, 0},
		{"forbidden", http.StatusForbidden, "", remote.ErrAuth, 0},
		{"rate limited", http.StatusTooManyRequests, "7", remote.ErrRateLimited, 7 * time.Second},
		{"server error", http.StatusBadGateway, "", remote.ErrUnavailable, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f.FailNext(1, c.status, c.retry)
			_, err := p.Create(ctx, providers.CreateOptions{Tag: "x"})
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			var re *remote.Error
			if !errors.As(err, &re) || re.RetryAfter != c.after {
				t.Fatalf("retry after: %+v", re)
			}
			if strings.Contains(err.Error(), testKey) || strings.Contains(err.Error(), f.URL()) {
				t.Fatalf("error text carries a credential or address: %v", err)
			}
		})
	}

	wrong, _ := New(Options{APIKey: "wrong", ProjectID: "proj-1", BaseURL: f.URL()})
	if _, err := wrong.Find(ctx, "x"); !errors.Is(err, remote.ErrAuth) {
		t.Fatalf("wrong key: %v", err)
	}
	if _, err := p.Create(ctx, providers.CreateOptions{Tag: strings.Repeat("a", 61)}); !errors.Is(err, tags.ErrInvalid) {
		t.Fatalf("long tag: %v", err)
	}
	if _, err := p.Create(ctx, providers.CreateOptions{Tag: "x", Proxy: "http://p:1"}); !errors.Is(err, providers.ErrUnsupported) {
		t.Fatalf("proxy: %v", err)
	}

	url := f.URL()
	f.Close()
	down, _ := New(Options{APIKey: testKey, ProjectID: "proj-1", BaseURL: url})
	if _, err := down.Find(ctx, "x"); !errors.Is(err, remote.ErrUnavailable) {
		t.Fatalf("service down: %v", err)
	}
}

func TestBrowserbaseFromEnv(t *testing.T) {
	env := map[string]string{}
	get := func(k string) string { return env[k] }
	if _, err := FromEnv(Options{}, get); err == nil || !strings.Contains(err.Error(), EnvAPIKey) {
		t.Fatalf("missing key: %v", err)
	}
	env[EnvAPIKey] = "k"
	if _, err := FromEnv(Options{}, get); err == nil || !strings.Contains(err.Error(), EnvProjectID) {
		t.Fatalf("missing project: %v", err)
	}
	env[EnvProjectID] = "p"
	o, err := FromEnv(Options{}, get)
	if err != nil || o.APIKey != "k" || o.ProjectID != "p" {
		t.Fatalf("%+v %v", o, err)
	}
	if _, err := New(Options{APIKey: "k", ProjectID: "p", Region: "mars-1"}); err == nil {
		t.Fatal("an unknown region was taken")
	}
}
