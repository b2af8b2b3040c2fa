package activities

import (
	"net"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/egress"
	"github.com/durable-browser/durable-browser/internal/netguard"
	"github.com/durable-browser/durable-browser/providers"
)

// A found browser keeps sending its traffic to the proxy address it was
// started with: the session takes that address over, or cannot be guarded.
func TestFoundEgress(t *testing.T) {
	a := New(Options{})
	pol := &netguard.Policy{}
	log := zerolog.Nop()
	fresh := func(owner string) *egress.Proxy {
		p, err := egress.Start(egress.Options{Policy: pol, Owner: owner})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		return p
	}

	// Started by this create: its own proxy.
	eg := fresh("t-1")
	if got, err := a.foundEgress(eg, "t-1", &providers.Session{Egress: eg.Addr()}, pol, log); err != nil || got != eg {
		t.Fatalf("own proxy: %v, %v", got, err)
	}

	// Left by an earlier worker process: a proxy on its address again.
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := free.Addr().String()
	free.Close()
	eg = fresh("t-1")
	got, err := a.foundEgress(eg, "t-1", &providers.Session{Egress: addr}, pol, log)
	if err != nil || got == nil || got.Addr() != addr {
		t.Fatalf("taking over %s: %v, %v", addr, got, err)
	}
	// The browser trusts only the CA its first proxy made, gone with that
	// process: this one passes TLS through rather than break every https.
	if got.SPKI() != "" {
		t.Fatal("a found browser's new proxy intercepts TLS the browser cannot accept")
	}
	got.Close()
	if _, live := egress.Owner(eg.Addr()); live {
		t.Fatal("the unused new proxy was not closed")
	}

	// Its address taken by something else: no proxy can guard it.
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	if got, err := a.foundEgress(fresh("t-1"), "t-1", &providers.Session{Egress: taken.Addr().String()}, pol, log); err == nil {
		t.Fatalf("an address another program holds was taken over: %v", got)
	}

	// Started by another create of this process: that create keeps it.
	other := fresh("t-1")
	if got, err := a.foundEgress(fresh("t-1"), "t-1", &providers.Session{Egress: other.Addr()}, pol, log); err != nil || got != nil {
		t.Fatalf("another create's proxy: %v, %v", got, err)
	}

	// Its address reused by another session's proxy: never driven under
	// that session's policy and secrets.
	if got, err := a.foundEgress(fresh("t-1"), "t-1", &providers.Session{Egress: fresh("t-2").Addr()}, pol, log); err == nil || got != nil {
		t.Fatalf("another session's proxy was taken: %v, %v", got, err)
	}

	// Started without one: driven as it is.
	if got, err := a.foundEgress(fresh("t-1"), "t-1", &providers.Session{}, pol, log); err != nil || got != nil {
		t.Fatalf("no proxy: %v, %v", got, err)
	}
}

// remoteFake is a provider whose browsers reach the network by themselves
// (as cdp and the rented providers do).
type remoteFake struct{ *fakeProvider }

func (remoteFake) Capabilities() providers.Capabilities { return providers.Capabilities{Stealth: true} }

// A request held for approval in a browser that outlives its worker would
// be sent unapproved when the worker dies: ask is refused there, naming the
// way out; deny and allow, which hold nothing, are not.
func TestAskRefusedWhereAHeldRequestOutlivesTheWorker(t *testing.T) {
	h := newHarness(t, nil)
	h.a.o.Providers["remote"] = remoteFake{h.prov}
	_, err := call[contract.CreateResult](h, contract.ActivityCreate, contract.CreateRequest{Tag: "r-1", Options: contract.SessionOptions{Provider: "remote", ActionPolicy: contract.PolicyAsk}})
	f := wantCode(t, err, contract.CodeRefused, false)
	if !strings.Contains(f.Message, "provider local") || !strings.Contains(f.Message, "deny") {
		t.Fatalf("the refusal should name the way out: %s", f.Message)
	}
	if created, _ := h.prov.calls(); len(created) != 0 {
		t.Fatalf("a browser was created before the refusal: %v", created)
	}
	for _, policy := range []string{contract.PolicyDeny, contract.PolicyAllow} {
		h.create("ok-"+policy, contract.SessionOptions{Provider: "remote", ActionPolicy: policy})
	}
}

// An allow list must hold for every connection, WebSockets and WebRTC
// included; a browser that reaches the network by itself cannot be held to
// it, so the session is refused, naming the policy and the way out.
func TestAllowHostsRefusedWhereTheBrowserReachesTheNetworkItself(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.Reach = &netguard.Policy{} })
	h.a.o.Providers["remote"] = remoteFake{h.prov}
	_, err := call[contract.CreateResult](h, contract.ActivityCreate, contract.CreateRequest{Tag: "r-1", Options: contract.SessionOptions{Provider: "remote", AllowHosts: []string{"shop.example"}}})
	f := wantCode(t, err, contract.CodeRefused, false)
	if !strings.Contains(f.Message, "allow_hosts") || !strings.Contains(f.Message, "provider local") {
		t.Fatalf("the refusal should name the policy and the way out: %s", f.Message)
	}
	if created, _ := h.prov.calls(); len(created) != 0 {
		t.Fatalf("a browser was created before the refusal: %v", created)
	}
}

// egressFake is a provider that routes its browsers through the worker's
// egress proxy (as local does).
type egressFake struct{ *fakeProvider }

func (egressFake) Capabilities() providers.Capabilities { return providers.Capabilities{Egress: true} }

// A browser created under the reach guard gets an egress proxy that reads
// its TLS, and is started with that proxy's pin.
func TestCreateGivesTheBrowserItsProxysPin(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.Reach = &netguard.Policy{} })
	h.a.o.Providers["eg"] = egressFake{h.prov}
	h.create("e-1", contract.SessionOptions{Provider: "eg"})
	h.prov.mu.Lock()
	co := h.prov.created[len(h.prov.created)-1]
	h.prov.mu.Unlock()
	if co.Egress == "" || len(co.EgressSPKI) != 44 {
		t.Fatalf("created with egress %q and pin %q, want a proxy and its CA's pin", co.Egress, co.EgressSPKI)
	}
}

// A session's browser's DevTools port is a service for every other session
// of the worker while that browser lives: through another session's
// /json/list a page would read its URLs and titles.
func TestOtherSessionsDevToolsPortsAreServices(t *testing.T) {
	pol := &netguard.Policy{AllowLoopback: true, Listeners: &netguard.Listeners{}}
	h := newHarness(t, func(o *Options) { o.Reach = pol })
	devtools := netguard.Target{Scheme: "http", Host: netguard.ParseHost("127.0.0.1"), Port: "9222"}
	if d := pol.Decide(devtools, nil, nil); !d.Allowed() {
		t.Fatalf("before any session: %+v", d)
	}
	ref := h.create("a-1", contract.SessionOptions{})
	// Another session's policy is a copy of the worker's.
	other := *pol
	if d := other.Decide(devtools, nil, nil); d.Rule != netguard.RuleService {
		t.Fatalf("another session reaching a-1's DevTools port: %+v, want rule service", d)
	}
	if _, err := h.env.ExecuteActivity(contract.ActivityRelease, contract.ReleaseRequest{Session: ref}); err != nil {
		t.Fatal(err)
	}
	if d := other.Decide(devtools, nil, nil); !d.Allowed() {
		t.Fatalf("after a-1 was released its port is still listed: %+v", d)
	}
}
