package activities

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/providers"
)

// retagFake is the fake provider with local's hand-over of a browser to
// another tag.
type retagFake struct {
	*fakeProvider
	retagged chan [2]string
}

func (p retagFake) Retag(_ context.Context, from, to string, made *contract.SessionOptions) (*providers.Session, error) {
	created, released := p.calls()
	if !slices.Contains(created, from) || slices.Contains(released, from) {
		return nil, fmt.Errorf("no browser under %s", from)
	}
	p.retagged <- [2]string{from, to}
	return p.session(to), nil
}

func (p retagFake) Capabilities() providers.Capabilities {
	return providers.Capabilities{Egress: true}
}

func warmHarness(t *testing.T, warm, max int) (*harness, retagFake) {
	h := newHarness(t, func(o *Options) { o.WarmBrowsers, o.MaxBrowsers = warm, max })
	p := retagFake{fakeProvider: h.prov, retagged: make(chan [2]string, 16)}
	h.a.o.Providers["local"] = p
	h.a.StartWarm()
	t.Cleanup(func() { h.a.Close(context.Background()) })
	return h, p
}

func waitWarm(t *testing.T, a *Activities, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for a.Stats().Warm != n {
		if time.Now().After(deadline) {
			t.Fatalf("warm browsers: %d, want %d", a.Stats().Warm, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A plain session takes a warm browser (no cold create of its tag), and
// the pool starts another; a session that needs something at launch
// starts its own.
func TestPlainSessionTakesAWarmBrowser(t *testing.T) {
	h, p := warmHarness(t, 1, 0)
	waitWarm(t, h.a, 1)
	h.create("plain-1", contract.SessionOptions{AllowHosts: nil})
	got := <-p.retagged
	if !strings.HasPrefix(got[0], warmPrefix) || got[1] != "plain-1" {
		t.Fatalf("retagged %v, want a warm browser handed to plain-1", got)
	}
	created, _ := p.calls()
	if slices.Contains(created, "plain-1") {
		t.Fatalf("plain-1 was started cold: %v", created)
	}
	waitWarm(t, h.a, 1) // refilled

	h.create("stealthy", contract.SessionOptions{Stealth: true})
	created, _ = p.calls()
	if !slices.Contains(created, "stealthy") {
		t.Fatalf("a stealth session took a warm browser: created %v", created)
	}
	select {
	case r := <-p.retagged:
		t.Fatalf("retagged %v for a stealth session", r)
	default:
	}
}

// Warm browsers count against MaxBrowsers: the pool fills only up to it,
// and a create that cannot take one releases one rather than go past it.
func TestWarmBrowsersStayWithinMaxBrowsers(t *testing.T) {
	h, p := warmHarness(t, 3, 2)
	waitWarm(t, h.a, 2)
	h.create("stealthy", contract.SessionOptions{Stealth: true})
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, released := p.calls()
		if len(released) == 1 && strings.HasPrefix(released[0], warmPrefix) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("released %v, want one warm browser", released)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if st := h.a.Stats(); st.Warm != 1 || st.Browsers["local"] != 1 {
		t.Fatalf("%d warm and %d sessions, want 1 and 1 (--max-browsers 2)", st.Warm, st.Browsers["local"])
	}
}

func TestWarmFits(t *testing.T) {
	w := &warmPool{name: "local"}
	tests := []struct {
		name     string
		o        contract.SessionOptions
		provider string
		want     bool
	}{
		{"plain", contract.SessionOptions{}, "local", true},
		{"allow list and policy (held by the proxy and the driver)", contract.SessionOptions{AllowHosts: []string{"a.example"}, ActionPolicy: contract.PolicyAsk}, "local", true},
		{"viewport (set by the driver)", contract.SessionOptions{Viewport: &contract.Viewport{Width: 800, Height: 600}}, "local", true},
		{"another provider", contract.SessionOptions{}, "cdp", false},
		{"profile", contract.SessionOptions{Profile: &contract.Profile{Name: "p"}}, "local", false},
		{"named state", contract.SessionOptions{State: "shop"}, "local", false},
		{"stealth", contract.SessionOptions{Stealth: true}, "local", false},
		{"headed", contract.SessionOptions{Headed: true}, "local", false},
		{"recording", contract.SessionOptions{Record: true}, "local", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := w.fits(contract.CreateRequest{Tag: "t", Options: tt.o}, tt.provider); got != tt.want {
				t.Fatalf("fits = %v, want %v", got, tt.want)
			}
		})
	}
	var none *warmPool
	if none.fits(contract.CreateRequest{Tag: "t"}, "local") {
		t.Fatal("no pool fits a create")
	}
}

// A session may not take a warm browser's tag.
func TestWarmTagRefused(t *testing.T) {
	h := newHarness(t, nil)
	_, err := call[contract.CreateResult](h, contract.ActivityCreate, contract.CreateRequest{Tag: warmPrefix + "x-1"})
	wantCode(t, err, contract.CodeRefused, false)
}
