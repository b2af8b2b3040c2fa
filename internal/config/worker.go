package config

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/netguard"
)

// Temporal says how to reach a Temporal cluster.
type Temporal struct {
	Address   string
	Namespace string
	// TLS client certificate and key (mTLS), CA to trust, and server name.
	TLSCert, TLSKey, TLSCA, TLSServerName string
	// APIKey authenticates to Temporal Cloud; it implies TLS.
	APIKey string
}

// S3 says where evidence is filed.
type S3 struct {
	Bucket, Prefix, Endpoint, Region string
	PathStyle                        bool
	// SSE is "", "AES256" or "aws:kms".
	SSE, KMSKeyID string
}

// Worker is everything `durable-browser worker` needs.
type Worker struct {
	Temporal Temporal
	S3       S3

	Chrome string
	// HeadlessShell chooses what runs headless browsers: auto, off or a
	// path (local.Options.HeadlessShell).
	HeadlessShell string
	ProfileRoot   string
	NoSandbox     bool
	Headed        bool
	// CDPEndpoint, when set, makes "cdp" sessions attach to that Chrome.
	CDPEndpoint string
	// Providers lists the rented-browser providers to enable
	// (comma-separated: browserbase, kernel); their keys come from the
	// environment.
	Providers   string
	Browserbase Browserbase
	Kernel      Kernel
	// PricePerMinute prices session minutes per provider
	// ("browserbase=0.002,kernel=0.0016"), for the records of released
	// sessions.
	PricePerMinute string

	SecretsFile string
	// UploadDir is the one directory browser_upload may take files from,
	// named relative to it. Empty: every upload is refused.
	UploadDir string
	// ProfileGrants lists saved profiles every session on this worker may
	// use: "name" for a copy, "name:save" to save too (comma-separated).
	ProfileGrants string
	// StateNames are the globs of the named states sessions on this
	// worker may keep (empty: any valid name); StatePrefix is their key
	// prefix in the evidence bucket. The key is DURABLE_BROWSER_STATE_KEY.
	StateNames  string
	StatePrefix string
	// ReapInterval is how often browsers no live worker holds are released.
	ReapInterval time.Duration
	// OrphanAfter releases a browser no call has touched for this long.
	OrphanAfter time.Duration
	// StopGrace is how long calls in flight may finish once the worker is
	// told to stop, before they are cut short and its browsers released.
	StopGrace time.Duration
	// MaxBrowsers bounds the browsers this worker holds at once.
	MaxBrowsers int
	// WarmBrowsers is how many plain local browsers the worker keeps
	// started ahead of sessions (0: none; WarmAuto: a context per
	// --max-browsers under context isolation, within WarmMemoryShare of
	// the host's memory, and none under process isolation).
	WarmBrowsers int
	// MaxLaunches bounds the local browsers starting at once; more creates
	// wait for a slot (0: local.DefaultMaxLaunches).
	MaxLaunches int
	// LatencyBound stops this worker taking new sessions while the p95 of
	// its recent calls is over this many times its unloaded p95 (0: never).
	LatencyBound int
	// CPUProfile, when set, is a file the worker writes a Go CPU profile
	// of its whole run to (off unless set).
	CPUProfile string
	// Isolation is how a plain local session is kept apart from the
	// others: "process" (a browser per session) or "context" (a browser
	// context per plain session in one shared browser).
	Isolation string

	HandoffWebhook       string
	HandoffWebhookSecret string

	// LiveView serves the live view of local and cdp sessions (off unless
	// LiveView.Addr is set).
	LiveView LiveView

	// BrowserAllowPrivate lets browsers reach private and loopback ranges.
	BrowserAllowPrivate bool
	// BrowserAllowHosts is a comma-separated list of hosts browsers may
	// reach whatever their address (never the worker's own services).
	BrowserAllowHosts string
	// DNSServer, when set, answers the worker's own name lookups (reach
	// guard, egress proxy, web_fetch): an IP address and port.
	DNSServer string
	// ApproverKeys is a file of "name base64-ed25519-public-key" lines: the
	// people whose signed decisions sessions act on.
	ApproverKeys string
	// UnsignedApprovals says running without approver keys is intended
	// (it silences the warning).
	UnsignedApprovals bool

	LogLevel string
	// Metrics is where Prometheus metrics are served (host:port), if set.
	Metrics string
}

// Browserbase tunes the browserbase provider.
type Browserbase struct {
	// Lifetime is every session's maximum life (Browserbase's timeout).
	Lifetime        time.Duration
	Region          string
	Proxies         bool
	AdvancedStealth bool
}

// Kernel tunes the kernel provider.
type Kernel struct {
	// IdleTimeout is how long Kernel keeps a browser nobody is connected to.
	IdleTimeout time.Duration
	Headless    bool
}

// RentedProviders is --providers as a list.
func (w *Worker) RentedProviders() []string {
	var out []string
	for _, p := range strings.Split(w.Providers, ",") {
		if p = strings.ToLower(strings.TrimSpace(p)); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// BindTemporal defines the flags for reaching Temporal.
func BindTemporal(s *Set, t *Temporal) {
	s.String(&t.Address, "address", DefaultTemporalAddress, "Temporal frontend host:port")
	s.String(&t.Namespace, "namespace", "default", "Temporal namespace")
	s.String(&t.TLSCert, "tls-cert", "", "client certificate file for mTLS (PEM)")
	s.String(&t.TLSKey, "tls-key", "", "client key file for mTLS (PEM)")
	s.String(&t.TLSCA, "tls-ca", "", "CA certificate file to trust for the server (PEM)")
	s.String(&t.TLSServerName, "tls-server-name", "", "server name to verify, when it differs from the address")
	s.String(&t.APIKey, "api-key", "", "Temporal Cloud API key (implies TLS)")
}

// BindS3 defines the flags for reaching the evidence bucket (credentials
// come from the standard AWS environment). Writers add --s3-sse and
// --s3-kms-key-id; readers need only these.
func BindS3(s *Set, c *S3) {
	s.String(&c.Bucket, "s3-bucket", "", "S3 bucket evidence is filed in (required)")
	s.String(&c.Prefix, "s3-prefix", "evidence", "key prefix inside the bucket")
	s.String(&c.Endpoint, "s3-endpoint", "", "S3 endpoint override for S3-compatible stores (e.g. http://127.0.0.1:9000)")
	s.String(&c.Region, "s3-region", "", "S3 region (default: the AWS environment, else us-east-1)")
	s.Bool(&c.PathStyle, "s3-path-style", false, "address buckets by path, as most S3-compatible stores need")
}

// DefaultTemporalAddress is --address when it is not given: dev's default.
const DefaultTemporalAddress = "127.0.0.1:7233"

// ValidateS3 refuses unusable S3 settings for reading or writing evidence.
func ValidateS3(c S3) error {
	if c.Bucket == "" {
		return &Error{Flag: "s3-bucket", Problem: "no evidence bucket", Fix: "every page read is filed as evidence; name an S3 bucket (and --s3-endpoint for an S3-compatible store)"}
	}
	if c.Endpoint != "" && !strings.HasPrefix(c.Endpoint, "http://") && !strings.HasPrefix(c.Endpoint, "https://") {
		return &Error{Flag: "s3-endpoint", Problem: fmt.Sprintf("%q is not a URL", c.Endpoint), Fix: "e.g. http://127.0.0.1:9000"}
	}
	return nil
}

// BindWorker defines every worker flag.
func BindWorker(s *Set, w *Worker) {
	BindTemporal(s, &w.Temporal)
	BindS3(s, &w.S3)
	s.String(&w.S3.SSE, "s3-sse", "", "server-side encryption: AES256 or aws:kms")
	s.String(&w.S3.KMSKeyID, "s3-kms-key-id", "", "KMS key id when --s3-sse=aws:kms")
	s.String(&w.Chrome, "chrome", os.Getenv("CHROME_PATH"), "Chrome or Chromium executable (also $CHROME_PATH; default: discovered)")
	BindHeadlessShell(s, &w.HeadlessShell)
	s.String(&w.ProfileRoot, "profile-root", defaultProfileRoot(), "directory holding browser profiles and records")
	s.Bool(&w.NoSandbox, "no-sandbox", false, "start Chrome with --no-sandbox (always on when running as root)")
	s.Bool(&w.Headed, "headed", false, "show browser windows instead of running headless")
	s.String(&w.CDPEndpoint, "cdp-endpoint", "", "an existing Chrome's DevTools endpoint (http://host:port or ws://...) for provider \"cdp\"")
	s.String(&w.Providers, "providers", "", "rented-browser providers to enable: browserbase,kernel (keys from BROWSERBASE_API_KEY and BROWSERBASE_PROJECT_ID, KERNEL_API_KEY)")
	s.Duration(&w.Browserbase.Lifetime, "browserbase-lifetime", time.Hour, "longest a Browserbase session lives (its timeout; 1m to 6h): Browserbase ends it then even if unreleased")
	s.String(&w.Browserbase.Region, "browserbase-region", "", "Browserbase region: us-west-2, us-east-1, eu-central-1 or ap-southeast-1 (default: Browserbase's choice)")
	s.Bool(&w.Browserbase.Proxies, "browserbase-proxies", false, "route Browserbase sessions through Browserbase's proxies")
	s.Bool(&w.Browserbase.AdvancedStealth, "browserbase-advanced-stealth", false, "give stealth sessions Browserbase's advanced stealth mode (Scale plan)")
	s.Duration(&w.Kernel.IdleTimeout, "kernel-idle-timeout", 10*time.Minute, "how long Kernel keeps a browser no worker is connected to (10s to 72h); keep it above a session's longest pause")
	s.Bool(&w.Kernel.Headless, "kernel-headless", false, "use Kernel's headless image (lighter; no live view)")
	s.String(&w.PricePerMinute, "price-per-minute", "", "price of a session minute per provider, for released sessions' records: browserbase=0.002,kernel=0.0016")
	s.String(&w.SecretsFile, "secrets-file", "", "file of NAME=value lines for {{secret:NAME}} (also $DURABLE_BROWSER_SECRET_<NAME>)")
	s.String(&w.UploadDir, "upload-dir", "", "the only directory browser_upload takes files from, named relative to it (default: uploads refused)")
	s.String(&w.StateNames, "state-names", "", "named states sessions may keep: globs such as shop-*,crm (default: any); states need DURABLE_BROWSER_STATE_KEY")
	s.String(&w.StatePrefix, "state-prefix", "states", "key prefix of named states in the S3 bucket")
	s.String(&w.ProfileGrants, "profile-grants", "", "saved profiles every session may use: name1,name2:save (:save lets it save); sessions add their own grants")
	s.Duration(&w.OrphanAfter, "orphan-after", time.Hour, "release a browser no call has touched for this long (its workflow ended without releasing it); keep it above every session's idle window")
	s.Duration(&w.StopGrace, "stop-grace", 30*time.Second, "on SIGTERM or Ctrl-C: stop taking calls, let calls in flight finish for this long (a run cut short answers effect_unknown), then release every browser")
	s.Int(&w.MaxBrowsers, "max-browsers", DefaultMaxBrowsers(), "browsers this worker holds at once; a create beyond it answers browser_unavailable (retryable) so another worker takes it (0: no bound)")
	s.Int(&w.WarmBrowsers, "warm-browsers", WarmAuto, "plain local browsers kept started ahead of sessions, so a plain session's create takes one (they count against --max-browsers; 0: none; -1: under --isolation context one context per --max-browsers, within an eighth of the host's memory, and none under process)")
	s.Int(&w.MaxLaunches, "max-launches", 0, "local browsers starting at once (0: one per two cores, at least one); more creates wait for a slot, heartbeating, and each start's 30 s bound counts from its slot")
	s.Int(&w.LatencyBound, "latency-bound", 0, "stop taking new sessions from the shared queue while the p95 of this worker's calls over the last minute is over this many times its unloaded p95 (2: once it doubles; 0: never); the sessions it holds are served as before")
	s.String(&w.CPUProfile, "cpuprofile", "", "write a Go CPU profile of the worker, from its start to its stop, to this file (off unless set)")
	BindIsolation(s, &w.Isolation)
	s.Duration(&w.ReapInterval, "reap-interval", time.Minute, "how often browsers left by dead workers (sharing --profile-root) are released")
	s.String(&w.HandoffWebhook, "handoff-webhook", "", "URL that handoff notices are POSTed to (default: logged)")
	s.String(&w.HandoffWebhookSecret, "handoff-webhook-secret", "", "HMAC-SHA256 key signing webhook bodies")
	BindLiveView(s, &w.LiveView)
	s.Bool(&w.BrowserAllowPrivate, "browser-allow-private", false, "let browsers reach private and loopback addresses (never the metadata range or this worker's own services)")
	s.String(&w.DNSServer, "dns-server", "", "ip:port of the DNS server the worker's own lookups (reach guard, egress proxy, web_fetch) go to (default: the system's resolver)")
	s.String(&w.BrowserAllowHosts, "browser-allow-hosts", "", "comma-separated hosts browsers may reach whatever their address: names, *.domain wildcards or addresses (never this worker's own services)")
	s.String(&w.ApproverKeys, "approver-keys", "", "file of \"name base64-ed25519-public-key\" lines: only these people's signed decisions approve holds and answer handoffs")
	s.Bool(&w.UnsignedApprovals, "unsigned-approvals", false, "run without --approver-keys on purpose: anyone who can signal the namespace can approve and answer handoffs (silences the warning)")
	s.String(&w.LogLevel, "log-level", "info", "trace, debug, info, warn or error")
	s.String(&w.Metrics, "metrics", "", "serve Prometheus metrics on this host:port at /metrics (the Temporal SDK's and durable-browser's; see docs/operations.md)")
}

// BindHeadlessShell defines --headless-shell (worker and dev).
func BindHeadlessShell(s *Set, shell *string) {
	s.String(shell, "headless-shell", "auto", "what runs headless browsers: auto (chrome-headless-shell where installed and neither --chrome nor $CHROME_PATH names a browser: about half the CPU and memory of the full browser), off (the full browser with --headless=new) or the shell's path; headed sessions always run the full browser")
}

// BindIsolation defines --isolation (worker and dev).
func BindIsolation(s *Set, iso *string) {
	s.String(iso, "isolation", "process", "how a plain local session is kept apart from the others: process (a browser process per session) or context (a browser context per plain session in one shared browser per worker: faster to create and lighter, storage and network kept apart but one process shared; sessions with a profile, a named state, a window or a recording still get their own)")
}

// LiveView configures the live view server.
type LiveView struct {
	// Addr is where it listens (host:port); empty: no live view.
	Addr string
	// URL is the viewer's origin as people reach it (default http://Addr).
	URL string
	// FrameAncestors is the one origin that may frame the viewer (default: none).
	FrameAncestors string
	// WatchOnly drops every viewer's input on the server.
	WatchOnly bool
	// Dir keeps the viewer addresses of handoffs for `handoff list --show-url`.
	Dir string
}

// BindLiveView defines the live view flags (worker and dev).
func BindLiveView(s *Set, l *LiveView) {
	s.String(&l.Addr, "live-view", "", "serve a live view of local and cdp sessions on this host:port: a person sees the page and can take over (off unless set)")
	s.String(&l.URL, "live-view-url", "", "the live view's origin as people reach it, scheme://host:port (behind a tunnel or proxy; default http://<--live-view>)")
	s.String(&l.FrameAncestors, "live-view-frame-ancestors", "", "the one origin allowed to frame the live view, e.g. https://ops.example.com (default: none)")
	s.Bool(&l.WatchOnly, "live-view-watch-only", false, "viewers only watch: the server drops every input")
	s.String(&l.Dir, "live-view-dir", DefaultLiveViewDir(), "directory (0700) keeping handoffs' live view addresses, which durable-browser handoff list --show-url shows")
}

// DefaultLiveViewDir is where handoffs' live view addresses are kept.
func DefaultLiveViewDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return d + "/durable-browser/live-view"
	}
	return ".durable-browser/live-view"
}

// BrowserAllowHostList is --browser-allow-hosts as a list.
func (w *Worker) BrowserAllowHostList() []string {
	var out []string
	for _, h := range strings.Split(w.BrowserAllowHosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			out = append(out, h)
		}
	}
	return out
}

func defaultProfileRoot() string {
	if d, err := os.UserCacheDir(); err == nil {
		return d + "/durable-browser"
	}
	return ".durable-browser/profiles"
}

// ValidateTemporal refuses unusable Temporal settings.
func ValidateTemporal(t Temporal) error {
	if _, port, err := net.SplitHostPort(t.Address); err != nil || port == "" {
		return &Error{Flag: "address", Problem: fmt.Sprintf("%q is not host:port", t.Address), Fix: "e.g. 127.0.0.1:7233 or my-ns.a1b2c.tmprl.cloud:7233"}
	}
	if t.Namespace == "" {
		return &Error{Flag: "namespace", Problem: "empty", Fix: "name the namespace, e.g. default"}
	}
	if (t.TLSCert == "") != (t.TLSKey == "") {
		flag := "tls-key"
		if t.TLSCert == "" {
			flag = "tls-cert"
		}
		return &Error{Flag: flag, Problem: "a client certificate needs both --tls-cert and --tls-key", Fix: "give both files or neither"}
	}
	for flag, path := range map[string]string{"tls-cert": t.TLSCert, "tls-key": t.TLSKey, "tls-ca": t.TLSCA} {
		if path == "" {
			continue
		}
		if _, err := os.Stat(path); err != nil {
			return &Error{Flag: flag, Problem: fmt.Sprintf("cannot read %s", path), Fix: "point it at an existing PEM file"}
		}
	}
	if t.APIKey != "" && t.TLSCert != "" {
		return &Error{Flag: "api-key", Problem: "an API key and a client certificate were both given", Fix: "use one way to authenticate"}
	}
	return nil
}

// Validate refuses unusable worker settings, naming the flag and the fix.
func (w *Worker) Validate() error {
	if err := ValidateTemporal(w.Temporal); err != nil {
		return err
	}
	if w.DNSServer != "" {
		if _, err := netip.ParseAddrPort(w.DNSServer); err != nil {
			return &Error{Flag: "dns-server", Problem: fmt.Sprintf("%q is not an ip:port", w.DNSServer), Fix: "give the server's address and port, e.g. 10.0.0.2:53 (a name would need a lookup of its own)"}
		}
	}
	if err := ValidateS3(w.S3); err != nil {
		return err
	}
	switch w.S3.SSE {
	case "", "AES256":
	case "aws:kms":
		if w.S3.KMSKeyID == "" {
			return &Error{Flag: "s3-kms-key-id", Problem: "--s3-sse=aws:kms needs the KMS key evidence is encrypted with", Fix: "give its key id, ARN or alias (e.g. alias/evidence), or use --s3-sse=AES256"}
		}
	default:
		return &Error{Flag: "s3-sse", Problem: fmt.Sprintf("%q is not a known encryption", w.S3.SSE), Fix: "use AES256 or aws:kms"}
	}
	if w.S3.KMSKeyID != "" && w.S3.SSE != "aws:kms" {
		return &Error{Flag: "s3-kms-key-id", Problem: "a KMS key without --s3-sse=aws:kms", Fix: "add --s3-sse=aws:kms"}
	}
	if w.WarmBrowsers < WarmAuto {
		return &Error{Flag: "warm-browsers", Problem: "negative", Fix: "give 0 or more, or -1 for the size by isolation"}
	}
	if w.StopGrace < 0 {
		return &Error{Flag: "stop-grace", Problem: "negative", Fix: "give a duration such as 30s"}
	}
	if w.ProfileRoot == "" {
		return &Error{Flag: "profile-root", Problem: "empty", Fix: "name a writable directory"}
	}
	switch strings.ToLower(strings.TrimSpace(w.Isolation)) {
	case "", "process", "context":
	default:
		return &Error{Flag: "isolation", Problem: fmt.Sprintf("%q is not an isolation mode", w.Isolation), Fix: "use process or context (--isolation or $DURABLE_BROWSER_ISOLATION)"}
	}
	if w.HandoffWebhook != "" && !strings.HasPrefix(w.HandoffWebhook, "http") {
		return &Error{Flag: "handoff-webhook", Problem: "not an http(s) URL"}
	}
	if w.HandoffWebhook != "" && w.HandoffWebhookSecret == "" {
		return &Error{Flag: "handoff-webhook-secret", Problem: "webhook without a signing key", Fix: "set a secret so receivers can verify notices"}
	}
	if err := netguard.ValidateHostList(w.BrowserAllowHostList()); err != nil {
		return &Error{Flag: "browser-allow-hosts", Problem: err.Error(), Fix: "e.g. intranet.corp,*.lab.corp,10.0.0.7"}
	}
	if _, err := w.Approvers(); err != nil {
		return err
	}
	if w.SecretsFile != "" {
		if _, err := os.Stat(w.SecretsFile); err != nil {
			return &Error{Flag: "secrets-file", Problem: fmt.Sprintf("cannot read %s", w.SecretsFile)}
		}
	}
	if _, err := ParseProfileGrants(w.ProfileGrants); err != nil {
		return &Error{Flag: "profile-grants", Problem: err.Error(), Fix: "e.g. shop,mail:save"}
	}
	if _, err := w.StateNameList(); err != nil {
		return err
	}
	return CheckUploadDir(w.UploadDir, map[string]string{"profile-root": w.ProfileRoot, "secrets-file": w.SecretsFile})
}

// StateNameList reads --state-names: comma-separated path.Match globs.
func (w Worker) StateNameList() ([]string, error) {
	var out []string
	for _, g := range strings.Split(w.StateNames, ",") {
		if g = strings.TrimSpace(g); g == "" {
			continue
		}
		if _, err := path.Match(g, ""); err != nil {
			return nil, &Error{Flag: "state-names", Problem: fmt.Sprintf("%q is not a glob", g), Fix: "e.g. shop-*,crm"}
		}
		out = append(out, g)
	}
	return out, nil
}

// ParseProfileGrants reads "name1,name2:save": each name may be used as a
// copy, and with ":save" also saved. Empty gives no grants.
func ParseProfileGrants(s string) ([]contract.Profile, error) {
	var out []contract.Profile
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, mode, hasMode := strings.Cut(item, ":")
		p := contract.Profile{Name: name}
		if hasMode {
			if mode != "save" {
				return nil, fmt.Errorf("%q: the only mode is :save", item)
			}
			p.Save = true
		}
		if err := p.Validate(); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// CheckUploadDir refuses an upload directory that does not exist, or that
// overlaps a path no tool may read: it may neither contain nor lie inside
// one of protected (flag name -> path; empty paths are skipped). Paths are
// compared after resolving symlinks.
func CheckUploadDir(dir string, protected map[string]string) error {
	if dir == "" {
		return nil
	}
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return &Error{Flag: "upload-dir", Problem: fmt.Sprintf("%s is not a directory", dir), Fix: "create it and put only the files a session may upload in it"}
	}
	up := resolvePath(dir)
	for _, flag := range sortedKeys(protected) {
		p := protected[flag]
		if p == "" {
			continue
		}
		rp := resolvePath(p)
		if within(up, rp) || within(rp, up) {
			return &Error{Flag: "upload-dir", Problem: fmt.Sprintf("%s overlaps --%s (%s); a model could upload what lives there", dir, flag, p),
				Fix: "use a separate directory holding only the files sessions may upload"}
		}
	}
	return nil
}

// resolvePath makes p absolute and resolves symlinks in the longest part of
// it that exists, so a path not yet created compares correctly too.
func resolvePath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	rest := ""
	for cur := abs; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// within says p is dir or lies inside it (both absolute and clean).
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// WarmAuto is --warm-browsers' default: sized by the isolation (Worker.Warm).
const WarmAuto = -1

// WarmContextMiB is what an idle warm context costs (Pss: its renderer,
// and its share of the shared browser's and GPU processes;
// docs/benchmarks.md, "Sessions as browser contexts").
const WarmContextMiB = 23

// WarmMemoryShare is the share of the host's memory the automatic pool of
// warm contexts may take: an eighth.
const WarmMemoryShare = 8

// Warm is how many warm browsers the worker keeps: --warm-browsers when
// set (0 or more); else, when plain sessions are contexts of a shared
// browser, one per --max-browsers (the largest burst of creates the worker
// takes; with no bound, DefaultMaxBrowsers), at most what fits in
// 1/WarmMemoryShare of memTotal at WarmContextMiB each (memTotal 0:
// unknown, no such cap); else none (a warm browser of its own costs a
// Chrome's memory, about 190 MiB).
func (w Worker) Warm(sharesBrowsers bool, memTotal int64) int {
	if w.WarmBrowsers >= 0 {
		return w.WarmBrowsers
	}
	if !sharesBrowsers {
		return 0
	}
	n := w.MaxBrowsers
	if n <= 0 {
		n = DefaultMaxBrowsers()
	}
	if memTotal > 0 {
		n = min(n, int(memTotal/WarmMemoryShare/(WarmContextMiB<<20)))
	}
	return max(n, 0)
}

// DefaultMaxBrowsers is --max-browsers' default: two browsers per core, at
// least 2 (a headless Chromium with a busy page wants about half a core).
func DefaultMaxBrowsers() int { return max(2, 2*runtime.NumCPU()) }

// Approvers reads --approver-keys (none when it is not set).
func (w *Worker) Approvers() (contract.Approvers, error) {
	if w.ApproverKeys == "" {
		return nil, nil
	}
	if w.UnsignedApprovals {
		return nil, &Error{Flag: "unsigned-approvals", Problem: "given with --approver-keys", Fix: "use one: signed decisions (--approver-keys) or unsigned ones"}
	}
	f, err := os.Open(w.ApproverKeys)
	if err != nil {
		return nil, &Error{Flag: "approver-keys", Problem: fmt.Sprintf("cannot read %s", w.ApproverKeys), Fix: "point it at a file of \"name base64-public-key\" lines (durable-browser approvals keygen prints one)"}
	}
	defer f.Close()
	keys, err := contract.ParseApprovers(f)
	if err != nil {
		return nil, &Error{Flag: "approver-keys", Problem: fmt.Sprintf("%s: %v", w.ApproverKeys, err)}
	}
	if len(keys) == 0 {
		return nil, &Error{Flag: "approver-keys", Problem: fmt.Sprintf("%s lists no approver", w.ApproverKeys), Fix: "add a line per approver, or leave the flag out to run unsigned"}
	}
	return keys, nil
}

// ParsePrices reads "provider=price,..." (a price per session minute).
func ParsePrices(s string) (map[string]float64, error) {
	out := map[string]float64{}
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		name, val, ok := strings.Cut(part, "=")
		var f float64
		if _, err := fmt.Sscanf(strings.TrimSpace(val), "%g", &f); !ok || err != nil || f < 0 || strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("%q is not provider=price", part)
		}
		out[strings.ToLower(strings.TrimSpace(name))] = f
	}
	return out, nil
}
