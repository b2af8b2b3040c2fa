package states

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/durable-browser/durable-browser/internal/devstack"
	"github.com/durable-browser/durable-browser/internal/evidence"
)

// newStore runs a versitygw on loopback and a store over it.
func newStore(t *testing.T, now *time.Time) *Store {
	t.Helper()
	ctx := context.Background()
	port, err := devstack.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := devstack.StartS3(ctx, devstack.S3Options{Address: fmt.Sprintf("127.0.0.1:%d", port), Dir: filepath.Join(t.TempDir(), "s3"), Bucket: "states-test"})
	if err != nil {
		t.Fatalf("versitygw: %v", err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	ev, err := evidence.NewS3(ctx, evidence.S3Options{Bucket: "states-test", Endpoint: srv.Endpoint(), PathStyle: true, Region: "us-east-1",
		AccessKey: srv.AccessKey(), SecretKey: srv.SecretKey()})
	if err != nil {
		t.Fatal(err)
	}
	st, err := New(Options{Client: ev.Client(), Bucket: "states-test", Sealer: sealer(t), Keep: 3, LeaseTTL: time.Minute, Now: func() time.Time { return *now }})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// Versions count up, a repeated save writes nothing, old versions are
// pruned, the newest is read back, and a tampered newest is refused.
func TestStoreVersions(t *testing.T) {
	now := time.Now()
	s := newStore(t, &now)
	ctx := context.Background()
	if st, v, err := s.Newest(ctx, "shop"); st != nil || v != 0 || err != nil {
		t.Fatalf("empty: %v %d %v", st, v, err)
	}
	for i := 1; i <= 5; i++ {
		got, err := s.Save(ctx, State{Name: "shop", Cookies: []Cookie{{Name: "sid", Value: fmt.Sprint(i), Domain: "a", Path: "/"}}})
		if err != nil || !got.Wrote || got.Version != int64(i) || got.Bytes == 0 {
			t.Fatalf("save %d: %+v %v", i, got, err)
		}
	}
	got, err := s.Save(ctx, State{Name: "shop", Cookies: []Cookie{{Name: "sid", Value: "5", Domain: "a", Path: "/"}}})
	if err != nil || got.Wrote || got.Version != 5 {
		t.Fatalf("a repeated save should write nothing: %+v %v", got, err)
	}
	st, v, err := s.Newest(ctx, "shop")
	if err != nil || v != 5 || st.Cookies[0].Value != "5" {
		t.Fatalf("newest: %+v v%d %v", st, v, err)
	}
	if vs, _ := s.versions(ctx, NameHash("shop")); len(vs) != 3 || vs[0] != 3 {
		t.Fatalf("kept versions %v, want the newest 3", vs)
	}
	list, err := s.List(ctx)
	if err != nil || len(list) != 1 || list[0].Name != "shop" || list[0].Newest != 5 || list[0].Versions != 3 {
		t.Fatalf("list: %+v %v", list, err)
	}
	// Copy version 4's bytes over version 5: moved, so refused.
	key := func(v int64) *string { return aws.String(s.dir(NameHash("shop")) + VersionKey(v)) }
	if _, err := s.o.Client.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("states-test"), Key: key(5), CopySource: aws.String("states-test/" + *key(4))}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Newest(ctx, "shop"); !errors.Is(err, ErrTampered) {
		t.Fatalf("a version moved under another number: %v", err)
	}
	n, err := s.Delete(ctx, "shop")
	if err != nil || n < 3 {
		t.Fatalf("delete: %d %v", n, err)
	}
	if st, _, err := s.Newest(ctx, "shop"); st != nil || err != nil {
		t.Fatalf("after delete: %+v %v", st, err)
	}
}

// Plaintext opens every version the bucket lists under the store's prefix
// (older ones too) with the store's key, and nothing else: a key outside
// the prefix, a lease, or a version moved under another number.
func TestStorePlaintext(t *testing.T) {
	now := time.Now()
	s := newStore(t, &now).Under("checkpoints", 2)
	ctx := context.Background()
	for _, val := range []string{"one", "two"} {
		if _, err := s.Save(ctx, State{Name: "tag-1", Cookies: []Cookie{{Name: "sid", Value: val, Domain: "a", Path: "/"}}}); err != nil {
			t.Fatal(err)
		}
	}
	dir := s.dir(NameHash("tag-1"))
	for v, want := range map[int64]string{1: `"value":"one"`, 2: `"value":"two"`} {
		pt, err := s.Plaintext(ctx, dir+VersionKey(v))
		if err != nil || !strings.Contains(string(pt), want) || !strings.Contains(string(pt), `"tag-1"`) {
			t.Fatalf("v%d: %s %v", v, pt, err)
		}
	}
	for _, key := range []string{"states/" + NameHash("tag-1") + "/" + VersionKey(1), dir + "lease.json", "checkpoints/x/" + VersionKey(1)} {
		if _, err := s.Plaintext(ctx, key); err == nil {
			t.Errorf("%s opened", key)
		}
	}
	if _, err := s.o.Client.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("states-test"), Key: aws.String(dir + VersionKey(2)),
		CopySource: aws.String("states-test/" + dir + VersionKey(1))}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Plaintext(ctx, dir+VersionKey(2)); !errors.Is(err, ErrTampered) {
		t.Fatalf("a version moved under another number: %v", err)
	}
}

// One session holds a state's lease at a time; it is taken back when
// released or lapsed, or handed to the session replacing its holder.
func TestStoreLease(t *testing.T) {
	now := time.Now()
	s := newStore(t, &now)
	ctx := context.Background()
	if err := s.Acquire(ctx, "shop", "a-1", ""); err != nil {
		t.Fatal(err)
	}
	if err := s.Acquire(ctx, "shop", "a-1", ""); err != nil {
		t.Fatalf("a retried acquire: %v", err)
	}
	var held *HeldError
	if err := s.Acquire(ctx, "shop", "b-1", ""); !errors.As(err, &held) {
		t.Fatalf("a second session: %v", err)
	}
	if err := s.Renew(ctx, "shop", "b-1"); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("renew by a non-holder: %v", err)
	}
	if err := s.Acquire(ctx, "shop", "a-2", "a-1"); err != nil {
		t.Fatalf("the replacing session: %v", err)
	}
	if err := s.Release(ctx, "shop", "a-1"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.Holds(ctx, "shop", "a-2"); !ok {
		t.Fatal("a release by a former holder dropped the lease")
	}
	now = now.Add(2 * time.Minute) // a-2's worker died: the lease lapses
	if err := s.Acquire(ctx, "shop", "b-1", ""); err != nil {
		t.Fatalf("after the lease lapsed: %v", err)
	}
	if err := s.Renew(ctx, "shop", "a-2"); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("the lapsed holder renewing: %v", err)
	}
	if err := s.Release(ctx, "shop", "b-1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Acquire(ctx, "shop", "c-1", ""); err != nil {
		t.Fatalf("after release: %v", err)
	}
}
