package devstack

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// PIDsUnder lists live processes (not this one) whose command line mentions
// dir: what a stack started with its files under dir left running (servers,
// workers, the browsers of their profile roots). Empty where there is no
// /proc.
func PIDsUnder(dir string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && strings.Contains(string(stat), ") Z ") {
			continue // a zombie holds nothing
		}
		if strings.Contains(string(cmdline), dir) {
			out = append(out, pid)
		}
	}
	return out
}

// KillUnder kills (SIGKILL) every process PIDsUnder(dir) lists: the last
// resort so that nothing outlives whoever started it.
func KillUnder(dir string) {
	for _, pid := range PIDsUnder(dir) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// StopGroup asks cmd's process to stop with sig and waits until it has
// exited; after grace it kills the process's group (cmd started with
// Setpgid) and waits for that.
func StopGroup(cmd *exec.Cmd, sig os.Signal, grace time.Duration) {
	_ = cmd.Process.Signal(sig)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}
