package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/durable-browser/durable-browser/cmd/internal/cli"
	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/config"
	"github.com/durable-browser/durable-browser/internal/devstack"
	"github.com/durable-browser/durable-browser/internal/dial"
	"github.com/durable-browser/durable-browser/internal/evidence"
	"github.com/durable-browser/durable-browser/internal/handoff"
	"github.com/durable-browser/durable-browser/internal/logging"
	"github.com/durable-browser/durable-browser/internal/netguard"
	"github.com/durable-browser/durable-browser/internal/states"
	"github.com/durable-browser/durable-browser/worker"
	"github.com/durable-browser/durable-browser/workflows"
)

type devFlags struct {
	stateDir, temporalAddr, uiAddr, s3Addr, demoAddr string
	smoke                                            bool
	w                                                config.Worker
}

const devUsage = `Usage: durable-browser dev [flags]

Runs everything on this machine, on loopback: an embedded Temporal server
persisting to SQLite, the Temporal Web UI, an S3 server (versitygw) with an
evidence bucket, a worker using a local Chromium, and the demo site.
Ctrl-C stops it all; no browser or server is left running.

Flags:
`

func runDev(ctx context.Context, env *cliEnv, args []string) error {
	fs := cli.Flags("dev", env, devUsage)
	var f devFlags
	fs.String(&f.stateDir, "state-dir", ".durable-browser", "directory for Temporal's SQLite file, S3 objects and browser profiles")
	fs.String(&f.temporalAddr, "temporal-address", "127.0.0.1:7233", "embedded Temporal frontend")
	fs.String(&f.uiAddr, "ui-address", "127.0.0.1:8233", "Temporal Web UI (empty: no UI)")
	fs.String(&f.s3Addr, "s3-address", "127.0.0.1:7070", "loopback S3 server (versitygw)")
	fs.String(&f.demoAddr, "demo-address", "127.0.0.1:8380", "the bundled demo site")
	fs.Bool(&f.smoke, "smoke", false, "run the smoke workflow once everything is up, and print what it saw")
	fs.String(&f.w.Chrome, "chrome", env.Getenv("CHROME_PATH"), "Chrome or Chromium executable (also $CHROME_PATH; default: discovered)")
	config.BindHeadlessShell(fs, &f.w.HeadlessShell)
	fs.Bool(&f.w.NoSandbox, "no-sandbox", false, "start Chrome with --no-sandbox (always on when running as root)")
	fs.Bool(&f.w.Headed, "headed", false, "show browser windows")
	config.BindIsolation(fs, &f.w.Isolation)
	fs.String(&f.w.SecretsFile, "secrets-file", "", "file of NAME=value lines for {{secret:NAME}}")
	fs.String(&f.w.UploadDir, "upload-dir", "", "the only directory browser_upload takes files from (default: uploads refused)")
	fs.String(&f.w.ProfileGrants, "profile-grants", "", "saved profiles every session may use: name1,name2:save")
	fs.Duration(&f.w.OrphanAfter, "orphan-after", time.Hour, "release a browser no call has touched for this long")
	fs.String(&f.w.HandoffWebhook, "handoff-webhook", "", "URL handoff notices are POSTed to (default: printed here)")
	fs.String(&f.w.HandoffWebhookSecret, "handoff-webhook-secret", "", "HMAC-SHA256 key signing webhook bodies")
	config.BindLiveView(fs, &f.w.LiveView)
	fs.String(&f.w.LogLevel, "log-level", "info", "trace, debug, info, warn or error")
	fs.String(&f.w.ApproverKeys, "approver-keys", "", "file of \"name base64-ed25519-public-key\" lines: require signed approvals and handoff answers (default: unsigned)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		// The flag package stops at the first word: every flag after it
		// would be silently left out.
		fs.Usage()
		return fmt.Errorf("dev takes flags only, got %q (no flag after it was read); run `durable-browser dev [flags]`", fs.Args())
	}
	log, err := logging.New(logging.Options{Level: f.w.LogLevel, Out: env.Stderr})
	if err != nil {
		return &config.Error{Flag: "log-level", Problem: err.Error()}
	}
	state, err := filepath.Abs(f.stateDir)
	if err != nil {
		return &config.Error{Flag: "state-dir", Problem: err.Error()}
	}
	f.w.Temporal = config.Temporal{Address: f.temporalAddr, Namespace: "default"}
	f.w.S3 = config.S3{Bucket: devstack.DefaultS3Bucket, Prefix: "evidence", PathStyle: true, Region: "us-east-1"}
	f.w.ProfileRoot = worker.DefaultProfileRoot(state)
	// dev is unsigned unless keys are given; the banner says so.
	f.w.UnsignedApprovals = f.w.ApproverKeys == ""
	if err := f.w.Validate(); err != nil {
		return err
	}
	// The state directory holds history and evidence: no upload from there.
	if err := config.CheckUploadDir(f.w.UploadDir, map[string]string{"state-dir": state}); err != nil {
		return err
	}

	stack, err := devstack.StartStack(ctx, devstack.StackOptions{
		StateDir:         state,
		TemporalAddress:  f.temporalAddr,
		UIAddress:        f.uiAddr,
		S3Address:        f.s3Addr,
		DemoAddress:      f.demoAddr,
		Namespace:        "default",
		Bucket:           devstack.DefaultS3Bucket,
		SearchAttributes: workflows.SearchAttributeTypes,
		Logger:           log,
	})
	if err != nil {
		return err
	}
	defer stack.Stop()
	f.w.S3.Endpoint = stack.S3.Endpoint()

	c, err := client.DialContext(ctx, client.Options{
		HostPort:  stack.Temporal.Address(),
		Namespace: f.w.Temporal.Namespace,
		Logger:    logging.NewSDKLogger(log.With().Str("component", "temporal-sdk").Logger()),
		// Loopback: no gzip of every message.
		ConnectionOptions: client.ConnectionOptions{GrpcCompression: dial.Compression(stack.Temporal.Address())},
	})
	if err != nil {
		return fmt.Errorf("connecting to the embedded Temporal at %s: %w", stack.Temporal.Address(), err)
	}
	defer c.Close()
	store, err := evidence.NewS3(ctx, evidence.S3Options{
		Bucket: stack.S3.Bucket(), Prefix: f.w.S3.Prefix, Endpoint: stack.S3.Endpoint(), PathStyle: true,
		Region: "us-east-1", AccessKey: stack.S3.AccessKey(), SecretKey: stack.S3.SecretKey(),
	})
	if err != nil {
		return err
	}
	var notifier handoff.Notifier
	if f.w.HandoffWebhook == "" {
		// In dev the person is at this terminal: the inspector address goes
		// to stdout, never to the structured log.
		notifier = handoff.LogNotifier{Logger: log, Reach: env.Stdout}
	}
	// dev's browsers may open loopback pages (the demo site), never the
	// stack's own services.
	services := []netguard.Service{}
	if stack.UI != nil {
		if s, ok := netguard.ServiceFromAddress("Temporal Web UI", stack.UI.URL()); ok {
			services = append(services, s)
		}
	}
	for _, p := range stack.Temporal.InternalPorts() {
		services = append(services, netguard.Service{Name: "Temporal internal service", Host: "127.0.0.1", Port: strconv.Itoa(p)})
	}
	stateKey, err := devStateKey(state, env.Getenv)
	if err != nil {
		return err
	}
	w, err := worker.New(ctx, worker.Options{Client: c, Config: f.w, Evidence: store, Notifier: notifier, Logger: log,
		BrowserAllowLoopback: true, BrowserServices: services, StateKey: stateKey})
	if err != nil {
		return err
	}
	if err := w.Start(); err != nil {
		return err
	}
	defer w.Stop()

	out := env.Stdout
	fmt.Fprintf(out, "\ndurable-browser dev is running (state in %s)\n", state)
	fmt.Fprintf(out, "  Temporal:    %s (namespace default)\n", stack.Temporal.Address())
	if stack.UI != nil {
		fmt.Fprintf(out, "  Temporal UI: %s/namespaces/default/workflows\n", stack.UI.URL())
	}
	fmt.Fprintf(out, "  S3:          %s bucket %s (evidence under %s/)\n", stack.S3.Endpoint(), stack.S3.Bucket(), f.w.S3.Prefix)
	fmt.Fprintf(out, "  Demo site:   %s/\n", stack.Demo.URL())
	fmt.Fprintf(out, "  Host queue:  %s\n", w.HostQueue())
	if lv := w.LiveView(); lv != nil {
		fmt.Fprintf(out, "  Live view:   %s (each session's address comes with its handoff, and from handoff list --show-url)\n", lv.Addr())
	}
	if approvers, _ := f.w.Approvers(); len(approvers) > 0 {
		fmt.Fprintf(out, "  Approvals:   signed; approvers %s\n\n", strings.Join(approvers.Names(), ", "))
	} else {
		fmt.Fprintf(out, "  Approvals:   UNSIGNED\n\n")
		fmt.Fprintf(out, "!!! approvals are UNSIGNED: anyone who can signal this namespace can approve held requests\n")
		fmt.Fprintf(out, "!!! and answer handoffs, under any name. Fine on this machine; never for a shared namespace.\n")
		fmt.Fprintf(out, "!!! Require signatures with --approver-keys (keys from `%s approvals keygen`).\n\n", selfName(os.Args))
	}
	fmt.Fprintf(out, "Try, in another terminal:\n")
	for _, line := range tryLines(selfName(os.Args), stack.Temporal.Address(), stack.Demo.URL()) {
		fmt.Fprintf(out, "  %s\n", line)
	}
	fmt.Fprintln(out)

	if f.smoke {
		if err := runSmoke(ctx, c, stack.Demo.URL()+"/", env); err != nil {
			return err
		}
	}
	fmt.Fprintln(out, "Press Ctrl-C to stop.")
	<-ctx.Done()
	fmt.Fprintln(out, "\nstopping: releasing browsers, then S3, the UI and Temporal...")
	return nil
}

// selfName is how the person started the durable-browser binary, so the
// commands printed for them to try work as typed (bin/durable-browser after
// `make run`, /opt/db/durable-browser by its full path). `durable-browser
// dev` execs this binary as <dir as typed>/durable-browser-dev, so dropping
// "-dev" names the CLI; started from PATH, it is plain durable-browser.
func selfName(args []string) string {
	if len(args) > 0 && strings.Contains(args[0], "/") {
		return strings.TrimSuffix(args[0], "-dev")
	}
	return "durable-browser"
}

// tryLines are the commands printed for a person to try against this
// stack: they name its Temporal address unless it is the default the
// client verbs use, so they never reach another stack.
func tryLines(self, address, demoURL string) []string {
	at := ""
	if address != config.DefaultTemporalAddress {
		at = " --address " + address
	}
	return []string{
		fmt.Sprintf(`%s call%s demo run '{"actions":[{"op":"goto","url":"%s/"}]}'`, self, at, demoURL),
		fmt.Sprintf(`%s call%s demo snapshot '{"mode":"interactive"}'`, self, at),
		fmt.Sprintf(`%s sessions%s`, self, at),
	}
}

func runSmoke(ctx context.Context, c client.Client, url string, env *cliEnv) error {
	id := fmt.Sprintf("smoke-%d", time.Now().Unix())
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: contract.SharedQueue, WorkflowExecutionTimeout: 2 * time.Minute}, worker.SmokeWorkflow, url)
	if err != nil {
		return fmt.Errorf("starting the smoke workflow: %w", err)
	}
	var res worker.SmokeResult
	if err := run.Get(ctx, &res); err != nil {
		return fmt.Errorf("smoke workflow %s failed: %w", id, err)
	}
	fmt.Fprintf(env.Stdout, "Smoke workflow %s opened %s\n  title: %s\n\n", id, res.URL, res.Title)
	return nil
}

// devStateKey is the key dev seals named states with: the environment's
// DURABLE_BROWSER_STATE_KEY, else one made on first start and kept in the
// state directory (mode 0600), so named states work in dev with no setup
// and survive its restarts.
func devStateKey(stateDir string, getenv func(string) string) (string, error) {
	if k := getenv(states.EnvKey); k != "" {
		return k, nil
	}
	path := filepath.Join(stateDir, "state.key")
	if b, err := os.ReadFile(path); err == nil {
		return strings.TrimSpace(string(b)), nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("reading dev's state key: %w", err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	k := base64.StdEncoding.EncodeToString(raw)
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return "", err
	}
	if err := os.WriteFile(path, []byte(k+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("writing dev's state key: %w", err)
	}
	return k, nil
}
