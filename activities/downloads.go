package activities

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/capture"
	"github.com/durable-browser/durable-browser/internal/evidence"
	"github.com/durable-browser/durable-browser/internal/redact"
	"github.com/durable-browser/durable-browser/internal/webfetch"
)

// Downloads lists finished downloads and files each one; a retry finds them
// filed already and writes nothing twice.
func (a *Activities) Downloads(ctx context.Context, req contract.DownloadsRequest) (*contract.DownloadsResult, error) {
	s, done, err := a.begin(ctx, req.Session, nil)
	if err != nil {
		return nil, err
	}
	defer done()
	if s.sess.DownloadDir == "" {
		return nil, contract.Fail(contract.CodeRefused, "this session's provider (%s) keeps no downloads; use a local session to download files", s.ref.Provider)
	}
	list, err := s.browser.Downloads(ctx)
	if err != nil {
		return nil, driverFailure(err)
	}
	typed := a.typedSecrets(s.browser)
	res := &contract.DownloadsResult{OK: true, Downloads: []contract.Download{}}
	for _, d := range list {
		if d.NotSaved != "" {
			res.Downloads = append(res.Downloads, d)
			continue
		}
		d, f := a.fileDownload(ctx, s.ref.Tag, filepath.Join(s.sess.DownloadDir, d.Name), d, typed)
		if f != nil {
			return nil, f
		}
		res.Downloads = append(res.Downloads, d)
	}
	return res, nil
}

// maxRedactedDownload is the largest text download redacted before it is
// filed: it is read whole to be redacted, as a read is (the cap on what one
// read holds and files). A larger one is filed as a binary file is.
const maxRedactedDownload = capture.MaxRawBytes

// fileDownload files one download (the file at path) once per session: its
// call id is "download", not the call's, so its key
// (download-browser_downloads-<sha256[:12]>.<ext>, the one key format)
// depends on the session and the bytes filed only, and a later call finds it
// filed and writes nothing.
//
// A text file (by its extension's type, else by its first bytes, as
// web_fetch decides what is text) up to maxRedactedDownload is read whole
// and filed redacted, like every text the worker files: the answer's size,
// sha256 and evidence are those of the redacted body, and redacted says
// redaction changed it. Any other file cannot be redacted without
// corrupting it: it is filed as captured (one that fits the inline budget
// read whole, so an image rides inline; a larger one streamed from disk,
// never read whole), unless it holds a secret typed in the session, in any
// spelling the egress guard knows; then nothing of it is filed and the
// answer says it was withheld.
func (a *Activities) fileDownload(ctx context.Context, tag, path string, d contract.Download, typed *typedSet) (contract.Download, *contract.Failure) {
	changed := contract.Fail(contract.CodeCommandFailed, "download %s changed on disk after it finished", d.Name)
	f, err := os.Open(path)
	if err != nil {
		return d, contract.Fail(contract.CodeCommandFailed, "reading download %s: %v", d.Name, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || st.Size() != d.Size {
		return d, changed
	}
	head := make([]byte, 512)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return d, changed
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return d, changed
	}
	ext := strings.TrimPrefix(filepath.Ext(d.Name), ".")
	ct, text := downloadType(ext, head[:n])
	fl := filing{
		tool: contract.ToolDownloads, args: map[string]string{"name": d.Name}, session: tag,
		callID: "download", ext: ext, contentType: ct, extractor: "download",
	}
	whole := func() ([]byte, bool) {
		body, err := io.ReadAll(io.LimitReader(f, d.Size+1))
		return body, err == nil && int64(len(body)) == d.Size && evidence.SHA256Hex(body) == d.SHA256
	}

	if text && d.Size <= int64(maxRedactedDownload) {
		body, ok := whole()
		if !ok {
			return d, changed
		}
		// Not verbatim: the worker's evidence.Filer redacts it.
		fl.body = body
		cc, err := a.file(ctx, fl)
		if err != nil {
			return d, evidenceFailure(err)
		}
		d.Redacted = cc.SHA256 != d.SHA256
		d.Size, d.SHA256, d.Evidence = cc.Size, cc.SHA256, cc
		return d, nil
	}

	if name, found, err := typed.in(f); err != nil {
		return d, contract.Fail(contract.CodeCommandFailed, "reading download %s: %v", d.Name, err)
	} else if found {
		kind := "binary file"
		if text {
			kind = fmt.Sprintf("text file over %d bytes", maxRedactedDownload)
		}
		return contract.Download{Name: d.Name, Size: d.Size, Withheld: fmt.Sprintf(
			"not filed: it holds secret %s, typed in this session, and a %s (%s) cannot be redacted; it stays on the worker only",
			name, kind, ct)}, nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return d, changed
	}
	fl.verbatim = true
	if d.Size <= int64(evidence.DefaultInlineBudget) {
		body, ok := whole()
		if !ok {
			return d, changed
		}
		fl.body = body
	} else {
		fl.file, fl.size, fl.sha256 = f, d.Size, d.SHA256
	}
	cc, err := a.file(ctx, fl)
	if err != nil {
		return d, evidenceFailure(err)
	}
	d.Evidence = cc
	return d, nil
}

// downloadType is a download's media type, and whether it is text as
// web_fetch reads text: its extension's type, else (no extension, an
// unknown one or application/octet-stream) the type its first bytes are
// sniffed as, else application/octet-stream.
func downloadType(ext string, head []byte) (string, bool) {
	ct := ""
	if ext != "" {
		ct = mime.TypeByExtension("." + strings.ToLower(ext))
	}
	if mt := mediaType(ct); mt == "" || mt == "application/octet-stream" {
		if len(head) == 0 {
			return "application/octet-stream", false
		}
		ct = http.DetectContentType(head)
	}
	return ct, webfetch.TextLike(mediaType(ct))
}

func mediaType(ct string) string {
	if mt, _, err := mime.ParseMediaType(ct); err == nil {
		return strings.ToLower(mt)
	}
	return strings.ToLower(strings.TrimSpace(strings.SplitN(ct, ";", 2)[0]))
}

// secretNamer is a driven browser that names the secrets typed in its
// session (driver.Browser; test fakes need not).
type secretNamer interface{ TypedSecrets() []string }

// typedSet is the secrets typed in a session, to find in a file that
// cannot be redacted; nil finds none.
type typedSet struct {
	m *redact.Matcher
	// longest is the longest value in bytes: no spelling of one is longer
	// than a few times it.
	longest int
}

// typedSecrets is the set of secrets typed in b's session, as the worker's
// secrets resolve them.
func (a *Activities) typedSecrets(b Browser) *typedSet {
	n, ok := b.(secretNamer)
	if !ok || a.o.Secrets == nil {
		return nil
	}
	var secs []redact.Secret
	longest := 0
	for _, name := range n.TypedSecrets() {
		if sec, ok := a.o.Secrets.Lookup(name); ok {
			secs = append(secs, sec)
			longest = max(longest, len(sec.Value))
		}
	}
	if len(secs) == 0 {
		return nil
	}
	return &typedSet{m: (*redact.Matcher)(nil).With(secs...), longest: longest}
}

// downloadScanChunk is how much of a file is searched at once.
const downloadScanChunk = 1 << 20

// in reads r to its end and names the first typed secret it holds. It
// reads a chunk at a time, each searched with the end of the one before
// it, longer than any spelling of a secret (an escape writes a byte in
// at most ten), so none is missed where two chunks meet.
func (t *typedSet) in(r io.Reader) (string, bool, error) {
	if t == nil || t.m.Len() == 0 {
		return "", false, nil
	}
	overlap := 16*t.longest + 64
	buf := make([]byte, 0, downloadScanChunk+overlap)
	for {
		n, err := io.ReadFull(r, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if name, found := t.m.Find("", string(buf)); found {
			return name, true, nil
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return "", false, nil
		}
		if err != nil {
			return "", false, err
		}
		keep := min(overlap, len(buf))
		copy(buf, buf[len(buf)-keep:])
		buf = buf[:keep]
	}
}
