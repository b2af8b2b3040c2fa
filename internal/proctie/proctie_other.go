//go:build !linux

// Package proctie starts child processes tied to this one where the OS can
// (Linux); elsewhere a child outlives a parent that dies.
package proctie

import "os/exec"

// Start starts cmd. Only Linux can tie a child's life to its parent's.
func Start(cmd *exec.Cmd) error { return cmd.Start() }
