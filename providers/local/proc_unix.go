//go:build unix

package local

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// supported says whether this platform can run the local provider.
const supported = true

// ownGroup puts the browser in its own process group so release can end
// its renderers and helpers with it.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// pidAlive reports whether pid names a running (not zombie) process.
func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	if st, ok := procState(pid); ok && (st == 'Z' || st == 'X') {
		return false // exited, waiting for its parent to reap it
	}
	return true
}

// procState reads the state letter of /proc/<pid>/stat (Linux only).
func procState(pid int) (byte, bool) {
	st, _, ok := procStat(pid)
	return st, ok
}

// procStat returns the state letter and process group of pid from /proc.
func procStat(pid int) (state byte, pgrp int, ok bool) {
	if runtime.GOOS != "linux" {
		return 0, 0, false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// The command name is in parentheses and may hold spaces: split after it.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+2:]))
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, false
	}
	g, err := strconv.Atoi(f[2])
	if err != nil {
		return 0, 0, false
	}
	return f[0][0], g, true
}

// isOurs reports whether pid is still the browser started on userDataDir, so
// a reused pid is never signalled. Where /proc is missing it trusts the pid.
func isOurs(pid int, userDataDir string) bool {
	if runtime.GOOS != "linux" {
		return pidAlive(pid)
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	want := []byte("--user-data-dir=" + userDataDir + "\x00")
	return bytes.Contains(append(b, 0), want)
}

// groupAlive reports whether any live (non-zombie) process is in group pgid.
func groupAlive(pgid int) bool {
	if pgid <= 1 {
		return false
	}
	if err := syscall.Kill(-pgid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	if runtime.GOOS != "linux" {
		return true
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, g, ok := procStat(pid)
		if ok && g == pgid && st != 'Z' && st != 'X' {
			return true
		}
	}
	return false
}

// signalGroup signals the process group pgid and its leader.
func signalGroup(pgid int, sig syscall.Signal) {
	if pgid <= 1 {
		return
	}
	_ = syscall.Kill(-pgid, sig)
	_ = syscall.Kill(pgid, sig)
}

var (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

// abortedBySignal reports whether an exit looks like a crash (abort, trap,
// segfault), directly or through a shell wrapper's 128+n status.
func abortedBySignal(ps *os.ProcessState) (string, bool) {
	if ps == nil {
		return "", false
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		s := ws.Signal()
		switch s {
		case syscall.SIGABRT, syscall.SIGTRAP, syscall.SIGSEGV, syscall.SIGILL, syscall.SIGBUS:
			return s.String(), true
		}
		return s.String(), false
	}
	switch ps.ExitCode() {
	case 128 + int(syscall.SIGABRT), 128 + int(syscall.SIGTRAP), 128 + int(syscall.SIGSEGV), 128 + int(syscall.SIGILL):
		return "", true
	}
	return "", false
}

// runningAsRoot reports whether Chrome would refuse its sandbox.
func runningAsRoot() bool { return os.Geteuid() == 0 }
