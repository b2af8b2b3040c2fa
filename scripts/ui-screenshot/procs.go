package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/durable-browser/durable-browser/internal/devstack"
	"github.com/durable-browser/durable-browser/internal/proctie"
)

// procs is every process this script starts that could outlive a call:
// dev (in its own process group, with the servers, workers and session
// browsers under it), the pending handoff's `call` and the Chromium that
// takes the pictures. stop ends them all, whatever made run return.
type procs struct {
	// work is the directory the processes have on their command lines
	// (dev's state directory, the browsers' profiles, the binaries unless
	// -bin), so a last sweep finds whatever slipped out of a process group.
	work string

	mu   sync.Mutex
	list []proc
}

type proc struct {
	name string
	cmd  *exec.Cmd
	// term is the signal that asks it to stop cleanly (0: just kill it).
	term syscall.Signal
	// grace is how long it has to stop before its group is killed.
	grace time.Duration
}

// start starts cmd in its own process group, tied to this process: if the
// script dies without running stop (SIGKILL), the kernel sends the child
// term (or SIGKILL), so not even then is anything left behind.
func (p *procs) start(name string, cmd *exec.Cmd, term syscall.Signal, grace time.Duration) error {
	death := term
	if death == 0 {
		death = syscall.SIGKILL
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: death}
	// Children that inherit its output pipes must not keep Wait waiting.
	cmd.WaitDelay = 2 * time.Second
	if err := proctie.Start(cmd); err != nil {
		return fmt.Errorf("starting %s: %w", name, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.list = append(p.list, proc{name: name, cmd: cmd, term: term, grace: grace})
	return nil
}

// stop ends every process, the last started first, then kills anything still
// running with the work directory on its command line, and says which
// processes it had to kill or could not end.
func (p *procs) stop() error {
	p.mu.Lock()
	list := p.list
	p.list = nil
	p.mu.Unlock()
	for i := len(list) - 1; i >= 0; i-- {
		stopOne(list[i])
	}
	devstack.KillUnder(p.work)
	// SIGKILL is delivered at once but a process takes a moment to go.
	deadline := time.Now().Add(5 * time.Second)
	for len(devstack.PIDsUnder(p.work)) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if left := devstack.PIDsUnder(p.work); len(left) > 0 {
		return fmt.Errorf("processes under %s still running after SIGKILL: %v", p.work, left)
	}
	return nil
}

func stopOne(pr proc) {
	pid := pr.cmd.Process.Pid
	began := time.Now()
	defer func() {
		if verbose {
			fmt.Fprintf(os.Stderr, "stopped %s in %v\n", pr.name, time.Since(began).Round(100*time.Millisecond))
		}
	}()
	done := make(chan struct{})
	go func() { _ = pr.cmd.Wait(); close(done) }()
	if pr.term != 0 {
		_ = pr.cmd.Process.Signal(pr.term)
		select {
		case <-done:
		case <-time.After(pr.grace):
			fmt.Fprintf(os.Stderr, "ui-screenshot: %s did not stop within %v of %v; killing its process group\n", pr.name, pr.grace, pr.term)
		}
	}
	// The whole group: what the process started and left behind goes too.
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
}

// stillRunning reports whether pid is alive and not a zombie.
func stillRunning(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err != nil || !strings.Contains(string(stat), ") Z ")
}
