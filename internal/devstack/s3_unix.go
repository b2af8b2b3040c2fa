//go:build unix && !linux

package devstack

import "syscall"

// childProcAttr puts the child in its own process group so Stop can signal
// everything it started. Only Linux can tie the child's life to ours
// (Pdeathsig); elsewhere a crashed parent leaves the server running.
func childProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// signalGroup signals the process group led by pid.
func signalGroup(pid int, sig syscall.Signal) error { return syscall.Kill(-pid, sig) }
