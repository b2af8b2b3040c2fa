// Package cli holds what the four command binaries share: the environment a
// verb may touch, so tests run verbs in-process with their own.
package cli

import (
	"io"
	"os"
)

// Env is what a verb may touch.
type Env struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// StdoutTerminal says stdout is a terminal, where binary bytes are
	// not written unasked.
	StdoutTerminal bool
}

// OS is the process's own environment.
func OS() *Env {
	return &Env{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, StdoutTerminal: isTerminal(os.Stdout)}
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
