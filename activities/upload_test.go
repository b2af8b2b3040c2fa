package activities

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/contract"
)

// uploadTree builds an upload directory with one file, a subdirectory, and
// links that lead inside and outside; next to it, a "secret" file outside.
func uploadTree(t *testing.T) (dir, outside string) {
	t.Helper()
	base := t.TempDir()
	dir = filepath.Join(base, "uploads")
	outside = filepath.Join(base, "secrets.env")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "sub"), 0o700))
	must(os.WriteFile(filepath.Join(dir, "report.pdf"), []byte("%PDF-1.4 report"), 0o600))
	must(os.WriteFile(filepath.Join(dir, "sub", "cv.txt"), []byte("cv"), 0o600))
	must(os.WriteFile(outside, []byte("TOKEN=hunter2hunter2"), 0o600))
	must(os.Symlink(outside, filepath.Join(dir, "escape.txt")))
	must(os.Symlink(base, filepath.Join(dir, "up")))
	must(os.Symlink("sub/cv.txt", filepath.Join(dir, "inside-link.txt")))
	return dir, outside
}

func TestUploadOnlyFromUploadDir(t *testing.T) {
	dir, outside := uploadTree(t)
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		path     string
		wantPath string // "" when refused
		wantSize int64
	}{
		{"file at the top", "report.pdf", filepath.Join(realDir, "report.pdf"), 15},
		{"file in a subdirectory", "sub/cv.txt", filepath.Join(realDir, "sub", "cv.txt"), 2},
		{"absolute path inside", filepath.Join(dir, "report.pdf"), filepath.Join(realDir, "report.pdf"), 15},
		{"link staying inside is given as its target", "inside-link.txt", filepath.Join(realDir, "sub", "cv.txt"), 2},
		{"system file", "/etc/passwd", "", 0},
		{"absolute path outside", outside, "", 0},
		{"dot-dot", "../secrets.env", "", 0},
		{"dot-dot inside then out", "sub/../../secrets.env", "", 0},
		{"symlink to a file outside", "escape.txt", "", 0},
		{"symlinked directory outside", "up/secrets.env", "", 0},
		{"missing file", "nope.pdf", "", 0},
		{"a directory", "sub", "", 0},
		{"the directory itself", ".", "", 0},
		{"empty", "", "", 0},
	}
	var refusal string
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(o *Options) { o.UploadDir = dir })
			ref := h.create("t-1", contract.SessionOptions{})
			res, err := call[contract.UploadResult](h, contract.ActivityUpload, contract.UploadRequest{
				Call: contract.Call{Session: ref}, Args: contract.UploadArgs{ID: "3", Path: tc.path},
			})
			b := h.browser(0)
			if tc.wantPath == "" {
				f := wantCode(t, err, contract.CodeRefused, false)
				if len(b.uploads) != 0 {
					t.Fatalf("the browser was given %v", b.uploads)
				}
				// Missing or outside: the same words, so nothing is learnt
				// about the rest of the worker's filesystem.
				msg := strings.ReplaceAll(f.Message, strconv.Quote(tc.path), "")
				if refusal == "" {
					refusal = msg
				} else if msg != refusal {
					t.Fatalf("refusal %q differs from %q", msg, refusal)
				}
				if !strings.Contains(f.Message, "--upload-dir") {
					t.Fatalf("refusal does not name --upload-dir: %s", f.Message)
				}
				return
			}
			if err != nil {
				t.Fatalf("upload: %v", err)
			}
			if len(b.uploads) != 1 || b.uploads[0] != tc.wantPath {
				t.Fatalf("browser given %v, want %s", b.uploads, tc.wantPath)
			}
			if res.Bytes != tc.wantSize || res.Name != filepath.Base(tc.wantPath) {
				t.Fatalf("result = %+v", res)
			}
		})
	}
}

func TestUploadRefusedWithoutUploadDir(t *testing.T) {
	dir, _ := uploadTree(t)
	h := newHarness(t, nil)
	ref := h.create("t-1", contract.SessionOptions{})
	for _, p := range []string{"/etc/passwd", filepath.Join(dir, "report.pdf"), "report.pdf"} {
		_, err := call[contract.UploadResult](h, contract.ActivityUpload, contract.UploadRequest{
			Call: contract.Call{Session: ref}, Args: contract.UploadArgs{ID: "3", Path: p},
		})
		f := wantCode(t, err, contract.CodeRefused, false)
		if !strings.Contains(f.Message, "--upload-dir") || !strings.Contains(f.Message, "DURABLE_BROWSER_UPLOAD_DIR") {
			t.Fatalf("refusal does not name the flag: %s", f.Message)
		}
	}
	if b := h.browser(0); len(b.uploads) != 0 {
		t.Fatalf("the browser was given %v", b.uploads)
	}
}
