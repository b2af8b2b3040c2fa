package devstack

import "syscall"

// childProcAttr puts the child in its own process group (so Stop can signal
// everything it started) and has the kernel send it SIGTERM when the thread
// that started it exits. Go only ends threads of goroutines that exit while
// locked to them, so in practice that is when this process dies.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// signalGroup signals the process group led by pid.
func signalGroup(pid int, sig syscall.Signal) error { return syscall.Kill(-pid, sig) }
