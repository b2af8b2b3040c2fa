// Package metrics serves a worker's Prometheus metrics: the Temporal SDK's
// own (through its OpenTelemetry handler and the OpenTelemetry Prometheus
// exporter) and durable-browser's (tool calls by tool and code, tool latency,
// sessions and browsers held, held requests, pending handoffs, Chrome
// memory). docs/operations.md explains each.
package metrics

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.temporal.io/sdk/client"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
)

// Namespace prefixes durable-browser's own metrics.
const Namespace = "durable_browser"

// latencyBuckets (seconds) span a snapshot (tens of ms) to a run waiting
// for an approval (minutes).
var latencyBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900}

// Snapshot is what a worker holds at one moment, read at each scrape.
type Snapshot struct {
	// Browsers counts the browsers held, by provider (local, cdp).
	Browsers map[string]int
	// MaxBrowsers is the worker's --max-browsers (0: no bound).
	MaxBrowsers int
	// PendingHandoffs counts sessions handed to a person whose handoff has
	// not expired.
	PendingHandoffs int
	// HeldRequests counts requests waiting for a person's decision.
	HeldRequests int
	// ChromePIDs are the local browsers' main processes (each leads its
	// process group).
	ChromePIDs []int
	// Warm counts the warm browsers waiting for a session (--warm-browsers).
	Warm int
	// Launching counts local browsers starting now; LaunchesQueued the
	// creates waiting for a launch slot (--max-launches).
	Launching, LaunchesQueued int
	// NotTakingSessions says the worker is past --max-browsers or
	// --latency-bound and leaves new sessions to other workers.
	NotTakingSessions bool
}

// Options build Metrics.
type Options struct {
	Logger zerolog.Logger
}

// Metrics is one worker process's registry.
type Metrics struct {
	reg      *prometheus.Registry
	held     *held
	log      zerolog.Logger
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	provider *sdkmetric.MeterProvider
	stop     func()
	addr     string
}

// Addr is where Serve listens ("" before Serve): one of the worker's own
// services, which its browsers never reach.
func (m *Metrics) Addr() string {
	if m == nil {
		return ""
	}
	return m.addr
}

// New registers every metric; the Temporal SDK's come through
// TemporalHandler, which the worker's client must be dialled with.
func New(o Options) (*Metrics, error) {
	reg := prometheus.NewRegistry()
	m := &Metrics{reg: reg, log: o.Logger}
	m.calls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "tool_calls_total",
		Help: "Activity executions on this worker by tool (the tool's name, or the activity's for browser.create, browser.reconcile, handoff.notify, evidence.get) and code (ok or the failure envelope's code).",
	}, []string{"tool", "code"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "tool_duration_seconds",
		Help:    "How long activity executions took on this worker, by tool, waiting for approvals included.",
		Buckets: latencyBuckets,
	}, []string{"tool"})
	m.held = &held{}
	for _, c := range []prometheus.Collector{
		m.calls, m.duration, m.held,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	exp, err := otelprom.New(otelprom.WithRegisterer(reg), otelprom.WithoutScopeInfo(), otelprom.WithoutTargetInfo())
	if err != nil {
		return nil, err
	}
	// The SDK records its timers in seconds; OpenTelemetry's default
	// buckets (0 to 10000) are made for milliseconds.
	seconds := sdkmetric.NewView(sdkmetric.Instrument{Kind: sdkmetric.InstrumentKindHistogram},
		sdkmetric.Stream{Aggregation: sdkmetric.AggregationExplicitBucketHistogram{Boundaries: latencyBuckets}})
	m.provider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp), sdkmetric.WithView(seconds))
	return m, nil
}

// TemporalHandler is the SDK's metrics handler (client.Options.MetricsHandler):
// temporal_* metrics of polls, task latencies, activity and workflow outcomes.
func (m *Metrics) TemporalHandler() client.MetricsHandler {
	return temporalotel.NewMetricsHandler(temporalotel.MetricsHandlerOptions{
		Meter:                m.provider.Meter("temporal-sdk-go"),
		UseMonotonicCounters: true,
		// The default panics; a metric lost is not worth a worker.
		OnError: func(err error) { m.log.Warn().Err(err).Msg("recording a Temporal SDK metric") },
	})
}

// Observe records one activity execution.
func (m *Metrics) Observe(tool, code string, took time.Duration) {
	m.calls.WithLabelValues(tool, code).Inc()
	m.duration.WithLabelValues(tool).Observe(took.Seconds())
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Serve serves /metrics on addr until Close; it returns the address bound
// (addr may name port 0).
func (m *Metrics) Serve(addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", m.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.log.Error().Err(err).Msg("metrics server stopped")
		}
	}()
	m.addr = ln.Addr().String()
	m.stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}
	return ln.Addr().String(), nil
}

// Close stops serving and flushes the SDK's meter provider.
func (m *Metrics) Close() {
	if m.stop != nil {
		m.stop()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = m.provider.Shutdown(ctx)
}

// Watch sets where the gauges are read from at each scrape (the worker,
// built after the client these metrics were dialled with).
func (m *Metrics) Watch(f func() Snapshot) { m.held.snap.Store(&f) }

// held reports the gauges read from the worker at each scrape.
type held struct {
	snap atomic.Pointer[func() Snapshot]
}

var (
	descSessions  = prometheus.NewDesc(Namespace+"_sessions_live", "Sessions whose browser this worker holds.", nil, nil)
	descBrowsers  = prometheus.NewDesc(Namespace+"_browsers", "Browsers this worker holds, by provider.", []string{"provider"}, nil)
	descMax       = prometheus.NewDesc(Namespace+"_max_browsers", "The worker's --max-browsers (0: no bound).", nil, nil)
	descHeld      = prometheus.NewDesc(Namespace+"_held_requests", "Requests held under the ask policy, waiting for a person's decision.", nil, nil)
	descHandoffs  = prometheus.NewDesc(Namespace+"_pending_handoffs", "Sessions handed to a person whose handoff has not expired.", nil, nil)
	descChrome    = prometheus.NewDesc(Namespace+"_chrome_memory_bytes", "Resident memory of this worker's local Chrome processes (every process of each browser's group).", nil, nil)
	descChromeN   = prometheus.NewDesc(Namespace+"_chrome_processes", "Processes of this worker's local browsers (browser, renderers, GPU, utilities).", nil, nil)
	descWarm      = prometheus.NewDesc(Namespace+"_warm_browsers", "Plain local browsers started ahead, waiting for a session (--warm-browsers); not in sessions_live, but in the Chrome memory and process gauges.", nil, nil)
	descLaunch    = prometheus.NewDesc(Namespace+"_browser_launches", "Local browsers starting now (at most --max-launches).", nil, nil)
	descQueued    = prometheus.NewDesc(Namespace+"_browser_launches_queued", "Creates waiting for a browser launch slot (--max-launches).", nil, nil)
	descNotTaking = prometheus.NewDesc(Namespace+"_not_taking_sessions", "1 while the worker is past --max-browsers or --latency-bound and leaves new sessions to other workers.", nil, nil)
)

func (h *held) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descSessions, descBrowsers, descMax, descHeld, descHandoffs, descChrome, descChromeN, descWarm, descLaunch, descQueued, descNotTaking} {
		ch <- d
	}
}

func (h *held) Collect(ch chan<- prometheus.Metric) {
	var s Snapshot
	if f := h.snap.Load(); f != nil {
		s = (*f)()
	}
	total := 0
	for p, n := range s.Browsers {
		total += n
		ch <- prometheus.MustNewConstMetric(descBrowsers, prometheus.GaugeValue, float64(n), p)
	}
	ch <- prometheus.MustNewConstMetric(descSessions, prometheus.GaugeValue, float64(total))
	ch <- prometheus.MustNewConstMetric(descMax, prometheus.GaugeValue, float64(s.MaxBrowsers))
	ch <- prometheus.MustNewConstMetric(descHeld, prometheus.GaugeValue, float64(s.HeldRequests))
	ch <- prometheus.MustNewConstMetric(descHandoffs, prometheus.GaugeValue, float64(s.PendingHandoffs))
	rss, procs := groupsRSS(s.ChromePIDs)
	ch <- prometheus.MustNewConstMetric(descChrome, prometheus.GaugeValue, float64(rss))
	ch <- prometheus.MustNewConstMetric(descChromeN, prometheus.GaugeValue, float64(procs))
	ch <- prometheus.MustNewConstMetric(descWarm, prometheus.GaugeValue, float64(s.Warm))
	ch <- prometheus.MustNewConstMetric(descLaunch, prometheus.GaugeValue, float64(s.Launching))
	ch <- prometheus.MustNewConstMetric(descQueued, prometheus.GaugeValue, float64(s.LaunchesQueued))
	notTaking := 0.0
	if s.NotTakingSessions {
		notTaking = 1
	}
	ch <- prometheus.MustNewConstMetric(descNotTaking, prometheus.GaugeValue, notTaking)
}
