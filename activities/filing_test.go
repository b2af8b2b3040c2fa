package activities

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sync/atomic"
	"testing"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/evidence"
)

// getCounting counts whole-body reads.
type getCounting struct {
	*evidence.Memory
	gets atomic.Int32
}

func (g *getCounting) Get(ctx context.Context, key string) ([]byte, evidence.Meta, error) {
	g.gets.Add(1)
	return g.Memory.Get(ctx, key)
}

// A download is filed once per session: a second browser_downloads call
// finds it under the same key and writes nothing.
func TestDownloadsFiledOnce(t *testing.T) {
	mem := evidence.NewMemory()
	h := newHarness(t, func(o *Options) { o.Evidence = &evidence.Filer{Store: mem} })
	dir := t.TempDir()
	h.prov.downloads = dir
	body := bytes.Repeat([]byte("pdf!"), 256<<10) // 1 MiB
	path := filepath.Join(dir, "invoice.pdf")
	if err := os.WriteFile(path, body, 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	h.setup = func(b *fakeBrowser) {
		b.downloads = []contract.Download{{Name: "invoice.pdf", Size: int64(len(body)), SHA256: hex.EncodeToString(sum[:])}}
	}
	ref := h.create("dl-1", contract.SessionOptions{})
	first, err := call[contract.DownloadsResult](h, contract.ActivityDownloads, contract.DownloadsRequest{Call: contract.Call{Session: ref}})
	if err != nil {
		t.Fatal(err)
	}
	writes := mem.Writes()
	if len(first.Downloads) != 1 || writes != 2 {
		t.Fatalf("first call: %+v, %d writes", first, writes)
	}
	cc := first.Downloads[0].Evidence
	got, _, err := evidence.GetVerified(context.Background(), mem, cc.Key)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("filed body: %d bytes, %v", len(got), err)
	}
	second, err := call[contract.DownloadsResult](h, contract.ActivityDownloads, contract.DownloadsRequest{Call: contract.Call{Session: ref}})
	if err != nil {
		t.Fatal(err)
	}
	if len(second.Downloads) != 1 || second.Downloads[0].Evidence.Key != cc.Key || mem.Writes() != writes {
		t.Fatalf("second call filed again: key %s (first %s), %d writes (first %d)", second.Downloads[0].Evidence.Key, cc.Key, mem.Writes(), writes)
	}
}

// A body over what a result may carry is refused from its size, unread.
func TestGetEvidenceRefusesOversizeUnread(t *testing.T) {
	store := &getCounting{Memory: evidence.NewMemory()}
	h := newHarness(t, func(o *Options) { o.Evidence = &evidence.Filer{Store: store} })
	big := bytes.Repeat([]byte("a"), contract.MaxEvidenceResult+1)
	key := evidence.BodyKey("", "wf", "wf-1", "call", "browser_read", evidence.SHA256Hex(big), "md")
	if _, err := store.Put(context.Background(), key, big, "text/markdown"); err != nil {
		t.Fatal(err)
	}
	_, err := call[contract.GetEvidenceResult](h, contract.ActivityEvidence, contract.GetEvidenceRequest{Key: key})
	wantCode(t, err, contract.CodeRefused, false)
	if n := store.gets.Load(); n != 0 {
		t.Fatalf("the oversized body was read %d time(s) before it was refused", n)
	}
}

// A small download is filed under the one key format and rides inline, as
// any small text body does.
func TestSmallDownloadKeyAndInline(t *testing.T) {
	mem := evidence.NewMemory()
	h := newHarness(t, func(o *Options) { o.Evidence = &evidence.Filer{Store: mem} })
	dir := t.TempDir()
	h.prov.downloads = dir
	body := []byte("id,name\n1,widget\n2,gadget\n3,doohick\n")
	path := filepath.Join(dir, "report.csv")
	if err := os.WriteFile(path, body, 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	h.setup = func(b *fakeBrowser) {
		b.downloads = []contract.Download{{Name: "report.csv", Size: int64(len(body)), SHA256: hex.EncodeToString(sum[:])}}
	}
	ref := h.create("dl-1", contract.SessionOptions{})
	res, err := call[contract.DownloadsResult](h, contract.ActivityDownloads, contract.DownloadsRequest{Call: contract.Call{Session: ref}})
	if err != nil {
		t.Fatal(err)
	}
	cc := res.Downloads[0].Evidence
	want := regexp.MustCompile(`^[^/]+/dl-1/download-browser_downloads-` + hex.EncodeToString(sum[:])[:12] + `\.csv$`)
	if !want.MatchString(cc.Key) {
		t.Fatalf("download key %q, want <workflow>/dl-1/download-browser_downloads-<sha256[:12]>.csv", cc.Key)
	}
	if cc.Inline != string(body) || cc.InlineEncoding != "" {
		t.Fatalf("a %d-byte CSV download rode inline as %q (%q), want its text", len(body), cc.Inline, cc.InlineEncoding)
	}
}

// Evidence holds no secret: a caller hands a.file what it read, and every
// text body and receipt field is redacted there; a PDF, an image or a
// download keeps its bytes (and so its digest).
func TestFilingRedactsText(t *testing.T) {
	const secret = "hunter2-s3cr3t-value"
	mem := evidence.NewMemory()
	h := newHarness(t, func(o *Options) { o.Evidence = &evidence.Filer{Store: mem} })
	h.red.Register(secret)
	body := []byte("before " + secret + " after")
	for _, tc := range []struct {
		name, contentType string
		verbatim, kept    bool
	}{
		{"markdown", "text/markdown; charset=utf-8", false, false},
		{"html", "text/html", false, false},
		{"json", "application/json", false, false},
		{"octets", "application/octet-stream", false, false},
		{"pdf", "application/pdf", false, true},
		{"image", "image/png", false, true},
		{"download", "text/csv", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cc, err := h.a.file(context.Background(), filing{
				tool: contract.ToolWebFetch, args: map[string]string{"q": secret}, session: "s-" + tc.name, ext: "bin",
				contentType: tc.contentType, body: body, verbatim: tc.verbatim,
				requestedURL: "http://127.0.0.1/p?token=" + secret, finalURL: "http://127.0.0.1/" + secret, title: "t " + secret,
			})
			if err != nil {
				t.Fatal(err)
			}
			got, rec, err := evidence.GetVerified(context.Background(), mem, cc.Key)
			if err != nil {
				t.Fatal(err)
			}
			if kept := bytes.Equal(got, body); kept != tc.kept {
				t.Errorf("body filed as %q; want kept=%v", got, tc.kept)
			}
			if !tc.kept && bytes.Contains(got, []byte(secret)) {
				t.Errorf("the secret is in the filed body: %q", got)
			}
			recJSON, _ := json.Marshal(rec)
			if bytes.Contains(recJSON, []byte(secret)) {
				t.Errorf("the secret is in the receipt: %s", recJSON)
			}
		})
	}
}
