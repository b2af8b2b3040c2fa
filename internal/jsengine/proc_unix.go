//go:build unix

package jsengine

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// self is the binary the worker runs, as the kernel holds it: still this
// build after the file on disk is replaced.
func self() string {
	if runtime.GOOS == "linux" {
		return "/proc/self/exe"
	}
	p, err := os.Executable()
	if err != nil {
		return os.Args[0]
	}
	return p
}

// command is a cell's process: this binary, told by childEnv to serve one
// cell, with nothing of the worker's environment (which may hold secrets),
// one thread for Go code, and a process group of its own so it is killed
// whole.
func command() *exec.Cmd {
	cmd := exec.Command(self())
	cmd.Args = []string{"durable-browser-cell"}
	cmd.Env = []string{childEnv + "=1", "GOMAXPROCS=1", "GOTRACEBACK=none"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// kill ends the cell's process group.
func kill(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// setLimits bounds this (the cell's) process: CPU seconds, then address
// space grown past what is mapped now (Linux; elsewhere only the heap
// watch and the deadline's kill hold).
func setLimits(cpu time.Duration, memory uint64) error {
	secs := uint64(cpu/time.Second) + 1
	if err := syscall.Setrlimit(syscall.RLIMIT_CPU, &syscall.Rlimit{Cur: secs, Max: secs + 1}); err != nil {
		return err
	}
	_ = syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{})
	if size, ok := addressSpace(); ok {
		lim := size + memory
		if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: lim, Max: lim}); err != nil {
			return err
		}
	}
	return nil
}

// addressSpace is this process's mapped size (VmSize), where /proc has it.
func addressSpace() (uint64, bool) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, false
	}
	pages, err := strconv.ParseUint(f[0], 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * uint64(os.Getpagesize()), true
}

// maxRSS is the peak resident size of an exited cell process, in bytes.
func maxRSS(ps *os.ProcessState) uint64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok && ru != nil {
		return uint64(ru.Maxrss) * maxrssUnit
	}
	return 0
}
