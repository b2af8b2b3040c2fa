package local

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// startTied starts cmd so that it is killed (SIGKILL) when this worker
// process dies, however it dies.
//
// Why: a request the request gate holds for approval is paused in Chrome by
// the DevTools Fetch domain, and Chrome sends it, unapproved, the moment the
// DevTools connection closes (driver TestHeldRequestReleasedWhenConnectionDrops).
// A browser that outlived its worker would do exactly that.
//
// Linux delivers the parent-death signal when the thread that forked the
// child exits, not the process, and the Go runtime may run a goroutine on any
// thread and end threads. So every browser is started from one goroutine
// locked to its own OS thread, which never returns: that thread exits only
// with the process.
func startTied(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
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
