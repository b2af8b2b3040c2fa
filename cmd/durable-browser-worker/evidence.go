package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/durable-browser/durable-browser/cmd/internal/cli"
	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/config"
	"github.com/durable-browser/durable-browser/internal/evidence"
)

const evidenceUsage = `Usage: durable-browser evidence get [flags] KEY

Verbs:
  get   fetch a filed body (or its receipt) by key, verified against its hash

Run ` + "`durable-browser evidence get --help`" + ` for its flags. See docs/evidence.md.
`

func runEvidence(ctx context.Context, env *cliEnv, args []string) error {
	return cli.Subverbs(ctx, env, args, "evidence", evidenceUsage, "`durable-browser evidence get KEY`",
		map[string]cli.Verb{"get": runEvidenceGet})
}

const evidenceGetUsage = `Usage: durable-browser evidence get [flags] KEY

Fetches a filed body by key from S3 and verifies it against the SHA-256
recorded when it was filed, the hash its key embeds and its receipt's hash,
then writes it to stdout (or -o FILE). With --receipt, or given a receipt key
(evidence.receipt_key), it prints the receipt (tool, URLs, title, hash,
session, workflow and activity ids) instead. A binary body (an image, a
download) is not written to a terminal: give -o FILE, or -o - to write it
there anyway. A missing key or a body that fails verification exits 1 and
writes nothing.

KEY is a result's evidence.key or evidence.receipt_key (relative to
--s3-prefix), the full object key, or s3://bucket/object-key.
Credentials come from the standard AWS environment (AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY, AWS_PROFILE, ...).

With no bucket named (--s3-bucket, DURABLE_BROWSER_S3_BUCKET or an s3://
KEY) it reads the local ` + "`durable-browser dev`" + ` stack's S3 (http://127.0.0.1:7070,
bucket evidence, its credentials), as ` + "`call`" + ` finds its Temporal; the S3 flags
given still apply (--s3-endpoint for dev on another port).

Examples:
  durable-browser evidence get -o shot.png demo/demo-1/3-screenshot-0a1b2c3d4e5f.png   # after make run
  durable-browser evidence get --receipt demo/demo-1/3-screenshot-0a1b2c3d4e5f.png
  durable-browser evidence get --s3-bucket my-evidence s3://my-evidence/evidence/wf/tag/4-browser_read-0a1b2c3d4e5f.md

Flags:
`

// evidenceGet is what `evidence get` was asked for.
type evidenceGet struct {
	s3      config.S3
	out     string
	receipt bool
	dev     bool
	timeout time.Duration
}

func runEvidenceGet(ctx context.Context, env *cliEnv, args []string) error {
	fs := cli.Flags("evidence get", env, evidenceGetUsage)
	var g evidenceGet
	config.BindS3(fs, &g.s3)
	fs.StringVar(&g.out, "o", "", "write to this file instead of stdout (written only once verified); - is stdout, even a terminal")
	fs.BoolVar(&g.receipt, "receipt", false, "print the receipt JSON instead of the body (a receipt key prints it anyway)")
	fs.Duration(&g.timeout, "timeout", 2*time.Minute, "give up after this long")
	key, err := parseInterspersed(fs, args, "KEY")
	if err != nil {
		return err
	}
	// Like `call` finding Temporal at 127.0.0.1:7233: with no bucket named,
	// the evidence is the local dev stack's.
	if g.s3.Bucket == "" && !strings.HasPrefix(key, "s3://") {
		g.dev = true
		devDefaults(&g.s3, fs)
	}
	var objectKey bool
	if strings.HasPrefix(key, "s3://") {
		bucket, k, err := parseS3URL(key)
		if err != nil {
			return err
		}
		if g.s3.Bucket != "" && g.s3.Bucket != bucket {
			return &config.Error{Flag: "s3-bucket", Problem: fmt.Sprintf("%q differs from the bucket in %s", g.s3.Bucket, key), Fix: "drop --s3-bucket or give a key in that bucket"}
		}
		g.s3.Bucket, key, objectKey = bucket, k, true
	}
	// A key no filing could have made is refused as it was given, before
	// any store is assumed or asked.
	if err := evidence.CheckKey(key); err != nil {
		return err
	}
	if err := config.ValidateS3(g.s3); err != nil {
		return err
	}
	if g.timeout <= 0 {
		return &config.Error{Flag: "timeout", Problem: "must be positive", Fix: "e.g. 2m"}
	}
	ctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()

	body, rec, err := getEvidence(ctx, env, g, key, objectKey)
	if err != nil {
		return err
	}
	out := body
	if strings.HasSuffix(key, evidence.ReceiptSuffix) {
		g.receipt = true
	}
	if g.receipt {
		if rec == nil {
			return fmt.Errorf("%s has no receipt beside it (its filing was interrupted before the receipt was written); the body itself verified: fetch it without --receipt", key)
		}
		// The receipt holds a page's URL and title: written as every
		// operator verb's JSON is (cli.PrintJSON).
		var b bytes.Buffer
		if err := cli.PrintJSON(&b, rec); err != nil {
			return err
		}
		out = b.Bytes()
	}
	if g.out == "" && env.StdoutTerminal && !g.receipt && !printable(out) {
		what := "binary"
		if rec != nil && rec.ContentType != "" {
			what = rec.ContentType
		}
		return fmt.Errorf("the body of %s is %d bytes of %s, not written to the terminal: give -o FILE (or -o - to write it here anyway)", key, len(out), what)
	}
	if g.out == "" || g.out == "-" {
		_, err := env.Stdout.Write(out)
		return err
	}
	return writeFileAtomic(g.out, out)
}

// getEvidence reads key and verifies it. A filed key relative to the prefix
// has three segments (<workflow id>/<session tag>/<name>) and receipts name
// their body that way, so a longer key, or an s3:// object key, is split into
// the prefix it was filed under and that relative key.
func getEvidence(ctx context.Context, env *cliEnv, g evidenceGet, key string, objectKey bool) ([]byte, *contract.Receipt, error) {
	prefix := strings.Trim(g.s3.Prefix, "/")
	if segs := strings.Split(key, "/"); len(segs) > 3 {
		prefix, key = strings.Join(segs[:len(segs)-3], "/"), strings.Join(segs[len(segs)-3:], "/")
	} else if objectKey {
		prefix = ""
	}
	store, err := openS3(ctx, env, g.s3, prefix, g.dev, "read")
	if err != nil {
		return nil, nil, err
	}
	body, rec, err := evidence.GetVerified(ctx, store, key)
	switch {
	case errors.Is(err, evidence.ErrNotFound):
		return nil, nil, fmt.Errorf("no evidence at s3://%s/%s: use a result's evidence.key, and check --s3-bucket and --s3-prefix", g.s3.Bucket, store.ObjectKey(key))
	case errors.Is(err, evidence.ErrHashMismatch):
		return nil, nil, fmt.Errorf("refusing %s: %w", key, err)
	case err != nil && g.dev:
		return nil, nil, fmt.Errorf("reading %s from the dev stack's S3 at %s (no --s3-bucket was named, so `durable-browser dev` on this machine is assumed): %w; start it (`make run`), or name the bucket with --s3-bucket and its store with --s3-endpoint", key, g.s3.Endpoint, err)
	case err != nil:
		return nil, nil, err
	}
	return body, rec, nil
}

// printable reports whether b is text a terminal shows as such: UTF-8 with
// no control bytes but tab, newline, carriage return and form feed.
func printable(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, c := range b {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' || c == 0x7f {
			return false
		}
	}
	return true
}

// parseInterspersed parses flags given before or after the one positional
// argument (named what in the refusal), as `evidence get KEY -o FILE` reads
// naturally.
func parseInterspersed(fs *config.Set, args []string, what string) (string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return "", err
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(pos) != 1 {
		fs.Usage()
		return "", fmt.Errorf("want exactly one %s, got %d arguments", what, len(pos))
	}
	return pos[0], nil
}

// openS3 opens the bucket c names, under prefix, with the dev stack's keys
// when dev and no AWS key is set, and checks that there are credentials:
// without them the verb says what to set (can: what they must allow).
func openS3(ctx context.Context, env *cliEnv, c config.S3, prefix string, dev bool, can string) (*evidence.S3Store, error) {
	// A person's command asks no address off the machine for credentials
	// unless told to: the instance metadata service is left out of the
	// chain unless AWS_EC2_METADATA_DISABLED=false (an EC2 instance's role).
	imdsAsked := env.Getenv("AWS_EC2_METADATA_DISABLED") == "false"
	o := evidence.S3Options{Bucket: c.Bucket, Prefix: prefix, Endpoint: c.Endpoint, PathStyle: c.PathStyle, Region: c.Region,
		NoInstanceMetadata: !imdsAsked}
	if dev && env.Getenv("AWS_ACCESS_KEY_ID") == "" {
		o.AccessKey, o.SecretKey = config.DevS3AccessKey, config.DevS3SecretKey
	}
	store, err := evidence.NewS3(ctx, o)
	if err != nil {
		return nil, err
	}
	if err := store.CheckCredentials(ctx); err != nil {
		hint := ""
		if !imdsAsked {
			hint = "; on an EC2 instance with a role, AWS_EC2_METADATA_DISABLED=false lets it ask the instance metadata service"
		}
		return nil, fmt.Errorf("%w: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE) to credentials that can %s s3://%s, or name no bucket to use `durable-browser dev` on this machine%s", evidence.ErrNoCredentials, can, c.Bucket, hint)
	}
	return store, nil
}

// devDefaults points an unset S3 configuration at `durable-browser dev`'s
// loopback server.
func devDefaults(c *config.S3, fs *config.Set) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if c.Bucket == "" {
		c.Bucket = config.DevS3Bucket
	}
	if c.Endpoint == "" {
		c.Endpoint = "http://127.0.0.1:7070"
	}
	if !set["s3-path-style"] {
		c.PathStyle = true
	}
	if c.Region == "" {
		c.Region = "us-east-1"
	}
}

// parseS3URL splits s3://bucket/key.
func parseS3URL(s string) (bucket, key string, err error) {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || strings.TrimPrefix(u.Path, "/") == "" {
		return "", "", fmt.Errorf("%q is not s3://bucket/key", s)
	}
	return u.Host, strings.TrimPrefix(u.Path, "/"), nil
}

// writeFileAtomic writes b to path through a temporary file in the same
// directory, so a reader never sees a partial body.
func writeFileAtomic(path string, b []byte) error {
	tmp, err := tempBeside(path, b)
	if err == nil {
		if err = os.Rename(tmp, path); err != nil {
			_ = os.Remove(tmp)
		}
	}
	if err != nil {
		return fmt.Errorf("-o %s: %w", path, err)
	}
	return nil
}

// tempBeside writes b (mode 0644) to a new hidden file in path's directory
// and returns its name, for a rename to path; on failure nothing is left.
func tempBeside(path string, b []byte) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	_, werr := f.Write(b)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp, 0o644)
	}
	if werr != nil {
		_ = os.Remove(tmp)
		return "", werr
	}
	return tmp, nil
}
