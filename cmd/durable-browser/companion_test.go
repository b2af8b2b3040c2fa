package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func notOnPath(string) (string, error) { return "", errors.New("not found") }

func writeExe(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// A companion (here dev) is found beside the running binary first, then on PATH; missing, the
// error names make build.
func TestFindCompanion(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "durable-browser")
	writeExe(t, self)

	_, err := findCompanion(devBinary, self, notOnPath)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "make build") || !strings.Contains(err.Error(), devBinary) {
		t.Fatalf("missing dev: got %v, want an error naming %s and make build", err, devBinary)
	}

	_, err = findCompanion(mcpBinary, self, notOnPath)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "make build") || !strings.Contains(err.Error(), "./cmd/"+mcpBinary) {
		t.Fatalf("missing mcp: got %v, want an error naming ./cmd/%s and make build", err, mcpBinary)
	}

	onPath := func(name string) (string, error) { return "/elsewhere/" + name, nil }
	if got, err := findCompanion(devBinary, self, onPath); err != nil || got != "/elsewhere/"+devBinary {
		t.Fatalf("on PATH: got %q, %v", got, err)
	}

	beside := filepath.Join(dir, devBinary)
	writeExe(t, beside)
	if got, err := findCompanion(devBinary, self, onPath); err != nil || got != beside {
		t.Fatalf("beside: got %q, %v; want %q (before PATH)", got, err, beside)
	}

	// Through a symlink to the binary, beside means beside the real file.
	link := filepath.Join(t.TempDir(), "durable-browser")
	if err := os.Symlink(self, link); err != nil {
		t.Fatal(err)
	}
	if got, err := findCompanion(devBinary, link, notOnPath); err != nil || got != beside {
		t.Fatalf("through a symlink: got %q, %v; want %q", got, err, beside)
	}

	// A non-executable file beside is not it.
	if err := os.Chmod(beside, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := findCompanion(devBinary, self, notOnPath); err == nil {
		t.Fatal("a non-executable durable-browser-dev was accepted")
	}
}

// dev's printed commands follow the name the person typed.
func TestCompanionArgv0(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "durable-browser")
	beside := filepath.Join(dir, devBinary)
	for _, tc := range []struct{ path, typed, want string }{
		{beside, "bin/durable-browser", "bin/" + devBinary},
		{beside, "./durable-browser", "./" + devBinary},
		{beside, "durable-browser", beside},
		{beside, self, beside},
		{"/usr/local/bin/" + devBinary, "bin/durable-browser", "/usr/local/bin/" + devBinary},
	} {
		if got := companionArgv0(devBinary, tc.path, self, tc.typed); got != tc.want {
			t.Errorf("companionArgv0(%q, typed %q) = %q, want %q", tc.path, tc.typed, got, tc.want)
		}
	}
}
