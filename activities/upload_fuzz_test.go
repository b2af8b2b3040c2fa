package activities

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzVetUpload: whatever path a model gives, an upload resolves only to a
// regular file inside the upload directory, by its real path; never to the
// file beside the directory, however a symlink, "..", an absolute path or
// odd bytes spell it.
func FuzzVetUpload(f *testing.F) {
	base := f.TempDir()
	dir := filepath.Join(base, "uploads")
	outside := filepath.Join(base, "secret.txt")
	for _, d := range []string{dir, filepath.Join(dir, "sub")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			f.Fatal(err)
		}
	}
	for p, body := range map[string]string{outside: "outside", filepath.Join(dir, "a.txt"): "a", filepath.Join(dir, "sub", "b.txt"): "b"} {
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			f.Fatal(err)
		}
	}
	for link, to := range map[string]string{
		filepath.Join(dir, "out"):        outside,
		filepath.Join(dir, "up"):         base,
		filepath.Join(dir, "sub", "rel"): "../../secret.txt",
		filepath.Join(dir, "in"):         "a.txt",
		filepath.Join(dir, "loop"):       "loop",
	} {
		if err := os.Symlink(to, link); err != nil {
			f.Fatal(err)
		}
	}
	outStat, err := os.Stat(outside)
	if err != nil {
		f.Fatal(err)
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"a.txt", "sub/b.txt", "in", "out", "up/secret.txt", "sub/rel", "../secret.txt",
		outside, filepath.Join(dir, "a.txt"), filepath.Join(dir, "..", "secret.txt"), "sub/../a.txt", "./a.txt", " a.txt ",
		"sub", "loop", "a.txt/", "a.txt\x00", "%2e%2e/secret.txt", "sub//b.txt", "/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		u, err := vetUpload(dir, path)
		if err != nil {
			if err != errNotUploadable {
				t.Fatalf("vetUpload(%q): %v, want errNotUploadable", path, err)
			}
			return
		}
		if _, ok := relInside(realDir, u.Path); !ok {
			t.Fatalf("vetUpload(%q) resolved to %q, outside %q", path, u.Path, realDir)
		}
		st, err := os.Lstat(u.Path)
		if err != nil || !st.Mode().IsRegular() || os.SameFile(st, outStat) {
			t.Fatalf("vetUpload(%q) resolved to %q: %v %v", path, u.Path, st, err)
		}
		if real, err := filepath.EvalSymlinks(u.Path); err != nil || real != u.Path || u.Name != filepath.Base(u.Path) || u.Size != st.Size() {
			t.Fatalf("vetUpload(%q) = %+v, real path %q (%v)", path, u, real, err)
		}
	})
}
