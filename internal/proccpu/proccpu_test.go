//go:build linux

package proccpu

import (
	"bufio"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// A child that spins in a group of its own: its CPU shows in Groups while
// it runs, and after it exits and is reaped, in its leader's reaped time.
func TestGroupsCountsLiveAndReaped(t *testing.T) {
	if Group(os.Getpid()) != syscall.Getpgrp() {
		t.Fatalf("Group(self) = %d, want %d", Group(os.Getpid()), syscall.Getpgrp())
	}
	// The leader, a shell, starts a child that spins through a fixed amount
	// of work (its CPU does not depend on how busy the machine is), waits
	// for it, and says so.
	cmd := exec.Command("sh", "-c", `sh -c 'i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done'; echo reaped; read x`)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = in.Close(); _ = cmd.Wait() }()
	if Parent(cmd.Process.Pid) != os.Getpid() {
		t.Fatalf("Parent(child) = %d, want this process %d", Parent(cmd.Process.Pid), os.Getpid())
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "reaped\n" {
		t.Fatalf("the leader said %q, %v", line, err)
	}
	// The spinner has exited and the leader reaped it: its time is the
	// leader's reaped time.
	_, reaped, ok := Of(cmd.Process.Pid)
	if !ok || reaped < 50*time.Millisecond {
		t.Fatalf("the leader's reaped CPU is %s (ok %v), want the spinner's (about 0.3 s)", reaped, ok)
	}
	leader := map[int]bool{cmd.Process.Pid: true}
	if got := Groups(leader); got < reaped {
		t.Fatalf("Groups = %s, want at least the reaped %s counted", got, reaped)
	}
	if Groups(map[int]bool{}) != 0 {
		t.Fatal("Groups of no leader is not 0")
	}
}
