package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/devstack"
	"github.com/durable-browser/durable-browser/internal/evidence"
)

// runCLI runs one command line in-process with the given environment.
func runCLI(t *testing.T, envv map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cliEnv{Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return envv[k] }}
	code = run(context.Background(), env, args)
	return code, out.String(), errb.String()
}

func TestEvidenceGetRefusals(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no verb", []string{"evidence"}, 2, "evidence get"},
		{"unknown verb", []string{"evidence", "put", "k"}, 2, `unknown evidence verb "put"`},
		{"help", []string{"evidence", "get", "--help"}, 0, "--receipt"},
		{"no key", []string{"evidence", "get", "--s3-bucket", "b"}, 1, "want exactly one KEY"},
		{"two keys", []string{"evidence", "get", "--s3-bucket", "b", "k1", "k2"}, 1, "want exactly one KEY"},
		{"no bucket and no dev stack", []string{"evidence", "get", "--s3-endpoint", "http://127.0.0.1:1", "--timeout", "5s", "k/a/b"}, 1, "dev stack's S3 at http://127.0.0.1:1 (no --s3-bucket was named"},
		{"bad endpoint", []string{"evidence", "get", "--s3-bucket", "b", "--s3-endpoint", "127.0.0.1:1", "k"}, 1, "--s3-endpoint"},
		{"bucket disagrees", []string{"evidence", "get", "--s3-bucket", "b", "s3://other/k"}, 1, "differs from the bucket"},
		{"bad s3 url", []string{"evidence", "get", "s3://only-bucket"}, 1, "is not s3://bucket/key"},
		{"bad timeout", []string{"evidence", "get", "--s3-bucket", "b", "--timeout", "0s", "k"}, 1, "--timeout"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, nil, c.args...)
			if code != c.code || !strings.Contains(stderr, c.want) {
				t.Fatalf("exit %d (want %d), stderr:\n%s\nwant it to contain %q", code, c.code, stderr, c.want)
			}
		})
	}
}

func TestParseS3URL(t *testing.T) {
	cases := []struct {
		in, bucket, key string
		ok              bool
	}{
		{"s3://b/k", "b", "k", true},
		{"s3://b/evidence/wf/tag/1-screenshot-0123456789ab.png", "b", "evidence/wf/tag/1-screenshot-0123456789ab.png", true},
		{"s3://b", "", "", false},
		{"s3://b/", "", "", false},
		{"s3:///k", "", "", false},
	}
	for _, c := range cases {
		b, k, err := parseS3URL(c.in)
		if (err == nil) != c.ok || b != c.bucket || k != c.key {
			t.Errorf("parseS3URL(%q) = %q, %q, %v", c.in, b, k, err)
		}
	}
}

func FuzzParseS3URL(f *testing.F) {
	for _, s := range []string{"s3://b/k", "s3://b", "s3://b/a/../c", "s3://%zz/k", "s3://b/k?x=1#y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, k, err := parseS3URL(s)
		if err == nil && (b == "" || k == "" || strings.HasPrefix(k, "/")) {
			t.Fatalf("parseS3URL(%q) accepted bucket %q key %q", s, b, k)
		}
	})
}

// TestEvidenceGet files a body beside its receipt on a real loopback S3
// server and reads it back through the verb in every key spelling.
func TestEvidenceGet(t *testing.T) {
	if _, err := devstack.FindVersitygw(""); err != nil {
		t.Fatalf("versitygw not installed: run `make tools` or `%s`", devstack.VersitygwInstall)
	}
	ctx := context.Background()
	port, err := devstack.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	s3dir := t.TempDir()
	srv, err := devstack.StartS3(ctx, devstack.S3Options{Address: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Dir: s3dir, Bucket: "evb"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	store, err := evidence.NewS3(ctx, evidence.S3Options{
		Bucket: "evb", Prefix: "pre", Endpoint: srv.Endpoint(), PathStyle: true, Region: "us-east-1",
		AccessKey: srv.AccessKey(), SecretKey: srv.SecretKey(),
	})
	if err != nil {
		t.Fatal(err)
	}
	body := []byte("# Filed page\n\nhello from the evidence test\n")
	cc, err := evidence.File(ctx, store, evidence.Filing{
		WorkflowID: "wf-1", SessionTag: "wf-1-1", CallID: "7", Tool: "browser_read", Ext: "md",
		ContentType: "text/markdown", Body: body,
		Receipt: contract.Receipt{Status: "ok", FinalURL: "http://127.0.0.1/page", Title: "Page", Time: time.Unix(1700000000, 0)},
	})
	if err != nil {
		t.Fatal(err)
	}
	// The AWS SDK reads its credentials from the process environment.
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey())
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey())
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	awsEnv := map[string]string{
		"AWS_ACCESS_KEY_ID": srv.AccessKey(), "AWS_SECRET_ACCESS_KEY": srv.SecretKey(),
		// Flags also come from the environment.
		"DURABLE_BROWSER_S3_ENDPOINT": srv.Endpoint(),
	}
	s3flags := []string{"--s3-bucket", "evb", "--s3-prefix", "pre", "--s3-path-style", "--s3-region", "us-east-1"}
	get := func(extra ...string) (int, string, string) {
		return runCLI(t, awsEnv, append(append([]string{"evidence", "get"}, s3flags...), extra...)...)
	}

	for _, key := range []string{cc.Key, "pre/" + cc.Key} {
		code, out, stderr := get(key)
		if code != 0 || out != string(body) {
			t.Fatalf("get %s: exit %d, stdout %q, stderr %s", key, code, out, stderr)
		}
	}
	// A receipt key prints the receipt.
	if code, out, stderr := get(cc.ReceiptKey); code != 0 || !strings.Contains(out, `"body_key": "`+cc.Key+`"`) {
		t.Fatalf("get the receipt key: exit %d, stdout %q, stderr %s", code, out, stderr)
	}
	// A binary body is not written to a terminal unasked; -o - writes it.
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	pc, err := evidence.File(ctx, store, evidence.Filing{
		WorkflowID: "wf-1", SessionTag: "wf-1-1", CallID: "8", Tool: "screenshot", Ext: "png", ContentType: "image/png", Body: png,
		Receipt: contract.Receipt{Status: "ok", Time: time.Unix(1700000000, 0)},
	})
	if err != nil {
		t.Fatal(err)
	}
	tty := func(extra ...string) (int, string, string) {
		var out, errb bytes.Buffer
		env := &cliEnv{Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return awsEnv[k] }, StdoutTerminal: true}
		code := run(context.Background(), env, append(append([]string{"evidence", "get"}, s3flags...), extra...))
		return code, out.String(), errb.String()
	}
	if code, out, stderr := tty(pc.Key); code != 1 || out != "" || !strings.Contains(stderr, "image/png, not written to the terminal: give -o FILE") {
		t.Fatalf("a PNG to a terminal: exit %d, stdout %q, stderr %s", code, out, stderr)
	}
	if code, out, stderr := tty("-o", "-", pc.Key); code != 0 || out != string(png) {
		t.Fatalf("a PNG to a terminal with -o -: exit %d, stdout %q, stderr %s", code, out, stderr)
	}
	if code, out, stderr := tty(cc.Key); code != 0 || out != string(body) {
		t.Fatalf("markdown to a terminal: exit %d, stdout %q, stderr %s", code, out, stderr)
	}
	code, out, stderr := runCLI(t, awsEnv, "evidence", "get", "--s3-path-style", "--s3-region", "us-east-1", "s3://evb/pre/"+cc.Key)
	if code != 0 || out != string(body) {
		t.Fatalf("get s3:// URL: exit %d, stdout %q, stderr %s", code, out, stderr)
	}

	// Flags after the key, and -o.
	file := filepath.Join(t.TempDir(), "body.md")
	if code, _, stderr := get(cc.Key, "-o", file); code != 0 {
		t.Fatalf("get -o: exit %d: %s", code, stderr)
	}
	if got, err := os.ReadFile(file); err != nil || !bytes.Equal(got, body) {
		t.Fatalf("-o file holds %q, %v", got, err)
	}

	code, out, stderr = get("--receipt", cc.Key)
	if code != 0 {
		t.Fatalf("--receipt: exit %d: %s", code, stderr)
	}
	var r contract.Receipt
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("--receipt printed %q: %v", out, err)
	}
	if r.SHA256 != evidence.SHA256Hex(body) || r.BodyKey != cc.Key || r.Tool != "browser_read" || r.Title != "Page" {
		t.Fatalf("receipt: %+v", r)
	}

	// Missing: exit 1, naming the key and the flags to check.
	code, out, stderr = get("wf-1/wf-1-1/8-browser_read-0123456789ab.md")
	if code != 1 || out != "" || !strings.Contains(stderr, "no evidence at s3://evb/pre/wf-1/wf-1-1/8-browser_read") || !strings.Contains(stderr, "--s3-prefix") {
		t.Fatalf("missing key: exit %d, stdout %q, stderr %s", code, out, stderr)
	}

	// Tampered: the object replaced with other bytes (its recorded hash
	// carried along) is refused, and -o is not written.
	_, err = srv.Client().PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String("evb"), Key: aws.String("pre/" + cc.Key), Body: bytes.NewReader([]byte("forged")),
		Metadata: map[string]string{"sha256": evidence.SHA256Hex([]byte("forged"))},
	})
	if err != nil {
		t.Fatal(err)
	}
	file2 := filepath.Join(t.TempDir(), "forged.md")
	code, out, stderr = get("-o", file2, cc.Key)
	if code != 1 || out != "" || !strings.Contains(stderr, "fails verification") && !strings.Contains(stderr, "refusing") {
		t.Fatalf("tampered: exit %d, stdout %q, stderr %s", code, out, stderr)
	}
	if _, err := os.Stat(file2); !os.IsNotExist(err) {
		t.Fatalf("-o written for a tampered body: %v", err)
	}

	// Tampered on the server's disk (the store's own checksum now stale):
	// the message says the body does not match the hash recorded at filing.
	onDisk := filepath.Join(s3dir, "evb", "pre", filepath.FromSlash(pc.Key))
	if err := os.WriteFile(onDisk, []byte("\x89PNG forged on disk"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = get("-o", filepath.Join(t.TempDir(), "x.png"), pc.Key)
	if code != 1 || !strings.Contains(stderr, "does not match the SHA-256 recorded when it was filed") || strings.Contains(stderr, "checksum did not match") {
		t.Fatalf("tampered on disk: exit %d, stderr %s", code, stderr)
	}
}

// Without credentials, evidence get says which settings it needs, and asks
// no address off the machine first: the instance metadata service (here a
// loopback recorder standing in for 169.254.169.254) is asked only when
// AWS_EC2_METADATA_DISABLED=false says so.
func TestEvidenceGetWithoutCredentials(t *testing.T) {
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"} {
		t.Setenv(k, "")
	}
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	var asked atomic.Int32
	imds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		http.Error(w, "no role here", http.StatusNotFound)
	}))
	defer imds.Close()
	t.Setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.URL)
	for _, disabled := range []string{"", "false"} {
		t.Run("AWS_EC2_METADATA_DISABLED="+disabled, func(t *testing.T) {
			t.Setenv("AWS_EC2_METADATA_DISABLED", disabled)
			asked.Store(0)
			code, _, stderr := runCLI(t, map[string]string{"AWS_EC2_METADATA_DISABLED": disabled}, "evidence", "get", "--s3-bucket", "b", "--s3-endpoint", "http://127.0.0.1:1", "--s3-region", "us-east-1", "wf/wf-1/1-screenshot-0123456789ab.png")
			if code != 1 || !strings.Contains(stderr, "no S3 credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY") || !strings.Contains(stderr, "name no bucket") {
				t.Fatalf("no credentials: exit %d, stderr %s", code, stderr)
			}
			switch disabled {
			case "":
				if n := asked.Load(); n != 0 {
					t.Fatalf("the instance metadata service was asked %d times; a person's command must say what to set first", n)
				}
				if !strings.Contains(stderr, "AWS_EC2_METADATA_DISABLED=false") {
					t.Fatalf("the refusal does not name the way to an instance role: %s", stderr)
				}
			case "false":
				if asked.Load() == 0 {
					t.Fatal("AWS_EC2_METADATA_DISABLED=false did not let the command ask the instance metadata service")
				}
			}
		})
	}
}
