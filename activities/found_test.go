package activities

import (
	"reflect"
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/driver"
	"github.com/durable-browser/durable-browser/internal/netguard"
	"github.com/durable-browser/durable-browser/providers"
)

// withReach gives the harness's worker a reach guard and a second provider.
func withReach(o *Options) {
	o.Reach = &netguard.Policy{}
	o.Providers["other"] = &fakeProvider{}
}

func TestCreateFindingItsSessionChecksOptions(t *testing.T) {
	shop := contract.Profile{Name: "shop"}
	base := contract.SessionOptions{Stealth: true, ActionPolicy: contract.PolicyAsk, AllowHosts: []string{"Shop.example", "*.cdn.example"}, Profile: &shop}
	grants := []contract.Profile{{Name: "shop", Save: true}, {Name: "other"}}
	h := newHarness(t, withReach)
	if _, err := call[contract.CreateResult](h, contract.ActivityCreate, contract.CreateRequest{Tag: "t-1", Options: base, Grants: grants}); err != nil {
		t.Fatal(err)
	}

	// The same options, spelled otherwise (the provider named, hosts in
	// another order and case, a start URL), find the session.
	same := base
	same.Provider = "local"
	same.AllowHosts = []string{"*.cdn.example", "shop.example."}
	same.StartURL = "https://shop.example/"
	same.Viewport = &contract.DefaultViewport // unset is the default
	res, err := call[contract.CreateResult](h, contract.ActivityCreate, contract.CreateRequest{Tag: "t-1", Options: same, Grants: grants})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Found || h.attached() != 1 {
		t.Fatalf("create with the same options = %+v (attached %d), want the session found", res, h.attached())
	}

	differ := map[string]func(o *contract.SessionOptions){
		"provider":      func(o *contract.SessionOptions) { o.Provider = "other" },
		"stealth":       func(o *contract.SessionOptions) { o.Stealth = false },
		"headed":        func(o *contract.SessionOptions) { o.Headed = true },
		"profile":       func(o *contract.SessionOptions) { o.Profile = &contract.Profile{Name: "shop", Save: true} },
		"action_policy": func(o *contract.SessionOptions) { o.ActionPolicy = "" },
		"allow_hosts":   func(o *contract.SessionOptions) { o.AllowHosts = nil },
		"viewport":      func(o *contract.SessionOptions) { o.Viewport = &contract.Viewport{Width: 390, Height: 844} },
	}
	for name, mod := range differ {
		t.Run(name, func(t *testing.T) {
			o := base
			mod(&o)
			_, err := call[contract.CreateResult](h, contract.ActivityCreate, contract.CreateRequest{Tag: "t-1", Options: o, Grants: grants})
			f := wantCode(t, err, contract.CodeRefused, false)
			for _, w := range []string{name + " (asked", "Release that session first", "another session id"} {
				if !strings.Contains(f.Message, w) {
					t.Fatalf("refusal %q does not say %q", f.Message, w)
				}
			}
		})
	}
	// Nothing was attached, started or released by the refusals.
	created, released := h.prov.calls()
	if h.attached() != 1 || len(created) != 1 || len(released) != 0 || !reflect.DeepEqual(h.a.Sessions(), []string{"t-1"}) {
		t.Fatalf("after refusals: attached %d, created %v, released %v, sessions %v", h.attached(), created, released, h.a.Sessions())
	}
}

func TestCreateFindingAnotherWorkersBrowserChecksOptions(t *testing.T) {
	h := newHarness(t, withReach)
	h.prov.found = map[string]*contract.SessionOptions{
		"t-1": {Provider: "local", Stealth: true, ActionPolicy: contract.PolicyAllow},
	}
	_, err := call[contract.CreateResult](h, contract.ActivityCreate, contract.CreateRequest{Tag: "t-1"})
	f := wantCode(t, err, contract.CodeRefused, false)
	if !strings.Contains(f.Message, "stealth (asked false, the browser has true)") {
		t.Fatalf("refusal %q does not name stealth", f.Message)
	}
	// Refused before Create could adopt it, and never attached.
	if created, _ := h.prov.calls(); len(created) != 0 || h.attached() != 0 {
		t.Fatalf("created %v, attached %d: a refused browser was taken", created, h.attached())
	}

	// Asked as it was made: found and taken.
	res, err := call[contract.CreateResult](h, contract.ActivityCreate, contract.CreateRequest{Tag: "t-1", Options: contract.SessionOptions{Stealth: true}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Found || h.attached() != 1 {
		t.Fatalf("create = %+v, attached %d", res, h.attached())
	}
}

func TestCreateTakesFoundBrowserWithoutKeptOptions(t *testing.T) {
	h := newHarness(t, nil)
	h.prov.found = map[string]*contract.SessionOptions{"t-1": nil}
	res, err := call[contract.CreateResult](h, contract.ActivityCreate, contract.CreateRequest{Tag: "t-1", Options: contract.SessionOptions{Headed: true}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Found {
		t.Fatalf("create = %+v, want found", res)
	}
}

// A browser found by the provider (made by a worker that is gone) is
// driven as a new one would be: reach guard and request gate in force, and
// the session's allow list in the guard.
func TestFoundBrowserIsGated(t *testing.T) {
	opts := contract.SessionOptions{ActionPolicy: contract.PolicyDeny, AllowHosts: []string{"shop.example"}, StartURL: "https://shop.example/"}
	h := newHarness(t, withReach)
	made := madeWith("local", opts)
	h.prov.found = map[string]*contract.SessionOptions{"t-1": &made}
	h.setup = func(b *fakeBrowser) {
		b.requests = []driver.GatedRequest{{Method: "POST", Origin: "https://shop.example", Path: "/buy"}}
	}
	res, err := call[contract.CreateResult](h, contract.ActivityCreate, contract.CreateRequest{Tag: "t-1", Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Found {
		t.Fatalf("create = %+v, want found", res)
	}
	b := h.browser(0)
	if b.opts.RequestGate == nil {
		t.Fatal("a found browser was attached without the request gate")
	}
	if b.opts.Reach == nil || !reflect.DeepEqual(b.opts.Reach.SessionHosts, []string{"shop.example"}) {
		t.Fatalf("a found browser was attached with reach %+v, want the guard with the session's allow list", b.opts.Reach)
	}
	if len(b.runs) != 0 {
		t.Fatalf("a found browser was navigated to the start URL: %+v", b.runs)
	}
	// The gate is the session's: a run's side-effecting request is denied.
	ref := res.Session
	if _, err := call[contract.RunResult](h, contract.ActivityRun, runReq(ref, []byte(`[{"op":"click","id":"3"}]`))); err != nil {
		t.Fatal(err)
	}
	if b.decisions[0] != driver.GateDeny {
		t.Fatalf("gate decisions = %v, want the request denied", b.decisions)
	}

	// Found again in this worker's map: the same gated browser, not another.
	res, err = call[contract.CreateResult](h, contract.ActivityCreate, contract.CreateRequest{Tag: "t-1", Options: opts})
	if err != nil || !res.Found || h.attached() != 1 {
		t.Fatalf("second create = %+v, %v (attached %d)", res, err, h.attached())
	}
	h.prov.mu.Lock()
	kept := h.prov.created[0].Session
	h.prov.mu.Unlock()
	if kept == nil || !reflect.DeepEqual(*kept, made) {
		t.Fatalf("provider was given options %+v to keep, want %+v", kept, made)
	}
}

var _ finder = (*fakeProvider)(nil)
var _ providers.Provider = (*fakeProvider)(nil)

func TestCreateRefusesAViewportOutOfBounds(t *testing.T) {
	h := newHarness(t, nil)
	_, err := call[contract.CreateResult](h, contract.ActivityCreate, contract.CreateRequest{Tag: "t-1",
		Options: contract.SessionOptions{Viewport: &contract.Viewport{Width: 10, Height: 720}}})
	f := wantCode(t, err, contract.CodeRefused, false)
	if !strings.Contains(f.Message, "240 to 4096") {
		t.Fatalf("refusal %q does not name the bounds", f.Message)
	}
	res, err := call[contract.CreateResult](h, contract.ActivityCreate, contract.CreateRequest{Tag: "t-2"})
	if err != nil || res.Viewport != "1280x720" {
		t.Fatalf("default create = %+v, %v; want viewport 1280x720", res, err)
	}
}
