package netguard

import (
	"net/netip"
	"testing"
)

// The worker's own services are refused at every address this host
// answers on: a service on 0.0.0.0 or :: (or on one of the host's
// addresses) at the host's interface addresses and loopback, and services
// that come and go (other sessions' DevTools ports) while they are
// listed. Decisions only: nothing is sent anywhere.
func TestServicesOnThisHost(t *testing.T) {
	own := []netip.Addr{netip.MustParseAddr("10.1.2.3"), netip.MustParseAddr("fd12::3")}
	p := &Policy{
		AllowPrivate: true,
		HostAddrs:    own,
		Services: []Service{
			{Name: "Temporal frontend", Host: "0.0.0.0", Port: "7233"},
			{Name: "S3 endpoint", Host: "::", Port: "7070"},
			{Name: "metrics", Host: "10.1.2.3", Port: "9464"},
			{Name: "remote", Host: "10.9.9.9", Port: "8080"},
		},
		Listeners: &Listeners{},
	}
	decide := func(host, port string) Rule {
		return p.Decide(Target{Scheme: "http", Host: ParseHost(host), Port: port}, nil, nil).Rule
	}
	for _, c := range []struct {
		host, port string
		want       Rule
	}{
		{"10.1.2.3", "7233", RuleService},  // 0.0.0.0 reaches the interface address
		{"fd12::3", "7233", RuleService},   // and its IPv6 address
		{"127.0.0.1", "7233", RuleService}, // and loopback
		{"10.1.2.3", "7070", RuleService},  // :: too
		{"127.0.0.1", "9464", RuleService}, // a service on a host address is on this host
		{"10.1.2.4", "7233", ""},           // another machine's port
		{"10.1.2.3", "7234", ""},           // another port of this one
		{"127.0.0.1", "8080", ""},          // a remote service is not on loopback
		{"10.9.9.9", "8080", RuleService},
		{"127.0.0.1", "9222", ""}, // before it is listed
	} {
		if got := decide(c.host, c.port); got != c.want {
			t.Errorf("%s:%s = %q, want %q", c.host, c.port, got, c.want)
		}
	}
	// Another session's DevTools port while that browser lives.
	p.Listeners.Add("b-2", Service{Name: "browser DevTools endpoint", Host: "127.0.0.1", Port: "9222"})
	cp := *p // a session's copy shares the listeners
	for _, host := range []string{"127.0.0.1", "localhost", "10.1.2.3", "[::ffff:127.0.0.1]"} {
		if got := cp.Decide(Target{Scheme: "http", Host: ParseHost(host), Port: "9222"}, nil, nil).Rule; got != RuleService {
			t.Errorf("%s:9222 with a DevTools port listed = %q, want service", host, got)
		}
	}
	p.Listeners.Remove("b-2")
	if got := decide("127.0.0.1", "9222"); got != "" {
		t.Errorf("after removal: %q", got)
	}
}
