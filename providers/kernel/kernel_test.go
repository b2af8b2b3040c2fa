package kernel

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/chrome"
	"github.com/durable-browser/durable-browser/providers"
	"github.com/durable-browser/durable-browser/providers/remote"
	"github.com/durable-browser/durable-browser/providers/rentfake"
)

const testKey = "sk_kernel_test_0123456789"

func fake(t *testing.T) *rentfake.Kernel {
	t.Helper()
	b, err := rentfake.NewBrowsers(t.TempDir())
	if err != nil {
		t.Fatalf("this test needs Chromium: %v", err)
	}
	f := rentfake.NewKernel(b, testKey)
	f.Profiles = []string{"shop"}
	t.Cleanup(f.Close)
	return f
}

func provider(t *testing.T, f *rentfake.Kernel, o Options) *Provider {
	t.Helper()
	o.APIKey, o.BaseURL = testKey, f.URL()
	p, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func reachable(t *testing.T, ctx context.Context, cdpURL string) {
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
	if err := c.Call(ctx, "Target.getTargets", nil, nil); err != nil {
		t.Fatal(err)
	}
}

func TestKernelCreateFindRelease(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	f := fake(t)
	// 150 other browsers: finding the tag takes two list pages.
	f.Fill(150)
	p := provider(t, f, Options{IdleTimeout: 20 * time.Minute})

	s, err := p.Create(ctx, providers.CreateOptions{Tag: "wf-k-1", Stealth: true, Profile: &contract.Profile{Name: "shop", Save: true}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Found || s.CDPURL == "" || s.RemoteID == "" || s.StartedAt.IsZero() || !strings.Contains(s.LiveViewURL, f.LiveViewSecret) {
		t.Fatalf("new browser: %+v", s)
	}
	reachable(t, ctx, s.CDPURL)
	body := f.CreateBodies()[150]
	prof, _ := body["profile"].(map[string]any)
	pers, _ := body["persistence"].(map[string]any)
	if body["stealth"] != true || body["timeout_seconds"] != float64(1200) || pers["id"] != "wf-k-1" || prof["name"] != "shop" || prof["save_changes"] != true {
		t.Fatalf("create body: %v", body)
	}

	p2 := provider(t, f, Options{})
	again, err := p2.Create(ctx, providers.CreateOptions{Tag: "wf-k-1", Stealth: true})
	if err != nil {
		t.Fatal(err)
	}
	if !again.Found || again.RemoteID != s.RemoteID || again.CDPURL != s.CDPURL {
		t.Fatalf("found: %+v", again)
	}
	if n := f.Requests("GET /browsers"); n < 4 {
		t.Fatalf("find paged %d times over 151 browsers", n)
	}
	if _, err := p2.Find(ctx, "wf-k-2"); !errors.Is(err, providers.ErrNotFound) {
		t.Fatalf("unknown tag: %v", err)
	}
	if _, err := p.Create(ctx, providers.CreateOptions{Tag: "wf-k-3", Profile: &contract.Profile{Name: "nosuch"}}); !remote.NotFound(err) {
		t.Fatalf("unknown profile: %v", err)
	}

	ran, err := p2.ReleaseMetered(ctx, "wf-k-1")
	if err != nil {
		t.Fatal(err)
	}
	if ran <= 0 {
		t.Fatalf("metered %s", ran)
	}
	if n := f.Requests("GET /browsers/{id}"); n < 3 {
		t.Fatalf("release read the browser %d times; it stays twice after delete", n)
	}
	if _, err := p.Find(ctx, "wf-k-1"); !errors.Is(err, providers.ErrNotFound) {
		t.Fatalf("after release: %v", err)
	}
	if err := p.Release(ctx, "wf-k-1"); err != nil {
		t.Fatal(err)
	}
}

func TestKernelFailures(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f := fake(t)
	p := provider(t, f, Options{})
	for _, c := range []struct {
		status int
		retry  string
		want   error
		after  time.Duration
	}{
		{http.StatusUnauthorized, "", remote.ErrAuth, 0},
		{http.StatusForbidden, "", remote.ErrAuth, 0},
		{http.StatusTooManyRequests, "3", remote.ErrRateLimited, 3 * time.Second},
		{http.StatusServiceUnavailable, "", remote.ErrUnavailable, 0},
	} {
		f.FailNext(1, c.status, c.retry)
		_, err := p.Find(ctx, "x")
		var re *remote.Error
		if !errors.Is(err, c.want) || !errors.As(err, &re) || re.RetryAfter != c.after {
			t.Fatalf("HTTP %d: %v", c.status, err)
		}
		if strings.Contains(err.Error(), testKey) {
			t.Fatalf("key in error: %v", err)
		}
	}
	if _, err := FromEnv(Options{}, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), EnvAPIKey) {
		t.Fatalf("missing key: %v", err)
	}
	if _, err := New(Options{APIKey: "k", IdleTimeout: time.Second}); err == nil {
		t.Fatal("a 1s idle timeout was taken")
	}
	url := f.URL()
	f.Close()
	down, _ := New(Options{APIKey: testKey, BaseURL: url})
	if _, err := down.Find(ctx, "x"); !errors.Is(err, remote.ErrUnavailable) {
		t.Fatalf("down: %v", err)
	}
}

// A found browser carries what Kernel reports it was made with (stealth,
// profile), so a create of its tag asking for other options is refused by
// the caller (activities' checkFound) instead of taking it as asked.
func TestKernelFoundMadeWith(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	f := fake(t)
	p := provider(t, f, Options{})
	asked := contract.SessionOptions{Provider: Name, Stealth: true, Profile: &contract.Profile{Name: "shop", Save: true}}
	if _, err := p.Create(ctx, providers.CreateOptions{Tag: "wf-made-1", Stealth: true, Profile: asked.Profile, Session: &asked}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Release(context.Background(), "wf-made-1") })
	vp := contract.Viewport{Width: 800, Height: 600}
	cases := []struct {
		name string
		ask  contract.SessionOptions
		diff []string
	}{
		{"same", asked, nil},
		{"driver-side options are the asker's", contract.SessionOptions{Provider: Name, Stealth: true, Profile: asked.Profile, Viewport: &vp}, nil},
		{"no stealth", contract.SessionOptions{Provider: Name, Profile: asked.Profile}, []string{contract.OptionStealth}},
		{"other profile", contract.SessionOptions{Provider: Name, Stealth: true, Profile: &contract.Profile{Name: "crm"}}, []string{contract.OptionProfile}},
		{"no profile", contract.SessionOptions{Provider: Name, Stealth: true}, []string{contract.OptionProfile}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := p.Create(ctx, providers.CreateOptions{Tag: "wf-made-1", Stealth: c.ask.Stealth, Session: &c.ask})
			if err != nil {
				t.Fatal(err)
			}
			if !s.Found || s.Made == nil {
				t.Fatalf("found browser without its options: %+v", s)
			}
			diff := contract.OptionsDiffer(c.ask, *s.Made, nil, "browser")
			if len(diff) != len(c.diff) {
				t.Fatalf("differences %v, want in %v", diff, c.diff)
			}
			for i, d := range diff {
				if !strings.HasPrefix(d, c.diff[i]+" ") {
					t.Fatalf("difference %q, want %s", d, c.diff[i])
				}
			}
		})
	}
}
