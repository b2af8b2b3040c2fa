package activities

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/durable-browser/durable-browser/contract"
)

// errNotUploadable is every reason a model's path cannot be uploaded: a
// missing file, a directory, a path or symlink leading outside the upload
// directory. One message for all, so a refusal never tells whether a path
// exists somewhere else on the worker.
var errNotUploadable = errors.New("not a file in the upload directory")

// uploadFile is a file vetted for upload: Path is its real location inside
// the upload directory, with no symlink left in it, and the same file that
// was opened through the directory's root.
type uploadFile struct {
	Path string
	Name string
	Size int64
}

// vetUpload resolves the model's path inside dir. The lookup goes through
// os.Root, so neither "..", an absolute path nor a symlink can lead out of
// dir; the path given to the browser is then the file's real path, checked
// to be the very file opened, so the browser reading it later follows no
// link either.
func vetUpload(dir, path string) (*uploadFile, error) {
	rel := strings.TrimSpace(path)
	if rel == "" {
		return nil, errNotUploadable
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("upload directory: %w", err)
	}
	if filepath.IsAbs(rel) {
		// An absolute path is accepted only when it names a file inside dir.
		r, ok := relInside(dir, rel)
		if !ok {
			if r, ok = relInside(realDir, rel); !ok {
				return nil, errNotUploadable
			}
		}
		rel = r
	}
	root, err := os.OpenRoot(realDir)
	if err != nil {
		return nil, fmt.Errorf("upload directory: %w", err)
	}
	defer root.Close()
	// Stat before opening: opening a FIFO would block.
	if st, err := root.Stat(rel); err != nil || !st.Mode().IsRegular() {
		return nil, errNotUploadable
	}
	f, err := root.Open(rel)
	if err != nil {
		return nil, errNotUploadable
	}
	defer f.Close()
	opened, err := f.Stat()
	if err != nil || !opened.Mode().IsRegular() {
		return nil, errNotUploadable
	}
	// The root resolved any symlink inside dir; find where it led without
	// following anything outside, and make sure it is the file opened.
	real, err := filepath.EvalSymlinks(filepath.Join(realDir, filepath.FromSlash(rel)))
	if err != nil {
		return nil, errNotUploadable
	}
	if _, ok := relInside(realDir, real); !ok {
		return nil, errNotUploadable
	}
	st, err := os.Lstat(real)
	if err != nil || !os.SameFile(st, opened) {
		return nil, errNotUploadable
	}
	return &uploadFile{Path: real, Name: filepath.Base(real), Size: opened.Size()}, nil
}

// relInside returns p relative to dir when p lies strictly inside dir.
func relInside(dir, p string) (string, bool) {
	r, err := filepath.Rel(dir, p)
	if err != nil || r == "." || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) || filepath.IsAbs(r) {
		return "", false
	}
	return r, true
}

// uploadRefusal is the failure for an upload this worker will not make.
func (a *Activities) uploadRefusal(path string, err error) *contract.Failure {
	if errors.Is(err, errNotUploadable) || errors.Is(err, fs.ErrNotExist) {
		return contract.Fail(contract.CodeRefused, "%q is not a file in the upload directory; uploads come only from the directory the host configured (--upload-dir): name a file there, relative to it, such as \"report.pdf\"", path)
	}
	return contract.Fail(contract.CodeRefused, "the upload directory cannot be read on this worker; ask the host to check --upload-dir")
}
