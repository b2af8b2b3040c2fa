// Package harness starts the real parts end-to-end tests run against: an
// embedded Temporal server, a versitygw S3 server, the demo site and workers
// (in-process, or as child processes of the built binary).
package harness

import (
	"context"
	"crypto/x509"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.temporal.io/sdk/client"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/config"
	"github.com/durable-browser/durable-browser/internal/demosite"
	"github.com/durable-browser/durable-browser/internal/devstack"
	"github.com/durable-browser/durable-browser/internal/evidence"
	"github.com/durable-browser/durable-browser/internal/handoff"
	"github.com/durable-browser/durable-browser/internal/logging"
	"github.com/durable-browser/durable-browser/internal/netguard"
	"github.com/durable-browser/durable-browser/worker"
	"github.com/durable-browser/durable-browser/workflows"
)

// Env is the shared stack of one test binary.
type Env struct {
	Dir      string
	Temporal *devstack.Temporal
	S3       *devstack.S3
	Store    *evidence.S3Store
	Demo     *demosite.Server
	Client   client.Client
	// Bin is the durable-browser binary, built once per test binary.
	Bin string
	// Log collects every log line of in-process workers (checked for leaks).
	Log *devstack.SyncBuffer

	temporalOpts devstack.TemporalOptions
}

// RestartTemporal stops the Temporal server and starts it again on the same
// address and state (Options.TemporalDB); clients and workers reconnect.
func (e *Env) RestartTemporal(ctx context.Context) error {
	if e.temporalOpts.DatabaseFile == "" {
		return fmt.Errorf("harness started without TemporalDB: an in-memory server cannot restart")
	}
	e.Temporal.Stop()
	t, err := devstack.StartTemporal(ctx, e.temporalOpts)
	if err != nil {
		return err
	}
	e.Temporal = t
	return nil
}

// Options for Start.
type Options struct {
	// Binary builds cmd/durable-browser into the env's directory.
	Binary bool
	// TemporalDB keeps Temporal's state in this SQLite file instead of in
	// memory, so RestartTemporal can stop and start the server.
	TemporalDB string
	// BuildTags are passed to go build for the binaries (the crash matrix's
	// "crashhooks").
	BuildTags string
}

// Start brings up Temporal (in memory), S3 and the demo site.
func Start(o Options) (_ *Env, err error) {
	dir, err := os.MkdirTemp("", "durable-browser-e2e-")
	if err != nil {
		return nil, err
	}
	e := &Env{Dir: dir, Log: &devstack.SyncBuffer{}}
	defer func() {
		if err != nil {
			e.Close()
		}
	}()
	ctx := context.Background()
	port, err := devstack.FreePort()
	if err != nil {
		return nil, err
	}
	e.temporalOpts = devstack.TemporalOptions{
		Address:          fmt.Sprintf("127.0.0.1:%d", port),
		DatabaseFile:     o.TemporalDB,
		SearchAttributes: workflows.SearchAttributeTypes,
		Logger:           zerolog.Nop(),
	}
	e.Temporal, err = devstack.StartTemporal(ctx, e.temporalOpts)
	if err != nil {
		return nil, err
	}
	s3port, err := devstack.FreePort()
	if err != nil {
		return nil, err
	}
	e.S3, err = devstack.StartS3(ctx, devstack.S3Options{Address: fmt.Sprintf("127.0.0.1:%d", s3port), Dir: filepath.Join(dir, "s3"), Bucket: "evidence"})
	if err != nil {
		return nil, err
	}
	e.Store, err = evidence.NewS3(ctx, evidence.S3Options{
		Bucket: "evidence", Prefix: "evidence", Endpoint: e.S3.Endpoint(), PathStyle: true, Region: "us-east-1",
		AccessKey: e.S3.AccessKey(), SecretKey: e.S3.SecretKey(),
	})
	if err != nil {
		return nil, err
	}
	e.Demo, err = demosite.Listen("127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	e.Client, err = client.Dial(client.Options{HostPort: e.Temporal.Address(), Namespace: "default", Logger: logging.NewSDKLogger(zerolog.Nop())})
	if err != nil {
		return nil, err
	}
	if o.Binary {
		// durable-browser's worker, mcp and dev verbs exec these
		// companions from beside it.
		e.Bin = filepath.Join(dir, "durable-browser")
		if err := build(dir, o.BuildTags, "durable-browser", "durable-browser-worker", "durable-browser-mcp", "durable-browser-dev"); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// build builds the named commands with tags into dir.
func build(dir, tags string, names ...string) error {
	for _, name := range names {
		cmd := exec.Command("go", "build", "-tags", tags, "-o", filepath.Join(dir, name), "github.com/durable-browser/durable-browser/cmd/"+name)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("building %s: %v\n%s", name, err, out)
		}
	}
	return nil
}

// BuildWorker builds another durable-browser with its worker (with tags,
// comma-separated) into a new directory of the env, and answers its path for
// ProcessOptions.Bin: a second build of the worker, as a rolling upgrade
// runs.
func (e *Env) BuildWorker(tags string) (string, error) {
	dir, err := os.MkdirTemp(e.Dir, "build-")
	if err != nil {
		return "", err
	}
	if err := build(dir, tags, "durable-browser", "durable-browser-worker"); err != nil {
		return "", err
	}
	return filepath.Join(dir, "durable-browser"), nil
}

// Close stops everything Start started.
func (e *Env) Close() {
	if e.Client != nil {
		e.Client.Close()
	}
	if e.Demo != nil {
		_ = e.Demo.Close()
	}
	if e.S3 != nil {
		_ = e.S3.Stop()
	}
	if e.Temporal != nil {
		e.Temporal.Stop()
	}
	_ = os.RemoveAll(e.Dir)
}

// WorkerOptions tunes an in-process worker.
type WorkerOptions struct {
	// OrphanAfter and ReapInterval shorten the worker's orphan release.
	OrphanAfter, ReapInterval time.Duration
	Notifier                  handoff.Notifier
	SecretsFile               string
	// ProfileRoot defaults to a new directory per worker.
	ProfileRoot string
	// HoldTimeout shortens how long a held request waits for a decision (default 5m).
	HoldTimeout time.Duration
	// UploadDir and ProfileGrants are the worker's --upload-dir and --profile-grants.
	UploadDir, ProfileGrants string
	// Approvers makes sessions act only on decisions they signed (default:
	// unsigned mode).
	Approvers contract.Approvers
	// PageJudge serves page.judge instead of the rule-based judge.
	PageJudge any
	// LiveView is the worker's live view (Addr "": off).
	LiveView config.LiveView
	// CDPEndpoint turns on provider cdp, attached to that Chrome.
	CDPEndpoint string
	// SiteRoots verifies loopback TLS sites where the egress proxy
	// decrypts a browser's TLS (httptest.NewTLSServer's certificate).
	SiteRoots *x509.CertPool
	// BrowserServices are more services of the worker's own that its
	// browsers must never reach (a test's loopback server standing for one).
	BrowserServices []netguard.Service
	// WarmBrowsers is the worker's --warm-browsers.
	WarmBrowsers int
	// MaxBrowsers and LatencyBound are the worker's --max-browsers (0: no
	// bound) and --latency-bound.
	MaxBrowsers, LatencyBound int
	// Isolation is the worker's --isolation (default
	// $DURABLE_BROWSER_ISOLATION, else process).
	Isolation string
}

// WorkerConfig is the configuration a test worker runs with.
func (e *Env) WorkerConfig(profileRoot string) config.Worker {
	return config.Worker{
		Temporal:    config.Temporal{Address: e.Temporal.Address(), Namespace: "default"},
		S3:          config.S3{Bucket: "evidence", Prefix: "evidence", Endpoint: e.S3.Endpoint(), PathStyle: true, Region: "us-east-1"},
		ProfileRoot: profileRoot,
		LogLevel:    "debug",
		// The test sites are on loopback, as dev's demo site is; the
		// worker's own services (Temporal, S3) stay blocked.
		BrowserAllowPrivate: true,
		// DURABLE_BROWSER_ISOLATION=context runs every test's plain
		// sessions as contexts of a shared browser (worker processes read
		// the variable themselves).
		Isolation: os.Getenv(config.EnvName("isolation")),
	}
}

// StartWorker runs a worker in this process until the test ends.
func (e *Env) StartWorker(t testing.TB, o WorkerOptions) *worker.Worker {
	t.Helper()
	w, err := e.NewWorker(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return w
}

// NewWorker starts a worker in this process; the caller stops it.
func (e *Env) NewWorker(o WorkerOptions) (*worker.Worker, error) {
	root := o.ProfileRoot
	if root == "" {
		var err error
		root, err = os.MkdirTemp(e.Dir, "browsers-")
		if err != nil {
			return nil, err
		}
	}
	cfg := e.WorkerConfig(root)
	cfg.SecretsFile = o.SecretsFile
	cfg.UploadDir, cfg.ProfileGrants = o.UploadDir, o.ProfileGrants
	cfg.OrphanAfter, cfg.ReapInterval = o.OrphanAfter, o.ReapInterval
	cfg.LiveView = o.LiveView
	cfg.CDPEndpoint = o.CDPEndpoint
	cfg.WarmBrowsers = o.WarmBrowsers
	cfg.MaxBrowsers, cfg.LatencyBound = o.MaxBrowsers, o.LatencyBound
	if o.Isolation != "" {
		cfg.Isolation = o.Isolation
	}
	log := zerolog.New(e.Log).Level(zerolog.DebugLevel).With().Timestamp().Logger()
	w, err := worker.New(context.Background(), worker.Options{
		Client:   e.Client,
		Config:   cfg,
		Evidence: e.Store,
		Notifier: o.Notifier,
		// Approval tests shorten the wait for an unanswered hold.
		HoldTimeout:     o.HoldTimeout,
		Approvers:       o.Approvers,
		PageJudge:       o.PageJudge,
		SiteRoots:       o.SiteRoots,
		BrowserServices: o.BrowserServices,
		// Tests read their own loopback pages through web_fetch.
		FetchAllowLoopback: true,
		Logger:             log,
	})
	if err != nil {
		return nil, err
	}
	if err := w.Start(); err != nil {
		return nil, err
	}
	return w, nil
}

// ProcessOptions tunes a worker child process.
type ProcessOptions struct {
	// ProfileRoot is shared by workers on one "machine"; default: a new one.
	ProfileRoot string
	// ReapInterval is passed as --reap-interval (default 1m).
	ReapInterval time.Duration
	// Env is added to the process's environment.
	Env []string
	// Bin is the durable-browser binary to run (default: Env.Bin); see
	// BuildWorker.
	Bin string
	// Address is the Temporal frontend (default: the env's own server).
	Address string
	// Args are more worker flags.
	Args []string
}

// Process is a worker running as a child process of the built binary.
type Process struct {
	Cmd         *exec.Cmd
	ProfileRoot string
	Stderr      *devstack.SyncBuffer
}

// StartWorkerProcess runs `durable-browser worker` as a child process and
// waits until it polls its host queue. Cleanup kills it if still running.
func (e *Env) StartWorkerProcess(t testing.TB, o ProcessOptions) *Process {
	t.Helper()
	bin := o.Bin
	if bin == "" {
		bin = e.Bin
	}
	if bin == "" {
		t.Fatal("harness started without Binary")
	}
	root := o.ProfileRoot
	if root == "" {
		var err error
		if root, err = os.MkdirTemp(e.Dir, "proc-browsers-"); err != nil {
			t.Fatal(err)
		}
	}
	reap := o.ReapInterval
	if reap == 0 {
		reap = time.Minute
	}
	addr := o.Address
	if addr == "" {
		addr = e.Temporal.Address()
	}
	args := append([]string{"worker",
		"--address", addr, "--namespace", "default",
		"--s3-bucket", "evidence", "--s3-endpoint", e.S3.Endpoint(), "--s3-path-style", "--s3-region", "us-east-1",
		"--profile-root", root, "--log-level", "debug", "--reap-interval", reap.String(), "--browser-allow-private"}, o.Args...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(),
		"AWS_ACCESS_KEY_ID="+e.S3.AccessKey(), "AWS_SECRET_ACCESS_KEY="+e.S3.SecretKey(), "AWS_REGION=us-east-1")
	cmd.Env = append(cmd.Env, o.Env...)
	buf := &devstack.SyncBuffer{}
	cmd.Stderr = buf
	cmd.Stdout = buf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &Process{Cmd: cmd, ProfileRoot: root, Stderr: buf}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			devstack.StopGroup(cmd, syscall.SIGTERM, 20*time.Second)
		}
		KillUnder(root)
	})
	Eventually(t, 60*time.Second, func() bool { return strings.Contains(buf.String(), "worker polling") }, "worker process did not start polling:\n%s", buf)
	return p
}

// HostQueue is the host queue a worker process announced.
func (p *Process) HostQueue() string {
	for _, line := range strings.Split(p.Stderr.String(), "\n") {
		if i := strings.Index(line, `"host_queue":"`); i >= 0 {
			rest := line[i+len(`"host_queue":"`):]
			if j := strings.IndexByte(rest, '"'); j >= 0 {
				return rest[:j]
			}
		}
	}
	return ""
}

// Kill sends SIGKILL to the worker process alone (its browsers live on in
// their own process groups, as after a real crash) and waits for it.
func (p *Process) Kill() {
	_ = p.Cmd.Process.Kill()
	_ = p.Cmd.Wait()
}

// Terminate sends SIGTERM to the worker process alone, as an orchestrator
// stopping it would, and returns a channel that yields its exit error once
// it has exited.
func (p *Process) Terminate() <-chan error {
	exited := make(chan error, 1)
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	go func() { exited <- p.Cmd.Wait() }()
	return exited
}

// PIDsUnder lists live processes whose command line mentions dir.
func PIDsUnder(dir string) []int { return devstack.PIDsUnder(dir) }

// KillUnder kills every process whose command line mentions dir: a test's
// last resort so nothing outlives it.
func KillUnder(dir string) { devstack.KillUnder(dir) }

// Eventually polls cond every 50 ms until it holds or the timeout passes.
func Eventually(t testing.TB, timeout time.Duration, cond func() bool, format string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf(format, args...)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
