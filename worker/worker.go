// Package worker builds a durable-browser worker from configuration: it
// registers the workflows and activities under their stable names and polls
// the shared task queue, the create queue (while it takes new sessions) and
// this process's own host queue.
package worker

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-browser/durable-browser/activities"
	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/actintercept"
	"github.com/durable-browser/durable-browser/internal/admission"
	"github.com/durable-browser/durable-browser/internal/config"
	"github.com/durable-browser/durable-browser/internal/evidence"
	"github.com/durable-browser/durable-browser/internal/handoff"
	"github.com/durable-browser/durable-browser/internal/holds"
	"github.com/durable-browser/durable-browser/internal/jsengine"
	"github.com/durable-browser/durable-browser/internal/liveview"
	"github.com/durable-browser/durable-browser/internal/liveview/book"
	"github.com/durable-browser/durable-browser/internal/metrics"
	"github.com/durable-browser/durable-browser/internal/netguard"
	"github.com/durable-browser/durable-browser/internal/redact"
	"github.com/durable-browser/durable-browser/internal/redactgate"
	"github.com/durable-browser/durable-browser/internal/states"
	"github.com/durable-browser/durable-browser/internal/webfetch"
	"github.com/durable-browser/durable-browser/internal/websearch"
	"github.com/durable-browser/durable-browser/providers"
	"github.com/durable-browser/durable-browser/providers/cdp"
	"github.com/durable-browser/durable-browser/providers/local"
	"github.com/durable-browser/durable-browser/workflows"
)

// Options builds a Worker.
type Options struct {
	Client client.Client
	Config config.Worker
	// Evidence overrides the store built from Config.S3 (tests, dev).
	Evidence evidence.Store
	// StateKey overrides DURABLE_BROWSER_STATE_KEY (base64, 32 bytes):
	// with either, sessions may keep named states in the evidence bucket.
	StateKey string
	// Notifier overrides the handoff port built from Config.
	Notifier handoff.Notifier
	// FetchAllowLoopback lets web_fetch read loopback addresses (tests and
	// dev's demo site only). The fetcher is always built here, so it redacts
	// with the worker's own redactor before converting pages.
	FetchAllowLoopback bool
	// Searcher overrides the web_search sources.
	Searcher *websearch.Searcher
	// HoldTimeout bounds how long a held request waits for a person's
	// decision before it is refused (default 5m).
	HoldTimeout time.Duration
	// BrowserServices are more of this process's own services the browser
	// must never reach (dev: the Temporal UI and S3 it embeds).
	BrowserServices []netguard.Service
	// BrowserAllowLoopback lets browsers reach loopback (dev's demo site);
	// the services stay blocked.
	BrowserAllowLoopback bool
	// SiteRoots verifies the sites' certificates where a browser's egress
	// proxy decrypts its TLS (default the system's roots; tests give their
	// loopback servers' pool).
	SiteRoots *x509.CertPool
	// PageJudge, when set, serves page.judge instead of the rule-based
	// judge: an activity function taking a contract.JudgeRequest and
	// answering a *contract.JudgeResult (for example asking the host's own
	// model). An answer out of shape leaves the page unjudged.
	PageJudge any
	// Approvers overrides the approvers read from Config.ApproverKeys: the
	// people whose signed decisions sessions act on (tests).
	Approvers contract.Approvers
	// Metrics, when set, records this worker's activity executions and
	// reads what it holds at each scrape (the Temporal SDK's metrics come
	// through the client, dialled with Metrics.TemporalHandler).
	Metrics *metrics.Metrics
	Logger  zerolog.Logger
}

// Worker polls the shared queue, the create queue (while it takes new
// sessions) and its own host queue.
type Worker struct {
	hostQueue string
	bootID    string
	shared    sdkworker.Worker
	creates   sdkworker.Worker
	host      sdkworker.Worker
	gate      *admission.Gate
	acts      *activities.Activities
	local     *local.Provider
	log       zerolog.Logger
	reapEvery time.Duration
	// orphanAfter releases sessions no call touched for this long.
	orphanAfter time.Duration
	// stopGrace is how long calls in flight may finish when the worker stops.
	stopGrace  time.Duration
	stopReaper context.CancelFunc
	reaperDone chan struct{}
	stopOnce   sync.Once
	// live is the live view server (nil: off).
	live *liveview.Server
}

var unsafeQueue = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// HostQueue names a process boot's own queue: durable-browser@<host>-<boot id>.
func HostQueue(bootID string) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "host"
	}
	return hostQueue(host, bootID)
}

// hostQueue is HostQueue for a given host name.
func hostQueue(host, bootID string) string {
	return contract.SharedQueue + "@" + unsafeQueue.ReplaceAllString(host, "-") + "-" + bootID
}

func newBootID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// New builds a worker; Start begins polling.
func New(ctx context.Context, o Options) (*Worker, error) {
	cfg := o.Config
	bootID := newBootID()
	log := o.Logger.With().Str("boot_id", bootID).Logger()

	lp, err := local.New(local.Options{
		ChromePath:    cfg.Chrome,
		HeadlessShell: cfg.HeadlessShell,
		ProfileRoot:   cfg.ProfileRoot,
		BootID:        bootID,
		NoSandbox:     cfg.NoSandbox,
		Headed:        cfg.Headed,
		MaxLaunches:   cfg.MaxLaunches,
		Isolation:     local.Isolation(cfg.Isolation),
		Logger:        log,
	})
	if err != nil {
		return nil, err
	}
	provs := map[string]providers.Provider{lp.Name(): lp}
	if cfg.CDPEndpoint != "" {
		cp, err := cdp.New(cdp.Options{Endpoint: cfg.CDPEndpoint, Logger: log})
		if err != nil {
			return nil, &config.Error{Flag: "cdp-endpoint", Problem: err.Error()}
		}
		provs[cp.Name()] = cp
	}
	rented, apis, err := rentedProviders(cfg, os.Getenv, log)
	if err != nil {
		return nil, err
	}
	for name, p := range rented {
		provs[name] = p
	}
	// The rented browsers' own services are the worker's: its browsers
	// never reach them.
	o.BrowserServices = append(o.BrowserServices, apis...)
	prices, err := config.ParsePrices(cfg.PricePerMinute)
	if err != nil {
		return nil, &config.Error{Flag: "price-per-minute", Problem: err.Error(), Fix: "e.g. browserbase=0.002,kernel=0.0016"}
	}

	store := o.Evidence
	if store == nil {
		s3, err := evidence.NewS3(ctx, evidence.S3Options{
			// The store applies the prefix, so claim-check keys are relative
			// to it, as with an injected store (dev, tests) and the CLI.
			Bucket: cfg.S3.Bucket, Prefix: cfg.S3.Prefix, Region: cfg.S3.Region, Endpoint: cfg.S3.Endpoint,
			PathStyle: cfg.S3.PathStyle, SSE: cfg.S3.SSE, KMSKeyID: cfg.S3.KMSKeyID,
		})
		if err != nil {
			return nil, fmt.Errorf("evidence store: %w", err)
		}
		store = s3
	}

	secrets, red, err := secretsFor(cfg, os.Environ())
	if err != nil {
		return nil, err
	}
	notifier := notifierFor(cfg, o.Notifier, red, log)
	fetcher := webfetch.New(webfetch.Options{Redactor: red, Logger: log, AllowLoopback: o.FetchAllowLoopback})
	searcher := o.Searcher
	if searcher == nil {
		searcher = websearch.New(websearch.Options{Redactor: red, Logger: log})
	}

	grants, err := config.ParseProfileGrants(cfg.ProfileGrants)
	if err != nil {
		return nil, &config.Error{Flag: "profile-grants", Problem: err.Error()}
	}
	if err := config.CheckUploadDir(cfg.UploadDir, map[string]string{"profile-root": cfg.ProfileRoot, "secrets-file": cfg.SecretsFile}); err != nil {
		return nil, err
	}

	stateStore, stateNames, err := statesFor(cfg, store, o.StateKey)
	if err != nil {
		return nil, err
	}
	live, err := liveViewFor(cfg, log)
	if err != nil {
		return nil, err
	}
	built := false
	defer func() {
		if !built && live != nil {
			_ = live.Close()
		}
	}()
	if live != nil {
		// A page in the browser must not reach its own viewer.
		if s, ok := netguard.ServiceFromAddress("live view", live.Addr()); ok {
			o.BrowserServices = append(o.BrowserServices, s)
		}
	}

	hostQueue := HostQueue(bootID)
	// New sessions come on the create queue, polled only while the gate
	// admits them (this worker under its --max-browsers and
	// --latency-bound); the host queue's calls feed the gate's latency.
	var acts *activities.Activities
	gate := admission.New(admission.Options{Held: func() int { return acts.Held() }, MaxBrowsers: cfg.MaxBrowsers,
		LatencyBound: cfg.LatencyBound, Slots: sharedSlots(cfg)})
	acts = activities.New(activities.Options{
		LiveView:  live,
		HostQueue: hostQueue,
		Providers: provs,
		// Each way out of the worker but an activity's answer (which the
		// redaction gate takes) redacts with the one redactor where it
		// leaves: evidence, the secrets typed, held requests' descriptions,
		// page text the driver cuts, and what a code cell is handed.
		Evidence: &evidence.Filer{Store: store, Redactor: red},
		Secrets:  &redact.Secrets{Source: secrets, Redactor: red},
		Holds:    holds.New(red),
		Attach:   activities.AttachDriver(red.String),
		Cells:    jsengine.Options{Redactor: red},
		Fetcher:  fetcher,
		Searcher: searcher,
		Notifier: notifier,
		Client:   o.Client,
		// The host, never a model, says which files and profiles sessions get.
		UploadDir:     cfg.UploadDir,
		ProfileGrants: grants,
		States:        stateStore,
		StateNames:    stateNames,
		Reach:         reachPolicy(ctx, cfg, o),
		SiteRoots:     o.SiteRoots,
		Logger:        log,
		// Tests shorten it; production keeps the activities' default.
		HoldTimeout:  o.HoldTimeout,
		StopGrace:    stopGrace(cfg),
		MaxBrowsers:  cfg.MaxBrowsers,
		PastLatency:  gate.PastLatency,
		WarmBrowsers: cfg.Warm(lp.SharesBrowsers(), memTotal()),
		Heartbeat:    heartbeatEvery,
		Prices:       prices,
	})

	// On Stop the SDK stops polling and waits this long for activities in
	// flight; the activities cut runs short at the grace and answer, so the
	// margin leaves time to report that answer before the SDK cancels.
	//
	// The SDK sends heartbeats to the server at most every 0.8 x the
	// heartbeat timeout (8 s of the default 10 s): a busy host a couple of
	// seconds late would be judged lost while its call goes on. Sending
	// every beat the activities record leaves 8 s of slack instead.
	wo := sdkworker.Options{WorkerStopTimeout: stopGrace(cfg) + stopMargin, MaxHeartbeatThrottleInterval: heartbeatEvery,
		Interceptors: interceptors(log, red, o.Metrics)}
	if m := o.Metrics; m != nil {
		m.Watch(func() metrics.Snapshot {
			st := acts.Stats()
			l := lp.Launches()
			return metrics.Snapshot{Browsers: st.Browsers, MaxBrowsers: cfg.MaxBrowsers, PendingHandoffs: st.PendingHandoffs,
				HeldRequests: st.HeldRequests, ChromePIDs: st.ChromePIDs, Warm: st.Warm, Launching: l.InFlight, LaunchesQueued: l.Waiting,
				NotTakingSessions: !gate.Status().Open}
		})
	}
	// The shared queue takes creates, fetches and searches: a few per browser
	// this worker may hold, not the SDK's default of 1000 at once.
	sharedOpts := wo
	sharedOpts.MaxConcurrentActivityExecutionSize = sharedSlots(cfg)
	// The sessions' workflow tasks, and their calls on the host queue, are
	// polled by the SDK's autoscaling pollers: one poll while idle, up to 8
	// while the server reports a backlog (sessions opened at once), with
	// sticky and normal polls scaled apart, so that the first workflow
	// tasks of new sessions are not held behind the running sessions'.
	// A worker that stalls keeps its polls open, and each is handed a task
	// that waits out its timeout until the server drops the connection:
	// deploy.md says how to have a cluster do that within seconds, as the
	// embedded server does.
	sharedOpts.WorkflowTaskPollerBehavior = taskPolls()
	shared := sdkworker.New(o.Client, contract.SharedQueue, sharedOpts)
	gate.OnChange(func(open bool, why string) {
		if open {
			log.Info().Msg("taking new sessions again")
		} else {
			log.Warn().Str("why", why).Msg("not taking new sessions: the create queue is left to other workers; the sessions held here are served as before")
		}
	})
	createOpts := wo
	createOpts.DisableWorkflowWorker = true
	if createOpts.Tuner, err = gate.Tuner(); err != nil {
		return nil, err
	}
	creates := sdkworker.New(o.Client, contract.CreateQueue, createOpts)
	// The host queue serves only this process's browsers.
	hostOpts := wo
	hostOpts.ActivityTaskPollerBehavior = taskPolls()
	hostOpts.Interceptors = append([]interceptor.WorkerInterceptor{latencyOf(gate)}, wo.Interceptors...)
	host := sdkworker.New(o.Client, hostQueue, hostOpts)
	approvers, err := approversFor(o, log)
	if err != nil {
		return nil, err
	}
	register(shared, host, acts, approvers)
	acts.RegisterCreate(creates)
	// The page judge: the host's own when it brings one, else the rules.
	judge := o.PageJudge
	if judge == nil {
		judge = acts.Judge
	}
	shared.RegisterActivityWithOptions(judge, activity.RegisterOptions{Name: contract.ActivityJudge})

	built = true
	return &Worker{hostQueue: hostQueue, bootID: bootID, shared: shared, creates: creates, host: host, gate: gate, acts: acts, local: lp, log: log,
		reapEvery: reapInterval(cfg), orphanAfter: cfg.OrphanAfter, stopGrace: stopGrace(cfg), live: live}, nil
}

// sharedSlots bounds the activities the shared queue, and the creates the
// create queue, run at once: a few per browser this worker may hold, not
// the SDK's default of 1000 (0: that default).
func sharedSlots(cfg config.Worker) int {
	if cfg.MaxBrowsers > 0 {
		return 4 * cfg.MaxBrowsers
	}
	return 0
}

// memTotal is the host's memory in bytes (/proc/meminfo's MemTotal; 0
// where it cannot be read).
func memTotal() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// taskPolls is the poll behaviour of the shared queue's workflow tasks
// and of the host queue: few polls while idle, more under a backlog.
func taskPolls() sdkworker.PollerBehavior {
	return sdkworker.NewPollerBehaviorAutoscaling(sdkworker.PollerBehaviorAutoscalingOptions{
		InitialNumberOfPollers: 2, MinimumNumberOfPollers: 1, MaximumNumberOfPollers: 8})
}

// heartbeatEvery is how often a long call heartbeats, and how often the
// SDK may pass a heartbeat on to the server.
const heartbeatEvery = 2 * time.Second

// stopMargin is how long past the stop grace the SDK waits for activities:
// enough for a call cut short at the grace to answer and be reported.
const stopMargin = 10 * time.Second

// stopGrace is how long calls in flight may finish on Stop (default 30s).
func stopGrace(cfg config.Worker) time.Duration {
	if cfg.StopGrace <= 0 {
		return activities.DefaultStopGrace
	}
	return cfg.StopGrace
}

// reachPolicy is where this worker's browsers may go: never its own
// services (Temporal, S3, the handoff webhook, a cdp provider's Chrome, and
// those the caller adds) nor the metadata range; private and loopback
// ranges only as the flags say.
func reachPolicy(ctx context.Context, cfg config.Worker, o Options) *netguard.Policy {
	p := &netguard.Policy{
		AllowLoopback: o.BrowserAllowLoopback,
		AllowPrivate:  cfg.BrowserAllowPrivate,
		AllowHosts:    cfg.BrowserAllowHostList(),
	}
	add := func(name, addr string) {
		if s, ok := netguard.ServiceFromAddress(name, addr); ok {
			p.Services = append(p.Services, s)
		}
	}
	add("Temporal frontend", cfg.Temporal.Address)
	add("S3 endpoint", cfg.S3.Endpoint)
	add("handoff webhook", cfg.HandoffWebhook)
	add("Chrome DevTools endpoint (cdp provider)", cfg.CDPEndpoint)
	add("metrics listener (--metrics)", o.Metrics.Addr())
	p.Services = append(p.Services, o.BrowserServices...)
	// Every browser's DevTools port, while it lives (activities list them):
	// through another session's, a page would read and drive that browser.
	p.Listeners = &netguard.Listeners{}
	// A service on 0.0.0.0 or :: is reached at every address of this
	// host, not only at loopback.
	p.HostAddrs = hostAddrs()
	// Resolve service names once, so another name for the same address is
	// caught too. A name that does not resolve is still matched by name.
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for i, s := range p.Services {
		if h := netguard.ParseHost(s.Host); !h.Addr.IsValid() && !netguard.IsLocalhostName(h.Name) {
			if addrs, err := net.DefaultResolver.LookupNetIP(lctx, "ip", h.Name); err == nil {
				p.Services[i].Addrs = addrs
			}
		}
	}
	return p
}

// hostAddrs are the addresses of this host's interfaces.
func hostAddrs() []netip.Addr {
	ifs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, a := range ifs {
		if pfx, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, pfx.Addr().WithZone(""))
		}
	}
	return out
}

// registry is where one queue's workflows and activities are registered (a
// Temporal worker).
type registry interface {
	activities.Registry
	RegisterWorkflowWithOptions(w any, options workflow.RegisterOptions)
}

// register puts the workflows and the shared activities on the shared
// queue, and the activities that touch this process's browsers on its host
// queue, each under its stable name.
// Sessions act only on decisions signed by approvers (none: unsigned mode).
// interceptors wrap every activity of the worker, outermost first. The
// redaction gate is innermost: whatever an activity returns, fails with or
// heartbeats is redacted before anything else (the failure log, metrics, the
// SDK's own log line, history) sees it.
func interceptors(log zerolog.Logger, red *redact.Redactor, m *metrics.Metrics) []interceptor.WorkerInterceptor {
	out := append([]interceptor.WorkerInterceptor{serverJudged(log), failureLog(log)}, crashHooks(log)...)
	if m != nil {
		out = append(out, m.Interceptor())
	}
	return append(out, redactgate.New(red))
}

func register(shared, host registry, acts *activities.Activities, approvers contract.Approvers) {
	shared.RegisterWorkflowWithOptions(workflows.SessionWorkflow(approvers), workflow.RegisterOptions{Name: contract.WorkflowBrowserSession})
	shared.RegisterWorkflowWithOptions(Smoke, workflow.RegisterOptions{Name: SmokeWorkflow})
	shared.RegisterWorkflowWithOptions(workflows.EvidenceWorkflow, workflow.RegisterOptions{Name: contract.WorkflowEvidence})
	acts.RegisterShared(shared)
	acts.RegisterHost(host)
}

// approversFor is who may approve holds and answer handoffs, and says so
// in the log: loudly when nobody is configured and that was not asked for.
func approversFor(o Options, log zerolog.Logger) (contract.Approvers, error) {
	approvers := o.Approvers
	if approvers == nil {
		var err error
		if approvers, err = o.Config.Approvers(); err != nil {
			return nil, err
		}
	}
	switch {
	case len(approvers) > 0:
		log.Info().Strs("approvers", approvers.Names()).Msg("approvals and handoff answers must be signed by one of these approvers")
	case o.Config.UnsignedApprovals:
		log.Info().Msg("approvals are unsigned (--unsigned-approvals): anyone who can signal this namespace can approve held requests and answer handoffs")
	default:
		log.Warn().Msg("approvals are UNSIGNED: anyone who can signal this namespace can approve held requests and answer handoffs, " +
			"under any name. Give --approver-keys (see `durable-browser approvals keygen`), or --unsigned-approvals to say this is intended")
	}
	return approvers, nil
}

// secretsFor builds where {{secret:NAME}} resolves from (the secrets file,
// then the environment) and a redactor that already holds every value this
// worker could type, not only those used so far. environ is os.Environ().
func secretsFor(cfg config.Worker, environ []string) (redact.Chain, *redact.Redactor, error) {
	red := redact.New()
	secrets := redact.Chain{redact.EnvSource{}}
	if cfg.SecretsFile != "" {
		fs, err := redact.LoadFileSource(cfg.SecretsFile)
		if err != nil {
			return nil, nil, &config.Error{Flag: "secrets-file", Problem: err.Error()}
		}
		secrets = append(redact.Chain{fs}, secrets...)
		for _, n := range fs.Names() {
			v, _ := fs.Lookup(n)
			red.Register(v.Value)
		}
	}
	if err := redact.CheckEnv(environ); err != nil {
		return nil, nil, fmt.Errorf("secret origins: %w (write each origin as scheme://host[:port], comma-separated)", err)
	}
	for _, kv := range environ {
		// A secret's origins list is configuration, not a secret: hiding
		// it would hide the site's own address everywhere.
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, redact.EnvPrefix) && !strings.HasSuffix(k, redact.OriginsSuffix) {
			red.Register(v)
		}
	}
	return secrets, red, nil
}

// notifierFor is the handoff port: the one given, else the configured
// webhook (whose signing secret is redacted from then on), else the log.
func notifierFor(cfg config.Worker, given handoff.Notifier, red *redact.Redactor, log zerolog.Logger) handoff.Notifier {
	if given != nil {
		return given
	}
	if cfg.HandoffWebhook != "" {
		red.Register(cfg.HandoffWebhookSecret)
		return handoff.WebhookNotifier{URL: cfg.HandoffWebhook, Secret: []byte(cfg.HandoffWebhookSecret)}
	}
	return handoff.LogNotifier{Logger: log}
}

// reapInterval is how often the reaper runs (default a minute).
func reapInterval(cfg config.Worker) time.Duration {
	if cfg.ReapInterval <= 0 {
		return time.Minute
	}
	return cfg.ReapInterval
}

// HostQueue is this process's own task queue.
func (w *Worker) HostQueue() string { return w.hostQueue }

// LiveView is the worker's live view server, nil when --live-view is unset.
func (w *Worker) LiveView() *liveview.Server { return w.live }

// liveViewFor starts the live view server when --live-view is set.
func liveViewFor(cfg config.Worker, log zerolog.Logger) (*liveview.Server, error) {
	lv := cfg.LiveView
	if lv.Addr == "" {
		return nil, nil
	}
	s, err := liveview.Listen(liveview.Options{Addr: lv.Addr, BaseURL: lv.URL, FrameAncestors: lv.FrameAncestors,
		WatchOnly: lv.WatchOnly, Book: book.Book{Dir: lv.Dir}, Logger: log})
	if err != nil {
		return nil, &config.Error{Flag: "live-view", Problem: err.Error()}
	}
	log.Info().Str("live_view", s.Addr()).Bool("watch_only", lv.WatchOnly).Msg("live view serving")
	return s, nil
}

// Admission is the gate that decides whether this worker takes new
// sessions.
func (w *Worker) Admission() *admission.Gate { return w.gate }

// latencyOf records, in the gate, how long each tool call on the host queue
// took: the latency of the sessions this worker holds.
func latencyOf(g *admission.Gate) interceptor.WorkerInterceptor {
	return actintercept.Around(func(ctx context.Context, in *interceptor.ExecuteActivityInput, next actintercept.Next) (any, error) {
		t0 := time.Now()
		out, err := next(ctx, in)
		if timedTools[activity.GetInfo(ctx).ActivityType.Name] {
			g.Record(time.Since(t0))
		}
		return out, err
	})
}

// timedTools are the host queue's activities that serve a model's tool
// call; custody steps and handoff notices are not what the bound is about.
var timedTools = map[string]bool{
	contract.ActivitySnapshot: true, contract.ActivityRun: true, contract.ActivityScreenshot: true, contract.ActivityRead: true,
	contract.ActivityCheck: true, contract.ActivityDownloads: true, contract.ActivityUpload: true,
}

// Activities exposes the process's activities (tests inspect the registry).
func (w *Worker) Activities() *activities.Activities { return w.acts }

// Start reaps what earlier boots left, then polls both queues.
func (w *Worker) Start() error {
	w.reap()
	// Warm browsers start after the reap, in this boot's own tags.
	w.acts.StartWarm()
	if err := w.host.Start(); err != nil {
		return fmt.Errorf("starting host queue worker: %w", err)
	}
	if err := w.shared.Start(); err != nil {
		w.host.Stop()
		return fmt.Errorf("starting shared queue worker: %w", err)
	}
	if err := w.creates.Start(); err != nil {
		w.host.Stop()
		w.shared.Stop()
		return fmt.Errorf("starting create queue worker: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.stopReaper = cancel
	w.reaperDone = make(chan struct{})
	go func() {
		defer close(w.reaperDone)
		t := time.NewTicker(w.reapEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				w.reap()
			}
		}
	}()
	w.log.Info().Str("shared_queue", contract.SharedQueue).Str("create_queue", contract.CreateQueue).Str("host_queue", w.hostQueue).
		Str("isolation", string(w.local.Isolation())).Str("headless_browser", w.local.Executable(false)).Msg("worker polling")
	return nil
}

func (w *Worker) reap() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if w.orphanAfter > 0 {
		w.acts.ReleaseOrphans(ctx, w.orphanAfter)
	}
	// A session that judged this worker lost (it missed a schedule-to-start
	// bound while busy) has moved to another browser; give its old one back
	// now rather than at the orphan bound. Only browsers untouched for a
	// whole reap interval are asked about.
	w.acts.ReleaseDisowned(ctx, w.reapEvery)
	if tags, err := w.local.Reap(ctx, nil); err != nil {
		w.log.Warn().Err(err).Strs("released", tags).Msg("reaping browsers nobody holds")
	}
}

// Stop stops polling on both queues at once, lets the calls in flight finish
// for the stop grace (a run or upload cut short answers effect_unknown), then
// releases every browser this process holds.
func (w *Worker) Stop() {
	w.stopOnce.Do(func() {
		if w.stopReaper != nil {
			w.stopReaper()
			<-w.reaperDone
		}
		w.log.Info().Dur("grace", w.stopGrace).Msg("stopping: no new calls; calls in flight may finish")
		// Both at once: stopping one queue after the other would leave the
		// second polling, and taking calls, through the first one's grace.
		var wg sync.WaitGroup
		for _, sw := range []sdkworker.Worker{w.shared, w.creates, w.host} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sw.Stop()
			}()
		}
		wg.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		w.acts.Close(ctx)
		// The shared browser of context isolation goes once its sessions have.
		w.local.Close(ctx)
		if w.live != nil {
			_ = w.live.Close()
		}
		w.log.Info().Msg("worker stopped")
	})
}

// DefaultProfileRoot is where dev keeps browsers: under its state directory.
func DefaultProfileRoot(stateDir string) string { return filepath.Join(stateDir, "browsers") }

// statesFor builds the named-state store when the host gave a state key:
// in the evidence bucket, with its credentials and server-side encryption.
func statesFor(cfg config.Worker, store evidence.Store, key string) (*states.Store, []string, error) {
	names, err := cfg.StateNameList()
	if err != nil {
		return nil, nil, err
	}
	if key == "" {
		key = os.Getenv(states.EnvKey)
	}
	if key == "" {
		return nil, names, nil
	}
	raw, err := states.ParseKey(key)
	if err != nil {
		return nil, nil, err
	}
	sealer, err := states.NewSealer(raw)
	if err != nil {
		return nil, nil, err
	}
	s3st, ok := store.(*evidence.S3Store)
	if !ok {
		return nil, nil, fmt.Errorf("%s is set, but named states are kept in S3 and this worker's evidence store is not S3: configure --s3-bucket, or unset %s", states.EnvKey, states.EnvKey)
	}
	sse, kms := s3st.Encryption()
	st, err := states.New(states.Options{Client: s3st.Client(), Bucket: s3st.Bucket(), Prefix: cfg.StatePrefix, SSE: sse, KMSKeyID: kms, Sealer: sealer})
	return st, names, err
}
