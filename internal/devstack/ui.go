package devstack

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uioptions "github.com/temporalio/ui-server/v2/server/server_options"
)

// UIOptions configures the embedded Temporal Web UI.
type UIOptions struct {
	// Address is host:port to serve on, e.g. 127.0.0.1:8233.
	Address string
	// TemporalAddress is the frontend's host:port.
	TemporalAddress string
	Namespace       string
}

// UI is a running Temporal Web UI.
type UI struct {
	srv  *uiserver.Server
	url  string
	done chan struct{}
}

// URL is the UI's address.
func (u *UI) URL() string { return u.url }

// Stop stops serving and waits for the server goroutine.
func (u *UI) Stop() {
	if u.srv == nil {
		return
	}
	u.srv.Stop()
	<-u.done
	u.srv = nil
}

// StartUI serves the Temporal Web UI, waiting until it answers.
func StartUI(ctx context.Context, o UIOptions) (*UI, error) {
	host, portStr, err := net.SplitHostPort(o.Address)
	if err != nil {
		return nil, fmt.Errorf("ui address %q: %w (want host:port, e.g. 127.0.0.1:8233)", o.Address, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, fmt.Errorf("ui address %q: port must be a number", o.Address)
	}
	// The UI server exits the process when it cannot bind, so check first.
	if err := CheckPortFree(o.Address); err != nil {
		return nil, err
	}
	srv := uiserver.NewServer(uioptions.WithConfigProvider(&uiconfig.Config{
		Host:                host,
		Port:                port,
		TemporalGRPCAddress: o.TemporalAddress,
		EnableUI:            true,
		DefaultNamespace:    o.Namespace,
		CORS:                uiconfig.CORS{CookieInsecure: true},
		HideLogs:            true,
		DisableNewsFetch:    true,
	}))
	u := &UI{srv: srv, url: "http://" + o.Address, done: make(chan struct{})}
	go func() {
		defer close(u.done)
		_ = srv.Start()
	}()
	if err := waitHTTP(ctx, u.url+"/healthz", 15*time.Second, 50*time.Millisecond, nil); err != nil {
		u.Stop()
		return nil, fmt.Errorf("temporal ui did not come up on %s: %w", o.Address, err)
	}
	return u, nil
}

// errExited is waitHTTP's answer when the server's process ended first.
var errExited = errors.New("the server exited")

// waitHTTP polls url every so often until it answers (any status), the
// timeout passes (the context's error) or exited closes (errExited; nil
// for a server with no process of its own to watch).
func waitHTTP(ctx context.Context, url string, timeout, every time.Duration, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := c.Do(req); err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-exited:
			return errExited
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}
