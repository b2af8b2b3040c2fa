package driver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-rod/rod/lib/proto"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/listed"
)

const typeIframe = proto.TargetTargetInfoType("iframe")

type download struct {
	guid      string
	suggested string
	frame     proto.PageFrameID // the frame that began it
	state     string            // in_progress, completed, canceled, failed
	done      *contract.Download
	skipped   string
}

type downloads struct {
	byGUID map[string]*download
	order  []string
	// max is how many the session saves (maxDownloads; a test lowers it).
	max int
	// reported is how many of order a run's answer has named.
	reported int
	// begun is closed (and replaced) when a download begins.
	begun chan struct{}
}

// downloadBegunLocked is the channel the next download's beginning
// closes; b.mu is held.
func (b *Browser) downloadBegunLocked() <-chan struct{} {
	if b.dl.begun == nil {
		b.dl.begun = make(chan struct{})
	}
	return b.dl.begun
}

// downloadAbortMax bounds how long a navigation Chrome aborted waits for
// the download it may have become: Chrome reports the download a moment
// (tens of milliseconds) after it answers that the navigation was aborted,
// and an abort for another reason (a 204) fails that much later.
const downloadAbortMax = 2 * time.Second

// becameDownload says whether tab t's main frame began a download, among
// those after the first since: a navigation Chrome aborted (net::ERR_ABORTED)
// because its response is a file to save, not a page.
func (b *Browser) becameDownload(ctx context.Context, t *tab, since int) bool {
	if b.o.DownloadDir == "" {
		return false // downloads are off: Chrome saves nothing
	}
	bound := time.NewTimer(downloadAbortMax)
	defer bound.Stop()
	for {
		b.mu.Lock()
		for _, g := range b.dl.order[min(since, len(b.dl.order)):] {
			if d := b.dl.byGUID[g]; d != nil && string(d.frame) == string(t.id) {
				b.mu.Unlock()
				return true
			}
		}
		begun := b.downloadBegunLocked()
		b.mu.Unlock()
		select {
		case <-begun:
		case <-bound.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// unreportedDownloadsLocked is the downloads begun since a run's answer
// last named them, as every other list of a run's answer is what happened
// since the last one (a download begun between two runs is the next
// one's); they count as named from now. b.mu is held.
func (b *Browser) unreportedDownloadsLocked() listed.List[begun] {
	var out listed.List[begun]
	for _, g := range b.dl.order[min(b.dl.reported, len(b.dl.order)):] {
		if d := b.dl.byGUID[g]; d != nil {
			out.Add(begun{suggested: d.suggested, skipped: d.skipped})
		}
	}
	b.dl.reported = len(b.dl.order)
	return out
}

// begun is a download a run began: the name the page suggested, and why
// it was cancelled when it was.
type begun struct{ suggested, skipped string }

// answerName is the download as a run's answer names it: safeName makes
// it the name browser_downloads lists (but for a number a second file of
// one name gets).
func (g begun) answerName(b *Browser) string {
	if g.skipped != "" {
		return b.safeName(g.suggested) + " (not saved: " + g.skipped + ")"
	}
	return b.safeName(g.suggested)
}

// ownFrame notes a frame one of this session's pages announced: in a
// shared browser, Browser.downloadWillBegin reaches every connection with
// download events on, whichever context the download is in.
func (b *Browser) ownFrame(id proto.PageFrameID) {
	if b.o.BrowserContextID == "" || id == "" {
		return
	}
	b.mu.Lock()
	b.ownFrames[id] = true
	b.mu.Unlock()
}

// ownsFrameLocked says the frame is one of this session's pages' (always,
// in a browser of its own); b.mu is held.
func (b *Browser) ownsFrameLocked(id proto.PageFrameID) bool {
	if b.o.BrowserContextID == "" {
		return true
	}
	return b.ownFrames[id] || b.tabs[proto.TargetTargetID(id)] != nil || b.frameSess[id] != ""
}

func (b *Browser) downloadBegin(e *proto.BrowserDownloadWillBegin) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.dl.byGUID[e.GUID]; ok {
		return
	}
	if !b.ownsFrameLocked(e.FrameID) {
		return // another session's, in the browser it shares with this one
	}
	d := &download{guid: e.GUID, suggested: e.SuggestedFilename, frame: e.FrameID, state: "in_progress"}
	b.dl.byGUID[e.GUID] = d
	b.dl.order = append(b.dl.order, e.GUID)
	if b.dl.begun != nil {
		close(b.dl.begun)
		b.dl.begun = nil
	}
	if len(b.dl.order) > b.dl.max {
		d.skipped = fmt.Sprintf("more than %d downloads in this session", b.dl.max)
		go b.cancelDownload(e.GUID)
	}
}

func (b *Browser) cancelDownload(guid string) {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	_ = proto.BrowserCancelDownload{GUID: guid}.Call(b.client(ctx, ""))
	_ = os.Remove(filepath.Join(b.o.DownloadDir, guid))
}

func (b *Browser) downloadProgress(e *proto.BrowserDownloadProgress) {
	b.mu.Lock()
	d := b.dl.byGUID[e.GUID]
	if d == nil || d.state != "in_progress" {
		b.mu.Unlock()
		return
	}
	if d.skipped == "" && (e.TotalBytes > maxFileBytes || e.ReceivedBytes > maxFileBytes) {
		d.skipped = "larger than 100 MiB"
		d.state = "canceled"
		b.mu.Unlock()
		go b.cancelDownload(e.GUID)
		return
	}
	switch e.State {
	case proto.BrowserDownloadProgressStateCompleted:
		d.state = "finishing"
		b.mu.Unlock()
		go b.finishDownload(d)
		return
	case proto.BrowserDownloadProgressStateCanceled:
		d.state = "canceled"
	}
	b.mu.Unlock()
}

// finishDownload renames the GUID-named file to a safe unique name and hashes it.
func (b *Browser) finishDownload(d *download) {
	src := filepath.Join(b.o.DownloadDir, d.guid)
	name := b.safeName(d.suggested)
	b.mu.Lock()
	skipped := d.skipped
	b.mu.Unlock()
	var done *contract.Download
	var state = "failed"
	if skipped == "" {
		dst := uniquePath(b.o.DownloadDir, name)
		if err := os.Rename(src, dst); err == nil {
			if dl, err := hashFile(dst); err == nil {
				done, state = dl, "completed"
			}
		}
	} else {
		_ = os.Remove(src)
	}
	b.mu.Lock()
	d.state, d.done = state, done
	b.mu.Unlock()
}

func hashFile(p string) (*contract.Download, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if n > maxFileBytes {
		_ = os.Remove(p)
		return nil, fmt.Errorf("download over 100 MiB")
	}
	return &contract.Download{Name: filepath.Base(p), Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// safeName keeps a page-suggested file name inside the download directory
// and short. The name is redacted before it is cut (clip), so a secret
// straddling the cut is hidden whole instead of leaving its prefix in the
// file's name, its listing and its evidence receipt; and before its
// characters are replaced, so a secret holding one of them is still found.
func (b *Browser) safeName(s string) string {
	if b.o.Redact != nil {
		s = b.o.Redact(s)
	}
	s = filepath.Base(strings.ReplaceAll(s, "\\", "/"))
	s = strings.Map(func(r rune) rune {
		if r < 32 || r == 127 || strings.ContainsRune(`/:*?"<>|`, r) {
			return '_'
		}
		return r
	}, s)
	s = strings.TrimLeft(s, ".")
	if s == "" {
		s = "download"
	}
	return b.clip(s, 120)
}

func uniquePath(dir, name string) string {
	p := filepath.Join(dir, name)
	ext := filepath.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	for i := 2; ; i++ {
		if _, err := os.Lstat(p); os.IsNotExist(err) {
			return p
		}
		p = filepath.Join(dir, fmt.Sprintf("%s (%d)%s", stem, i, ext))
	}
}

// Downloads lists every finished download of the session, each a file of
// its name in Options.DownloadDir (its Evidence is the caller's to fill).
// Downloads still under way are waited for, within ctx and the action
// timeout.
func (b *Browser) Downloads(ctx context.Context) ([]contract.Download, error) {
	if b.o.DownloadDir == "" {
		return nil, fmt.Errorf("driver: downloads are off: attach with Options.DownloadDir")
	}
	deadline := time.Now().Add(b.o.ActionTimeout)
	for {
		b.mu.Lock()
		pending := false
		var out []contract.Download
		notSaved := 0
		for _, g := range b.dl.order {
			d := b.dl.byGUID[g]
			switch {
			case d.done != nil:
				out = append(out, *d.done)
			case d.skipped != "":
				// Cancelled: said, not filed; the first of them only, as
				// a page may begin any number.
				if notSaved++; notSaved <= listed.Max {
					out = append(out, contract.Download{Name: b.safeName(d.suggested), NotSaved: d.skipped})
				}
			case d.state == "in_progress" || d.state == "finishing":
				pending = true
			}
		}
		b.mu.Unlock()
		if !pending || time.Now().After(deadline) {
			return out, nil
		}
		select {
		case <-ctx.Done():
			return out, nil
		case <-time.After(20 * time.Millisecond):
		}
	}
}
