package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/test/harness"
)

// The host's boundaries hold against a model's tool arguments, through the
// built binary's call verb: an upload comes only from --upload-dir, and a
// relaunch opens only a profile the host granted.
func TestBoundariesRefuseModelChoices(t *testing.T) {
	base := t.TempDir()
	uploads := filepath.Join(base, "uploads")
	if err := os.MkdirAll(uploads, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(uploads, "note.txt"), []byte("hello upload\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(base, "private.txt")
	if err := os.WriteFile(outside, []byte("not for pages\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env.StartWorker(t, harness.WorkerOptions{UploadDir: uploads, ProfileGrants: "shop"})
	id := "e2e-bounds-" + uuid.NewString()[:8]
	t.Cleanup(func() { cli(t, "call", id, "browser_release") })

	call := func(tool, args string) (map[string]any, int) {
		t.Helper()
		r := cli(t, "call", id, tool, args)
		var out map[string]any
		decodeJSON(t, r.stdout, &out)
		return out, r.code
	}
	if out, code := call("run", `{"actions":[{"op":"goto","url":"`+env.Demo.URL()+`/upload.html"}]}`); code != 0 {
		t.Fatalf("goto: %v", out)
	}
	snap, _ := call("snapshot", `{}`)
	text, _ := snap["text"].(string)
	var input string
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "Attachment") {
			input = strings.TrimSpace(line)[1:strings.Index(strings.TrimSpace(line), "]")]
		}
	}
	if input == "" {
		t.Fatalf("no file input in:\n%s", text)
	}

	// Outside the upload directory: refused, whether the file exists or not,
	// in the same words.
	var refusals []string
	for _, p := range []string{outside, filepath.Join(base, "missing.txt"), "../private.txt", "/etc/passwd"} {
		out, code := call("browser_upload", `{"id":"`+input+`","path":"`+p+`"}`)
		if code != 1 || out["code"] != string(contract.CodeRefused) {
			t.Fatalf("upload %s: exit %d, %v", p, code, out)
		}
		msg, _ := out["message"].(string)
		if !strings.Contains(msg, "--upload-dir") {
			t.Fatalf("refusal does not name --upload-dir: %s", msg)
		}
		refusals = append(refusals, strings.Replace(msg, `"`+p+`"`, "", 1))
	}
	for _, m := range refusals[1:] {
		if m != refusals[0] {
			t.Fatalf("refusals differ, telling what exists:\n%s\n%s", refusals[0], m)
		}
	}
	// Inside it: uploaded.
	if out, code := call("browser_upload", `{"id":"`+input+`","path":"note.txt"}`); code != 0 || out["name"] != "note.txt" {
		t.Fatalf("upload from the upload directory: exit %d, %v", code, out)
	}

	// A profile no one granted: refused, naming the way out; the session
	// keeps its browser.
	out, code := call("browser_relaunch", `{"profile":{"name":"bank"}}`)
	msg, _ := out["message"].(string)
	if code != 1 || out["code"] != string(contract.CodeRefused) || !strings.Contains(msg, `"bank"`) || !strings.Contains(msg, "--profile-grants") {
		t.Fatalf("relaunch into an ungranted profile: exit %d, %v", code, out)
	}
	// Granted for use, not for saving.
	if out, code := call("browser_relaunch", `{"profile":{"name":"shop","save":true}}`); code != 1 || out["code"] != string(contract.CodeRefused) {
		t.Fatalf("relaunch saving a profile granted only for use: exit %d, %v", code, out)
	}
	if out, code := call("browser_relaunch", `{"profile":{"name":"shop"}}`); code != 0 {
		t.Fatalf("relaunch into the worker's granted profile: exit %d, %v", code, out)
	}
}
