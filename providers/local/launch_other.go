//go:build !linux

package local

import "os/exec"

// startTied starts cmd. Only Linux can tie a child's life to its parent's;
// elsewhere a browser outlives a worker that dies, until a worker reaps it.
func startTied(cmd *exec.Cmd) error { return cmd.Start() }
