//go:build !unix

package jsengine

import (
	"errors"
	"os"
	"os/exec"
	"time"
)

func command() *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	cmd.Env = []string{childEnv + "=1"}
	return cmd
}

func kill(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

func setLimits(time.Duration, uint64) error {
	return errors.New("code cells need a Unix host, where the cell's process can be limited")
}

func maxRSS(*os.ProcessState) uint64 { return 0 }
