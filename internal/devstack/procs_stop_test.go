package devstack

import (
	"bufio"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

func TestStopGroup(t *testing.T) {
	cases := []struct {
		name   string
		script string
		grace  time.Duration
		killed bool
	}{
		// sleep ends on SIGTERM: no kill needed, the grace is not waited out.
		{"stops on the signal", "echo ready; exec sleep 30", 20 * time.Second, false},
		// A shell that ignores SIGTERM is killed, group and all, after the grace.
		{"killed after the grace", `trap "" TERM; sleep 30 & echo ready; wait`, 300 * time.Millisecond, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command("sh", "-c", c.script)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// The script has set itself up (trap, background sleep).
			if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
				t.Fatal(err)
			}
			pgid := cmd.Process.Pid
			start := time.Now()
			StopGroup(cmd, syscall.SIGTERM, c.grace)
			if cmd.ProcessState == nil {
				t.Fatal("StopGroup returned before the process exited")
			}
			took := time.Since(start)
			if c.killed && took < c.grace || !c.killed && took >= c.grace {
				t.Errorf("took %s with a grace of %s; want killed: %v", took, c.grace, c.killed)
			}
			want := syscall.SIGTERM
			if c.killed {
				want = syscall.SIGKILL
			}
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != want {
				t.Errorf("the process ended with %v, want by %v", cmd.ProcessState, want)
			}
			_ = syscall.Kill(-pgid, syscall.SIGKILL) // whatever of the group is left
		})
	}
}
