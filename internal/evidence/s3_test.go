package evidence

import (
	"bytes"
	"context"
	"errors"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/durable-browser/durable-browser/internal/devstack"
	"github.com/durable-browser/durable-browser/internal/s3log"
)

// gateway starts a real versitygw on a free loopback port over a temp dir.
func gateway(t testing.TB) *devstack.S3 {
	t.Helper()
	if _, err := devstack.FindVersitygw(""); err != nil {
		t.Fatalf("versitygw not installed: run `make tools` or `%s`", devstack.VersitygwInstall)
	}
	port, err := devstack.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := devstack.StartS3(context.Background(), devstack.S3Options{
		Address: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		Dir:     t.TempDir(),
		Bucket:  "evidence",
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Error(err)
		}
	})
	return srv
}

func s3Store(t testing.TB, srv *devstack.S3, o S3Options) *S3Store {
	t.Helper()
	o.Endpoint, o.PathStyle = srv.Endpoint(), true
	o.AccessKey, o.SecretKey = srv.AccessKey(), srv.SecretKey()
	if o.Bucket == "" {
		o.Bucket = srv.Bucket()
	}
	s, err := NewS3(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestS3Store(t *testing.T) {
	srv := gateway(t)
	ctx := context.Background()
	raw := srv.Client()
	store := s3Store(t, srv, S3Options{Prefix: "/team/evidence/"})

	t.Run("file, get, claim check resolves to the same bytes", func(t *testing.T) {
		png := bytes.Repeat([]byte{0x89, 'P', 'N', 'G', 0}, 40<<10) // 200 KiB "screenshot"
		f := filing("")
		f.Tool, f.Ext, f.ContentType, f.Body = "screenshot", "png", "image/png", png
		cc, err := File(ctx, store, f)
		if err != nil {
			t.Fatal(err)
		}
		if cc.Inline != "" || cc.Size != int64(len(png)) || cc.SHA256 != SHA256Hex(png) {
			t.Fatalf("claim check = %+v", cc)
		}
		// The store prefix is applied inside the store: the S3 key carries it.
		head, err := raw.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("evidence"), Key: aws.String("team/evidence/" + cc.Key)})
		if err != nil {
			t.Fatalf("object not under the prefix: %v", err)
		}
		if aws.ToString(head.ContentType) != "image/png" || MetaValue(head.Metadata, "sha256") != cc.SHA256 {
			t.Fatalf("stored object: %v %v", aws.ToString(head.ContentType), head.Metadata)
		}
		body, r, err := GetVerified(ctx, store, cc.Key)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(body, png) || r == nil || r.SHA256 != cc.SHA256 || r.BodyKey != cc.Key || r.Tool != "screenshot" {
			t.Fatalf("GetClaim: %d bytes, receipt %+v", len(body), r)
		}
		m, err := store.Head(ctx, cc.ReceiptKey)
		if err != nil || m.ContentType != "application/json" || m.SHA256 == "" {
			t.Fatalf("receipt head = %+v, %v", m, err)
		}
	})

	t.Run("a new filing is a PUT for the body and one for the receipt, with no look first", func(t *testing.T) {
		cs := *store
		var reqs *s3log.Log
		cs.client, reqs = s3log.Client(store.client)
		f := filing("counted")
		f.CallID = "counted"
		if _, err := File(ctx, &cs, f); err != nil {
			t.Fatal(err)
		}
		if got := reqs.Take(); !slices.Equal(got, []string{"PUT", "PUT"}) {
			t.Fatalf("a new filing sent %v, want PUT PUT", got)
		}
		// Filed again (a retry): both PUTs are refused, and only then is
		// what is there read.
		if _, err := File(ctx, &cs, f); err != nil {
			t.Fatal(err)
		}
		if got := reqs.Take(); !slices.Equal(got, []string{"PUT", "HEAD", "PUT", "HEAD"}) {
			t.Fatalf("a retried filing sent %v, want PUT HEAD PUT HEAD", got)
		}
	})

	t.Run("re-filing under retry writes nothing", func(t *testing.T) {
		counted := &counting{Store: store}
		first, err := File(ctx, counted, filing("retry me"))
		if err != nil {
			t.Fatal(err)
		}
		before, err := store.Head(ctx, first.Key)
		if err != nil {
			t.Fatal(err)
		}
		later := filing("retry me")
		later.Receipt.Time = when.Add(3) // a retry whose receipt bytes differ
		for _, f := range []Filing{filing("retry me"), later} {
			cc, err := File(ctx, counted, f)
			if err != nil {
				t.Fatal(err)
			}
			if cc != first {
				t.Fatalf("retry claim check %+v != %+v", cc, first)
			}
		}
		if w := counted.writes(); len(w) != 2 {
			t.Fatalf("writes = %v, want only the first filing's two", w)
		}
		after, err := store.Head(ctx, first.Key)
		if err != nil || after.ETag != before.ETag || !after.LastModified.Equal(before.LastModified) {
			t.Fatalf("object changed: %+v -> %+v (%v)", before, after, err)
		}
		res, err := store.Put(ctx, first.Key, []byte("retry me"), "text/markdown")
		if err != nil || !res.Existed {
			t.Fatalf("direct re-put = %+v, %v; want Existed", res, err)
		}
		if _, err := store.Put(ctx, first.Key, []byte("other"), "text/markdown"); !errors.Is(err, ErrKeyConflict) {
			t.Fatalf("different bytes at the key = %v, want ErrKeyConflict", err)
		}
	})

	t.Run("concurrent filings of one call write once", func(t *testing.T) {
		counted := &counting{Store: store}
		f := filing("raced")
		f.CallID = "race"
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() { _, errs[i] = File(ctx, counted, f) })
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if w := counted.writes(); len(w) != 2 {
			t.Fatalf("writes = %v, want 2", w)
		}
	})

	t.Run("the write is conditional, so a racing writer is never overwritten", func(t *testing.T) {
		key := store.ObjectKey("race/cond.txt")
		if _, err := raw.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("evidence"), Key: aws.String(key),
			Body: bytes.NewReader([]byte("first"))}); err != nil {
			t.Fatal(err)
		}
		_, err := store.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("evidence"), Key: aws.String(key),
			Body: bytes.NewReader([]byte("second")), IfNoneMatch: aws.String("*")})
		if S3Status(err) != 412 {
			t.Fatalf("conditional overwrite = %v, want 412 Precondition Failed", err)
		}
	})

	t.Run("tampered objects fail verification", func(t *testing.T) {
		f := filing("the truth")
		f.CallID = "tamper"
		cc, err := File(ctx, store, f)
		if err != nil {
			t.Fatal(err)
		}
		full := aws.String(store.ObjectKey(cc.Key))
		overwrite := func(body []byte, meta map[string]string) {
			t.Helper()
			if _, err := raw.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("evidence"), Key: full,
				Body: bytes.NewReader(body), Metadata: meta}); err != nil {
				t.Fatal(err)
			}
		}
		// Bytes replaced, recorded hash kept.
		overwrite([]byte("a lie"), map[string]string{"sha256": cc.SHA256})
		_, _, err = GetVerified(ctx, store, cc.Key)
		var he *HashMismatchError
		if !errors.As(err, &he) || he.Want != cc.SHA256 || he.Got != SHA256Hex([]byte("a lie")) {
			t.Fatalf("replaced bytes: %v", err)
		}
		// Bytes and recorded hash replaced together: the key's hash catches it.
		overwrite([]byte("a lie"), map[string]string{"sha256": SHA256Hex([]byte("a lie"))})
		if _, _, err := GetVerified(ctx, store, cc.Key); !errors.Is(err, ErrHashMismatch) {
			t.Fatalf("replaced bytes and hash: %v", err)
		}
		// No recorded hash at all.
		overwrite([]byte("the truth"), nil)
		if _, _, err := store.Get(ctx, cc.Key); !errors.Is(err, ErrHashMismatch) || !strings.Contains(err.Error(), "no recorded sha256") {
			t.Fatalf("no recorded hash: %v", err)
		}
	})

	t.Run("missing objects and buckets", func(t *testing.T) {
		if _, err := store.Head(ctx, "no/such/key.png"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("head = %v", err)
		}
		if _, _, err := store.Get(ctx, "no/such/key.png"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("get = %v", err)
		}
		if _, _, err := GetVerified(ctx, store, "no/such/c-t-000000000000.png"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("GetVerified = %v", err)
		}
		nobucket := s3Store(t, srv, S3Options{Bucket: "not-created"})
		_, err := nobucket.Put(ctx, "k", []byte("x"), "text/plain")
		if err == nil || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "not-created") {
			t.Fatalf("put into a missing bucket = %v", err)
		}
	})
}

// TestS3SSE checks the SSE option end to end. versitygw's posix backend does
// not implement server-side encryption; whatever it answers, the store must
// either file and read back the object or fail cleanly, naming the object.
func TestS3SSE(t *testing.T) {
	srv := gateway(t)
	ctx := context.Background()
	for _, o := range []S3Options{{SSE: "AES256"}, {SSE: "aws:kms", KMSKeyID: "alias/evidence"}} {
		t.Run(o.SSE, func(t *testing.T) {
			store := s3Store(t, srv, o)
			f := filing("encrypted please")
			f.CallID = "sse-" + strings.ReplaceAll(o.SSE, ":", "")
			cc, err := File(ctx, store, f)
			if err != nil {
				if !strings.Contains(err.Error(), "s3://evidence/") {
					t.Fatalf("SSE failure does not name the object: %v", err)
				}
				t.Skipf("gateway refuses SSE %s (cleanly): %v", o.SSE, err)
			}
			body, _, err := GetVerified(ctx, store, cc.Key)
			if err != nil || string(body) != "encrypted please" {
				t.Fatalf("read back = %q, %v", body, err)
			}
			t.Logf("gateway accepted SSE %s", o.SSE)
		})
	}
}

// BenchmarkS3File files a page's text and its receipt, as a read or a
// snapshot does, each call under its own key.
//
//	go test -run '^$' -bench BenchmarkS3File -benchtime 300x ./internal/evidence/
func BenchmarkS3File(b *testing.B) {
	store := s3Store(b, gateway(b), S3Options{})
	ctx := context.Background()
	page := strings.Repeat("A line of the page's text.\n", 80) // about 2 KiB
	for i := 0; b.Loop(); i++ {
		f := filing(page + strconv.Itoa(i))
		f.CallID = strconv.Itoa(i)
		if _, err := File(ctx, store, f); err != nil {
			b.Fatal(err)
		}
	}
}
