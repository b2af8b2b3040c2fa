//go:build linux

package devstack

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// A worker that stops answering without closing its connections (frozen,
// as a paused VM or a starved host is) keeps its polls open, and the
// server would hand each a task that then waits out its timeout. The
// embedded server pings a quiet connection and closes one that does not
// answer, so a frozen worker's polls are gone within seconds.
func TestFrozenWorkerConnectionDropped(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	srv, err := StartTemporal(context.Background(), TemporalOptions{Address: addr, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()

	helper := exec.Command(os.Args[0])
	helper.Env = append(os.Environ(), pollHelperEnv+"="+addr)
	helper.Stderr = os.Stderr
	stdout, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = helper.Process.Kill(); _ = helper.Wait() }()
	// The SDK's own log lines come first on the helper's stdout.
	sc, polling := bufio.NewScanner(stdout), false
	for !polling && sc.Scan() {
		polling = sc.Text() == "POLLING"
	}
	if !polling {
		t.Fatal("the helper did not start polling")
	}
	go func() {
		for sc.Scan() {
		}
	}()
	pid := helper.Process.Pid
	if n := established(t, pid, port); n == 0 {
		t.Fatal("the polling helper has no open connection to the server: the test would prove nothing")
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// Frozen, the helper cannot answer the server's pings. Wait for the
	// server to close its end (the helper's sockets leave ESTABLISHED).
	deadline := time.Now().Add(20 * time.Second)
	for established(t, pid, port) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("20 s after the worker froze, the server still holds its connection open (keepalive)")
		}
		time.Sleep(100 * time.Millisecond) // polling the condition, not standing in for it
	}
}

// established counts pid's TCP connections to port that are open
// (ESTABLISHED, "01" in /proc/net/tcp).
func established(t *testing.T, pid, port int) int {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err != nil {
			continue
		}
		if ino, ok := strings.CutPrefix(link, "socket:["); ok {
			inodes[strings.TrimSuffix(ino, "]")] = true
		}
	}
	n := 0
	for _, table := range []string{"tcp", "tcp6"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || !inodes[f[9]] || f[3] != "01" {
				continue
			}
			// The remote address is hex ip:port.
			_, rport, _ := strings.Cut(f[2], ":")
			if p, err := strconv.ParseInt(rport, 16, 32); err == nil && int(p) == port {
				n++
			}
		}
	}
	return n
}
