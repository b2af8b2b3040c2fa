package evidence

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// reads counts Get calls and the bytes PutReader bodies gave.
type reads struct {
	Store
	gets atomic.Int32
}

func (r *reads) Get(ctx context.Context, key string) ([]byte, Meta, error) {
	r.gets.Add(1)
	return r.Store.Get(ctx, key)
}

// countingReader counts the bytes read through it.
type countingReader struct {
	io.ReadSeeker
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.ReadSeeker.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// A file is filed from disk by its precomputed hash; filing it again reads
// nothing of it and writes nothing.
func testFileStreamed(t *testing.T, store Store) {
	ctx := context.Background()
	body := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
	path := filepath.Join(t.TempDir(), "report.pdf")
	if err := os.WriteFile(path, body, 0o600); err != nil {
		t.Fatal(err)
	}
	sum := SHA256Hex(body)
	fileOnce := func() (Filing, *countingReader) {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		cr := &countingReader{ReadSeeker: f}
		fl := filing("")
		fl.Tool, fl.Ext, fl.ContentType, fl.Body = "browser_downloads", "pdf", "application/pdf", nil
		fl.File, fl.Size, fl.FileSHA256 = cr, int64(len(body)), sum
		return fl, cr
	}
	counted := &counting{Store: store}
	fl, _ := fileOnce()
	cc, err := File(ctx, counted, fl)
	if err != nil {
		t.Fatal(err)
	}
	if cc.SHA256 != sum || cc.Size != int64(len(body)) || cc.Inline != "" {
		t.Fatalf("claim check %+v", cc)
	}
	got, r, err := GetVerified(ctx, store, cc.Key)
	if err != nil || !bytes.Equal(got, body) || r == nil || r.Size != int64(len(body)) {
		t.Fatalf("get: %d bytes, receipt %+v, %v", len(got), r, err)
	}
	if n := len(counted.writes()); n != 2 {
		t.Fatalf("first filing wrote %v, want body and receipt", counted.writes())
	}
	fl, cr := fileOnce()
	fl.Receipt.ActivityID = "another call"
	again, err := File(ctx, counted, fl)
	if err != nil {
		t.Fatal(err)
	}
	if again.Key != cc.Key || len(counted.writes()) != 2 || cr.n.Load() != 0 {
		t.Fatalf("filing again: key %s (first %s), writes %v, %d bytes of the file read", again.Key, cc.Key, counted.writes(), cr.n.Load())
	}
	// A hash that does not describe the file is refused or, where the store
	// cannot check while streaming, never lands under another file's key.
	fl, _ = fileOnce()
	fl.Size = 10
	fl.FileSHA256 = SHA256Hex([]byte("other"))
	if _, err := File(ctx, NewMemory(), fl); err == nil {
		t.Fatal("memory store took a body that does not match its hash")
	}
}

// A body over the reader's limit is refused from its size alone.
func testGetBounded(t *testing.T, store Store) {
	ctx := context.Background()
	f := filing(string(bytes.Repeat([]byte("x"), 5000)))
	cc, err := File(ctx, store, f)
	if err != nil {
		t.Fatal(err)
	}
	rs := &reads{Store: store}
	_, _, err = GetVerifiedMax(ctx, rs, cc.Key, 4096)
	var tl *TooLargeError
	if !errors.As(err, &tl) || !errors.Is(err, ErrTooLarge) || tl.Size != 5000 || tl.Max != 4096 {
		t.Fatalf("over the limit: %v", err)
	}
	if n := rs.gets.Load(); n != 0 {
		t.Fatalf("a body over the limit was read (%d gets)", n)
	}
	body, _, err := GetVerifiedMax(ctx, rs, cc.Key, 5000)
	if err != nil || len(body) != 5000 {
		t.Fatalf("at the limit: %d bytes, %v", len(body), err)
	}
	if _, _, err := GetVerifiedMax(ctx, rs, "ev/nope/x-browser_read-0123456789ab.md", 10); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
}

func TestFileStreamedMemory(t *testing.T) { testFileStreamed(t, NewMemory()) }
func TestGetBoundedMemory(t *testing.T)   { testGetBounded(t, NewMemory()) }

func TestS3FileStreamedAndGetBounded(t *testing.T) {
	store := s3Store(t, gateway(t), S3Options{Prefix: "streamed"})
	t.Run("streamed", func(t *testing.T) { testFileStreamed(t, store) })
	t.Run("bounded", func(t *testing.T) { testGetBounded(t, store) })
}
