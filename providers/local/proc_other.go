//go:build !unix

package local

import (
	"os"
	"os/exec"
)

const supported = false

func ownGroup(*exec.Cmd)                              {}
func pidAlive(int) bool                               { return false }
func isOurs(int, string) bool                         { return false }
func groupAlive(int) bool                             { return false }
func signalGroup(int, int)                            {}
func abortedBySignal(*os.ProcessState) (string, bool) { return "", false }
func runningAsRoot() bool                             { return false }

var (
	sigTerm = 15
	sigKill = 9
)
