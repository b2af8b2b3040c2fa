package main

import (
	"context"
	"net"
	"os"
	"runtime/pprof"

	"go.temporal.io/sdk/client"

	"github.com/durable-browser/durable-browser/cmd/internal/cli"
	"github.com/durable-browser/durable-browser/internal/config"
	"github.com/durable-browser/durable-browser/internal/dial"
	"github.com/durable-browser/durable-browser/internal/logging"
	"github.com/durable-browser/durable-browser/internal/metrics"
	"github.com/durable-browser/durable-browser/worker"
)

const workerUsage = `Usage: durable-browser worker [flags]

Runs a worker against an existing Temporal and S3. It polls the shared task
queue "durable-browser", the create queue "durable-browser-create" (while it
takes new sessions: under --max-browsers and --latency-bound) and this
process's own host queue, where the browsers it starts are served. Every flag has an environment equivalent (shown in
brackets); AWS credentials come from the standard AWS environment.

Flags:
`

func runWorker(ctx context.Context, env *cliEnv, args []string) error {
	fs := cli.Flags("worker", env, workerUsage)
	var cfg config.Worker
	config.BindWorker(fs, &cfg)
	if err := cli.ParseFlagsOnly(fs, args, "worker"); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.DNSServer != "" {
		// This process is the worker: every lookup it makes goes there.
		net.DefaultResolver = resolverAt(cfg.DNSServer)
	}
	log, err := logging.New(logging.Options{Level: cfg.LogLevel, Out: env.Stderr})
	if err != nil {
		return &config.Error{Flag: "log-level", Problem: err.Error()}
	}
	if cfg.CPUProfile != "" {
		stop, err := cpuProfile(cfg.CPUProfile)
		if err != nil {
			return &config.Error{Flag: "cpuprofile", Problem: err.Error(), Fix: "name a file the worker may write"}
		}
		// Deferred first, so it runs last: the profile covers the stop too.
		defer stop()
	}
	var m *metrics.Metrics
	var sdkMetrics client.MetricsHandler
	if cfg.Metrics != "" {
		if m, err = metrics.New(metrics.Options{Logger: log}); err != nil {
			return err
		}
		defer m.Close()
		addr, err := m.Serve(cfg.Metrics)
		if err != nil {
			return &config.Error{Flag: "metrics", Problem: err.Error(), Fix: "give a free host:port, e.g. 127.0.0.1:9464"}
		}
		log.Info().Str("address", "http://"+addr+"/metrics").Msg("serving Prometheus metrics")
		sdkMetrics = m.TemporalHandler()
	}
	c, err := dial.Temporal(ctx, cfg.Temporal, log, sdkMetrics)
	if err != nil {
		return err
	}
	defer c.Close()
	w, err := worker.New(ctx, worker.Options{Client: c, Config: cfg, Logger: log, Metrics: m})
	if err != nil {
		return err
	}
	if err := w.Start(); err != nil {
		return err
	}
	<-ctx.Done()
	log.Info().Dur("stop_grace", cfg.StopGrace).Msg("stopping: calls in flight may finish for --stop-grace, then browsers are released")
	w.Stop()
	return nil
}

// resolverAt is a resolver that sends every query to server (ip:port).
func resolverAt(server string) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, server)
	}}
}

// cpuProfile starts writing a CPU profile to path; stop ends and closes it.
func cpuProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}
