package states

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/durable-browser/durable-browser/internal/devstack"
	"github.com/durable-browser/durable-browser/internal/evidence"
	"github.com/durable-browser/durable-browser/internal/s3log"
)

// newStore runs a versitygw on loopback and a store over it.
func newStore(t testing.TB, now *time.Time) *Store {
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

// A writer that knows its last save writes the next version with one PUT
// (and the DELETE of the version past Keep), writes nothing for the same
// state, and falls back to listing when another writer took the number.
func TestStoreSaveAfter(t *testing.T) {
	now := time.Now()
	base := newStore(t, &now)
	o := base.o
	var reqs *s3log.Log
	o.Client, reqs = s3log.Client(base.o.Client)
	s := &Store{o: o} // Keep 3
	ctx := context.Background()
	state := func(v string) State {
		return State{Name: "tag-1", Cookies: []Cookie{{Name: "sid", Value: v, Domain: "a", Path: "/"}}}
	}
	last, err := s.SaveAfter(ctx, state("1"), Saved{})
	if err != nil || last.Version != 1 || !last.Wrote {
		t.Fatalf("first save: %+v %v", last, err)
	}
	if got := reqs.Take(); !slices.Equal(got, []string{"LIST", "PUT"}) {
		t.Fatalf("a first save took %v, want a listing and the PUT", got)
	}
	steps := []struct {
		val     string
		version int64
		wrote   bool
		reqs    []string
	}{
		{"2", 2, true, []string{"PUT"}},
		{"2", 2, false, nil},
		{"3", 3, true, []string{"PUT"}},
		{"4", 4, true, []string{"PUT", "DELETE"}}, // version 1 is past Keep
	}
	for _, st := range steps {
		got, err := s.SaveAfter(ctx, state(st.val), last)
		if err != nil || got.Version != st.version || got.Wrote != st.wrote {
			t.Fatalf("save %s: %+v %v, want version %d wrote %v", st.val, got, err, st.version, st.wrote)
		}
		if r := reqs.Take(); !slices.Equal(r, st.reqs) {
			t.Fatalf("save %s took %v, want %v", st.val, r, st.reqs)
		}
		last = got
	}
	if vs, _ := s.versions(ctx, NameHash("tag-1")); !slices.Equal(vs, []int64{2, 3, 4}) {
		t.Fatalf("versions %v, want 2 3 4", vs)
	}
	// Another writer takes version 5: the next save lists and takes 6.
	if _, err := base.Save(ctx, state("other")); err != nil {
		t.Fatal(err)
	}
	got, err := s.SaveAfter(ctx, state("6"), last)
	if err != nil || got.Version != 6 || !got.Wrote {
		t.Fatalf("after another writer: %+v %v, want version 6", got, err)
	}
	if st, v, err := s.Newest(ctx, "tag-1"); err != nil || v != 6 || st.Cookies[0].Value != "6" {
		t.Fatalf("newest: %+v v%d %v", st, v, err)
	}
}

// BenchmarkStoreSave is a checkpoint's save of a changed state, as a
// session's writer does it after each run (SaveAfter) and as Save does it
// with no last save to go by (a listing and a digest read first).
//
//	go test -run '^$' -bench BenchmarkStoreSave -benchtime 200x ./internal/states/
func BenchmarkStoreSave(b *testing.B) {
	now := time.Now()
	for _, after := range []bool{false, true} {
		name := "save"
		if after {
			name = "save-after"
		}
		b.Run(name, func(b *testing.B) {
			s := newStore(b, &now).Under("checkpoints", 2)
			ctx := context.Background()
			var last Saved
			b.ResetTimer()
			for i := range b.N {
				st := State{Name: "tag-1", Cookies: []Cookie{{Name: "sid", Value: fmt.Sprint(i), Domain: "a", Path: "/"}}}
				var err error
				if after {
					last, err = s.SaveAfter(ctx, st, last)
				} else {
					last, err = s.Save(ctx, st)
				}
				if err != nil || !last.Wrote {
					b.Fatalf("save %d: %+v %v", i, last, err)
				}
			}
		})
	}
}
