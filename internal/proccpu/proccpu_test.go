//go:build linux

package proccpu

import (
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
	// The leader, a shell, starts a spinning child and waits for it.
	cmd := exec.Command("sh", "-c", `sh -c 'end=$(($(date +%s)+1)); while [ $(date +%s) -lt $end ]; do :; done'; read x`)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
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
	leader := map[int]bool{cmd.Process.Pid: true}
	deadline := time.Now().Add(10 * time.Second)
	for {
		// Once the spinner has exited, its time is the leader's reaped time.
		_, reaped, ok := Of(cmd.Process.Pid)
		if ok && reaped >= 300*time.Millisecond {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the leader's reaped CPU stayed at %s", reaped)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := Groups(leader); got < 300*time.Millisecond {
		t.Fatalf("Groups = %s, want the spinner's time (at least 300ms) counted", got)
	}
	if Groups(map[int]bool{}) != 0 {
		t.Fatal("Groups of no leader is not 0")
	}
}
