package worker

import (
	"context"
	"net"
	"testing"

	"github.com/rs/zerolog"

	"github.com/durable-browser/durable-browser/internal/config"
	"github.com/durable-browser/durable-browser/internal/metrics"
	"github.com/durable-browser/durable-browser/internal/netguard"
)

// The --metrics listener is one of the worker's own services, and a
// service on every interface is refused at the host's own addresses too.
func TestReachPolicyBlocksTheWorkersListeners(t *testing.T) {
	m, err := metrics.New(metrics.Options{Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	addr, err := m.Serve("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(addr)
	var cfg config.Worker
	cfg.BrowserAllowPrivate = true
	cfg.Temporal.Address = "0.0.0.0:7233"
	p := reachPolicy(context.Background(), cfg, Options{Metrics: m})
	decide := func(host, port string) netguard.Rule {
		return p.Decide(netguard.Target{Scheme: "http", Host: netguard.ParseHost(host), Port: port}, nil, nil).Rule
	}
	for _, host := range []string{"127.0.0.1", "localhost"} {
		if got := decide(host, port); got != netguard.RuleService {
			t.Errorf("the metrics listener at %s:%s = %q, want service", host, port, got)
		}
	}
	if p.Listeners == nil {
		t.Error("no listeners for the browsers' DevTools ports")
	}
	// Decisions only: nothing is sent to these addresses.
	for _, a := range p.HostAddrs {
		if got := decide(a.String(), "7233"); got != netguard.RuleService {
			t.Errorf("the frontend on 0.0.0.0 at this host's %s = %q, want service", a, got)
		}
	}
}
