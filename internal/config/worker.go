package config

import (
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/durable-browser/durable-browser/contract"
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

	Chrome      string
	ProfileRoot string
	NoSandbox   bool
	Headed      bool
	// CDPEndpoint, when set, makes "cdp" sessions attach to that Chrome.
	CDPEndpoint string

	SecretsFile string
	// ReapInterval is how often browsers no live worker holds are released.
	ReapInterval time.Duration
	// OrphanAfter releases a browser no call has touched for this long.
	OrphanAfter time.Duration

	HandoffWebhook       string
	HandoffWebhookSecret string

	// ApproverKeys is a file of "name base64-ed25519-public-key" lines: the
	// people whose signed decisions sessions act on.
	ApproverKeys string
	// UnsignedApprovals says running without approver keys is intended
	// (it silences the warning).
	UnsignedApprovals bool

	LogLevel string
}

// BindTemporal defines the flags for reaching Temporal.
func BindTemporal(s *Set, t *Temporal) {
	s.String(&t.Address, "address", "127.0.0.1:7233", "Temporal frontend host:port")
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
	s.String(&w.ProfileRoot, "profile-root", defaultProfileRoot(), "directory holding browser profiles and records")
	s.Bool(&w.NoSandbox, "no-sandbox", false, "start Chrome with --no-sandbox (always on when running as root)")
	s.Bool(&w.Headed, "headed", false, "show browser windows instead of running headless")
	s.String(&w.CDPEndpoint, "cdp-endpoint", "", "an existing Chrome's DevTools endpoint (http://host:port or ws://...) for provider \"cdp\"")
	s.String(&w.SecretsFile, "secrets-file", "", "file of NAME=value lines for {{secret:NAME}} (also $DURABLE_BROWSER_SECRET_<NAME>)")
	s.Duration(&w.OrphanAfter, "orphan-after", time.Hour, "release a browser no call has touched for this long (its workflow ended without releasing it); keep it above every session's idle window")
	s.Duration(&w.ReapInterval, "reap-interval", time.Minute, "how often browsers left by dead workers (sharing --profile-root) are released")
	s.String(&w.HandoffWebhook, "handoff-webhook", "", "URL that handoff notices are POSTed to (default: logged)")
	s.String(&w.HandoffWebhookSecret, "handoff-webhook-secret", "", "HMAC-SHA256 key signing webhook bodies")
	s.String(&w.ApproverKeys, "approver-keys", "", "file of \"name base64-ed25519-public-key\" lines: only these people's signed decisions approve holds and answer handoffs")
	s.Bool(&w.UnsignedApprovals, "unsigned-approvals", false, "run without --approver-keys on purpose: anyone who can signal the namespace can approve and answer handoffs (silences the warning)")
	s.String(&w.LogLevel, "log-level", "info", "trace, debug, info, warn or error")
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
	if err := ValidateS3(w.S3); err != nil {
		return err
	}
	switch w.S3.SSE {
	case "", "AES256":
	case "aws:kms":
	default:
		return &Error{Flag: "s3-sse", Problem: fmt.Sprintf("%q is not a known encryption", w.S3.SSE), Fix: "use AES256 or aws:kms"}
	}
	if w.S3.KMSKeyID != "" && w.S3.SSE != "aws:kms" {
		return &Error{Flag: "s3-kms-key-id", Problem: "a KMS key without --s3-sse=aws:kms", Fix: "add --s3-sse=aws:kms"}
	}
	if w.ProfileRoot == "" {
		return &Error{Flag: "profile-root", Problem: "empty", Fix: "name a writable directory"}
	}
	if w.HandoffWebhook != "" && !strings.HasPrefix(w.HandoffWebhook, "http") {
		return &Error{Flag: "handoff-webhook", Problem: "not an http(s) URL"}
	}
	if w.HandoffWebhook != "" && w.HandoffWebhookSecret == "" {
		return &Error{Flag: "handoff-webhook-secret", Problem: "webhook without a signing key", Fix: "set a secret so receivers can verify notices"}
	}
	if _, err := w.Approvers(); err != nil {
		return err
	}
	if w.SecretsFile != "" {
		if _, err := os.Stat(w.SecretsFile); err != nil {
			return &Error{Flag: "secrets-file", Problem: fmt.Sprintf("cannot read %s", w.SecretsFile)}
		}
	}
	return nil
}

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
