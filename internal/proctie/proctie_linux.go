// Package proctie starts child processes tied to this one: on Linux the
// kernel kills the child when this process dies, however it dies.
//
// Linux delivers the parent-death signal when the thread that forked the
// child exits, not the process, and the Go runtime may run a goroutine on
// any thread and end threads. So every child is started from one goroutine
// locked to its own OS thread, which never returns: that thread exits only
// with the process.
package proctie

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// Start starts cmd with a parent-death signal: the one cmd.SysProcAttr
// already names, else SIGKILL.
func Start(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if cmd.SysProcAttr.Pdeathsig == 0 {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	launcherOnce.Do(func() {
		launches = make(chan launch)
		go launcher(launches)
	})
	l := launch{cmd: cmd, done: make(chan error, 1)}
	launches <- l
	return <-l.done
}

type launch struct {
	cmd  *exec.Cmd
	done chan error
}

var (
	launcherOnce sync.Once
	launches     chan launch
)

func launcher(in <-chan launch) {
	runtime.LockOSThread()
	// Never unlocked and never returns, so the thread lives as long as the
	// process.
	for l := range in {
		l.done <- l.cmd.Start()
	}
}
