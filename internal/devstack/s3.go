package devstack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/build"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/rs/zerolog"

	"github.com/durable-browser/durable-browser/internal/config"
)

// VersitygwInstall is the command that installs the S3 gateway the dev stack runs.
const VersitygwInstall = "go install github.com/versity/versitygw/cmd/versitygw@v1.8.0"

// ErrVersitygwMissing is matched by *VersitygwMissingError.
var ErrVersitygwMissing = errors.New("versitygw not installed")

// VersitygwMissingError says the versitygw binary was not found.
type VersitygwMissingError struct {
	Looked []string // where we looked
}

func (e *VersitygwMissingError) Error() string {
	return fmt.Sprintf("versitygw (the loopback S3 server) was not found (looked for %s): run `make tools` or `%s`", strings.Join(e.Looked, ", "), VersitygwInstall)
}

// Is makes errors.Is(err, ErrVersitygwMissing) true.
func (e *VersitygwMissingError) Is(target error) bool { return target == ErrVersitygwMissing }

// S3Options configures the loopback S3 server.
type S3Options struct {
	// Binary is the versitygw executable; default: versitygw on PATH, else
	// in $GOBIN or $(go env GOPATH)/bin.
	Binary string
	// Address is a loopback host:port, e.g. 127.0.0.1:7070.
	Address string
	// Dir holds the buckets (one directory each); created when missing.
	Dir string
	// AccessKey and SecretKey are the root credentials; defaults suit a
	// loopback dev server only.
	AccessKey, SecretKey string
	// Bucket is created when missing; default "evidence".
	Bucket string
	// StartTimeout bounds the wait for the server to answer; default 20s.
	StartTimeout time.Duration
	Logger       zerolog.Logger
}

// Dev defaults for S3Options. They protect nothing: the server only listens
// on loopback.
const (
	DefaultS3AccessKey = config.DevS3AccessKey
	DefaultS3SecretKey = config.DevS3SecretKey
	DefaultS3Bucket    = config.DevS3Bucket
)

// S3 is a running versitygw child process serving S3 over a directory.
type S3 struct {
	cmd      *exec.Cmd
	endpoint string
	bucket   string
	access   string
	secret   string
	log      zerolog.Logger

	done    chan struct{} // closed when the child has exited
	waitErr error
	stop    sync.Once
	stopErr error
	out     *tailWriter
}

// Endpoint is the server's URL, e.g. http://127.0.0.1:7070.
func (s *S3) Endpoint() string { return s.endpoint }

// Bucket is the bucket StartS3 ensured.
func (s *S3) Bucket() string { return s.bucket }

// AccessKey is the root access key.
func (s *S3) AccessKey() string { return s.access }

// SecretKey is the root secret key.
func (s *S3) SecretKey() string { return s.secret }

// PID is the child's process id.
func (s *S3) PID() int { return s.cmd.Process.Pid }

// FindVersitygw resolves the versitygw binary: binary if given (a path or a
// name on PATH), else versitygw on PATH, in $GOBIN, or in GOPATH/bin.
func FindVersitygw(binary string) (string, error) {
	var candidates []string
	if binary != "" {
		candidates = []string{binary}
	} else {
		candidates = []string{"versitygw"}
		if gobin := os.Getenv("GOBIN"); gobin != "" {
			candidates = append(candidates, filepath.Join(gobin, "versitygw"))
		}
		// build.Default.GOPATH is what `go env GOPATH` prints, without running go.
		for _, p := range filepath.SplitList(build.Default.GOPATH) {
			if p != "" {
				candidates = append(candidates, filepath.Join(p, "bin", "versitygw"))
			}
		}
	}
	for _, c := range candidates {
		if p, err := exec.LookPath(c); err == nil {
			return p, nil
		}
	}
	looked := append([]string(nil), candidates...)
	if binary == "" {
		looked[0] = "versitygw on PATH"
	}
	return "", &VersitygwMissingError{Looked: looked}
}

// StartS3 starts versitygw serving S3 on o.Address over o.Dir, waits until it
// answers, and creates the bucket when missing. The child is in its own
// process group and is sent SIGTERM if this process dies (Linux), so nothing
// is left behind; call Stop when done.
func StartS3(ctx context.Context, o S3Options) (*S3, error) {
	if o.AccessKey == "" && o.SecretKey == "" {
		o.AccessKey, o.SecretKey = DefaultS3AccessKey, DefaultS3SecretKey
	}
	if o.AccessKey == "" || o.SecretKey == "" {
		return nil, errors.New("S3 server needs both an access key and a secret key (or neither, for the dev defaults)")
	}
	if o.Bucket == "" {
		o.Bucket = DefaultS3Bucket
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 20 * time.Second
	}
	if o.Dir == "" {
		return nil, errors.New("S3 server needs a directory to keep buckets in (S3Options.Dir)")
	}
	host, _, err := net.SplitHostPort(o.Address)
	if err != nil {
		return nil, fmt.Errorf("S3 address %q: %w (want a loopback host:port, e.g. 127.0.0.1:7070)", o.Address, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("S3 address %q is not loopback: the dev S3 server uses fixed credentials, so it only listens on 127.0.0.1 or ::1", o.Address)
	}
	bin, err := FindVersitygw(o.Binary)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating S3 directory: %w", err)
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("S3 directory %q: %w", o.Dir, err)
	}
	if err := CheckPortFree(o.Address); err != nil {
		var pt *PortTakenError
		if errors.As(err, &pt) {
			pt.Flag = "s3-port"
		}
		return nil, err
	}

	// Not exec.CommandContext: the server's life is Stop's business, not ctx's.
	cmd := exec.Command(bin, "--port", o.Address, "--quiet", "posix", dir)
	// Credentials go by environment, not argv, so `ps` does not show them;
	// inherited VGW_* settings could reconfigure the server, so they are dropped.
	cmd.Env = append(filterEnv(os.Environ()),
		"ROOT_ACCESS_KEY_ID="+o.AccessKey,
		"ROOT_SECRET_ACCESS_KEY="+o.SecretKey,
	)
	cmd.SysProcAttr = childProcAttr()
	out := &tailWriter{log: o.Logger}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	s := &S3{
		cmd:      cmd,
		endpoint: "http://" + o.Address,
		bucket:   o.Bucket,
		access:   o.AccessKey,
		secret:   o.SecretKey,
		log:      o.Logger,
		done:     make(chan struct{}),
		out:      out,
	}
	go func() {
		s.waitErr = cmd.Wait()
		close(s.done)
	}()
	o.Logger.Debug().Int("pid", s.PID()).Str("endpoint", s.endpoint).Str("dir", dir).Msg("versitygw started")

	if err := s.waitReady(ctx, o.StartTimeout); err != nil {
		_ = s.Stop()
		if strings.Contains(out.String(), "address already in use") {
			return nil, &PortTakenError{Address: o.Address, Flag: "s3-port"}
		}
		return nil, err
	}
	if err := s.ensureBucket(ctx); err != nil {
		_ = s.Stop()
		return nil, err
	}
	return s, nil
}

// waitReady polls the endpoint until any HTTP answer comes back.
func (s *S3) waitReady(ctx context.Context, timeout time.Duration) error {
	err := waitHTTP(ctx, s.endpoint+"/", timeout, 20*time.Millisecond, s.done)
	switch {
	case errors.Is(err, errExited):
		return fmt.Errorf("versitygw exited before serving (%v): %s", s.waitErr, s.out.String())
	case err != nil:
		return fmt.Errorf("versitygw did not answer on %s: %w; its output: %s", s.endpoint, err, s.out.String())
	}
	return nil
}

// Client returns an S3 client for this server (path-style, root credentials).
func (s *S3) Client() *s3.Client {
	return s3.New(s3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(s.endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(s.access, s.secret, ""),
	})
}

func (s *S3) ensureBucket(ctx context.Context) error {
	c := s.Client()
	if _, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(s.bucket)}); err == nil {
		return nil
	}
	_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(s.bucket)})
	var owned *types.BucketAlreadyOwnedByYou
	var ae smithy.APIError
	if err == nil || errors.As(err, &owned) || (errors.As(err, &ae) && ae.ErrorCode() == "BucketAlreadyOwnedByYou") {
		return nil
	}
	return fmt.Errorf("creating bucket %q on %s: %w", s.bucket, s.endpoint, err)
}

// Stop terminates the server's process group and waits for it to exit. It
// is safe to call more than once and from several goroutines.
func (s *S3) Stop() error {
	s.stop.Do(func() {
		pid := s.cmd.Process.Pid
		select {
		case <-s.done:
			return // already gone
		default:
		}
		_ = signalGroup(pid, syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(5 * time.Second):
			s.log.Warn().Int("pid", pid).Msg("versitygw ignored SIGTERM; killing it")
			_ = signalGroup(pid, syscall.SIGKILL)
			<-s.done
		}
		var ee *exec.ExitError
		if s.waitErr != nil && !errors.As(s.waitErr, &ee) {
			s.stopErr = fmt.Errorf("waiting for versitygw: %w", s.waitErr)
		}
		s.log.Debug().Int("pid", pid).Msg("versitygw stopped")
	})
	return s.stopErr
}

// filterEnv drops settings versitygw would read from the environment.
func filterEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if strings.HasPrefix(kv, "VGW_") || strings.HasPrefix(kv, "ROOT_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// tailWriter logs the child's output line by line at debug level and keeps
// its last few KiB for error messages.
type tailWriter struct {
	mu   sync.Mutex
	log  zerolog.Logger
	tail []byte
	line []byte
}

const tailMax = 4 << 10

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.tail = append(w.tail, p...)
	if len(w.tail) > tailMax {
		w.tail = append([]byte(nil), w.tail[len(w.tail)-tailMax:]...)
	}
	w.line = append(w.line, p...)
	for {
		i := bytes.IndexByte(w.line, '\n')
		if i < 0 {
			break
		}
		if l := strings.TrimSpace(string(w.line[:i])); l != "" {
			w.log.Debug().Str("versitygw", l).Send()
		}
		w.line = w.line[i+1:]
	}
	if len(w.line) > tailMax {
		w.line = w.line[:0]
	}
	return len(p), nil
}

func (w *tailWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.TrimSpace(string(w.tail))
}
