package devstack

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// needVersitygw skips when the gateway is not installed (`make test` installs it).
func needVersitygw(t *testing.T) {
	t.Helper()
	if _, err := FindVersitygw(""); err != nil {
		t.Fatalf("versitygw not installed: run `make tools` or `%s`", VersitygwInstall)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	p, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
}

// processGone reports whether pid no longer runs (absent, or a zombie that
// nobody has reaped yet).
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the parenthesised command name.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] == 'Z'
}

func TestStartS3PutGetStop(t *testing.T) {
	needVersitygw(t)
	ctx := context.Background()
	srv, err := StartS3(ctx, S3Options{Address: freeAddr(t), Dir: t.TempDir(), Bucket: "box"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	if srv.Bucket() != "box" || srv.AccessKey() == "" || srv.SecretKey() == "" || !strings.HasPrefix(srv.Endpoint(), "http://127.0.0.1:") {
		t.Fatalf("accessors: %q %q %q", srv.Bucket(), srv.AccessKey(), srv.Endpoint())
	}

	c := srv.Client()
	body := []byte("hello evidence")
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("box"), Key: aws.String("a/b.txt"), Body: bytes.NewReader(body)}); err != nil {
		t.Fatalf("put: %v", err)
	}
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("box"), Key: aws.String("a/b.txt")})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	got, err := io.ReadAll(out.Body)
	out.Body.Close()
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("get = %q, %v; want %q", got, err, body)
	}

	pid := srv.PID()
	if err := srv.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("kill(%d, 0) after Stop = %v, want ESRCH", pid, err)
	}
	if err := srv.Stop(); err != nil {
		t.Fatalf("second stop: %v", err)
	}
}

func TestStartS3ReusesExistingBucket(t *testing.T) {
	needVersitygw(t)
	dir := t.TempDir()
	for range 2 {
		srv, err := StartS3(context.Background(), S3Options{Address: freeAddr(t), Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Stop(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestStartS3PortTaken(t *testing.T) {
	needVersitygw(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = StartS3(context.Background(), S3Options{Address: l.Addr().String(), Dir: t.TempDir()})
	var pt *PortTakenError
	if !errors.As(err, &pt) || !errors.Is(err, ErrPortTaken) {
		t.Fatalf("err = %v, want *PortTakenError", err)
	}
}

func TestStartS3Refusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    S3Options
		is   error
		want string
	}{
		{"missing binary", S3Options{Binary: "/nonexistent/versitygw", Address: "127.0.0.1:1", Dir: t.TempDir()}, ErrVersitygwMissing, "make tools"},
		{"not loopback", S3Options{Address: "0.0.0.0:7070", Dir: t.TempDir()}, nil, "not loopback"},
		{"no host", S3Options{Address: ":7070", Dir: t.TempDir()}, nil, "not loopback"},
		{"bad address", S3Options{Address: "7070", Dir: t.TempDir()}, nil, "host:port"},
		{"no dir", S3Options{Address: "127.0.0.1:7070"}, nil, "directory"},
		{"half credentials", S3Options{Address: "127.0.0.1:7070", Dir: t.TempDir(), AccessKey: "a"}, nil, "secret key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := StartS3(context.Background(), tc.o)
			if err == nil {
				_ = srv.Stop()
				t.Fatal("started, want a refusal")
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("err = %v, want errors.Is %v", err, tc.is)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %q, want it to mention %q", err, tc.want)
			}
		})
	}
	if msg := (&VersitygwMissingError{Looked: []string{"x"}}).Error(); !strings.Contains(msg, VersitygwInstall) {
		t.Errorf("missing-binary message %q does not name %q", msg, VersitygwInstall)
	}
}

// TestS3ChildDiesWithParent starts the server from a helper process, kills
// the helper with SIGKILL (no chance to clean up), and expects the server to
// follow it.
func TestS3ChildDiesWithParent(t *testing.T) {
	needVersitygw(t)
	helper := exec.Command(os.Args[0])
	helper.Env = append(os.Environ(), "DEVSTACK_S3_HELPER="+freeAddr(t)+"|"+t.TempDir())
	stdout, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	helper.Stderr = os.Stderr
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = helper.Process.Kill(); _ = helper.Wait() })

	var pid int
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "S3PID="); ok {
			pid, _ = strconv.Atoi(v)
			break
		}
	}
	if pid == 0 {
		t.Fatal("helper did not report the server's pid")
	}
	t.Cleanup(func() { _ = syscall.Kill(-pid, syscall.SIGKILL) }) // only if the test failed

	if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()
	deadline := time.Now().Add(15 * time.Second)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("versitygw (pid %d) outlived its parent", pid)
		}
		time.Sleep(20 * time.Millisecond) // polling the condition, not standing in for it
	}
}

// TestMain doubles as the helper process of TestS3ChildDiesWithParent: run
// with DEVSTACK_S3_HELPER set, the test binary starts an S3 server, prints
// its pid and waits to be killed instead of running tests. It is the
// polling helper of TestFrozenWorkerConnectionDropped too (pollHelper).
func TestMain(m *testing.M) {
	pollHelper()
	if spec := os.Getenv("DEVSTACK_S3_HELPER"); spec != "" {
		addr, dir, _ := strings.Cut(spec, "|")
		srv, err := StartS3(context.Background(), S3Options{Address: addr, Dir: dir})
		if err != nil {
			fmt.Println("S3ERR=" + err.Error())
			os.Exit(1)
		}
		fmt.Printf("S3PID=%d\n", srv.PID())
		select {} // wait to be killed
	}
	os.Exit(m.Run())
}
