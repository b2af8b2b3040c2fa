package main

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/internal/devstack"
	"github.com/durable-browser/durable-browser/internal/evidence"
	"github.com/durable-browser/durable-browser/internal/states"
)

// An operator lists the named states (their names only with the key) and
// deletes one by name.
func TestStatesListDelete(t *testing.T) {
	ctx := context.Background()
	port, err := devstack.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := devstack.StartS3(ctx, devstack.S3Options{Address: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Dir: t.TempDir(), Bucket: "stb"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	ev, err := evidence.NewS3(ctx, evidence.S3Options{Bucket: "stb", Endpoint: srv.Endpoint(), PathStyle: true, Region: "us-east-1",
		AccessKey: srv.AccessKey(), SecretKey: srv.SecretKey()})
	if err != nil {
		t.Fatal(err)
	}
	key := "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
	raw, _ := states.ParseKey(key)
	sealer, _ := states.NewSealer(raw)
	store, err := states.New(states.Options{Client: ev.Client(), Bucket: "stb", Sealer: sealer})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Save(ctx, states.State{Name: "shop-alice", Cookies: []states.Cookie{{Name: "sid", Value: "v", Domain: "a", Path: "/"}}}); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey())
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey())
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	envv := map[string]string{"AWS_ACCESS_KEY_ID": srv.AccessKey(), "AWS_SECRET_ACCESS_KEY": srv.SecretKey(), "DURABLE_BROWSER_S3_ENDPOINT": srv.Endpoint()}
	flags := []string{"--s3-bucket", "stb", "--s3-path-style", "--s3-region", "us-east-1"}

	code, out, stderr := runCLI(t, envv, append([]string{"states", "list"}, flags...)...)
	if code != 0 || strings.Contains(out, "shop-alice") || !strings.Contains(out, "v1") || !strings.Contains(out, states.NameHash("shop-alice")[:16]) {
		t.Fatalf("list without the key should show the hash, not the name: %d\n%s%s", code, out, stderr)
	}
	envv[states.EnvKey] = key
	// The lease's holder is a session tag a worker wrote in a shared
	// bucket: the table shows it terminal-safe.
	if err := store.Acquire(ctx, "shop-alice", "sess\x1b[2K\u202e-1", ""); err != nil {
		t.Fatal(err)
	}
	if code, out, stderr = runCLI(t, envv, append([]string{"states", "list"}, flags...)...); code != 0 || !strings.Contains(out, "shop-alice") ||
		!strings.Contains(out, "sess?[2K?-1") || strings.ContainsAny(out, "\x1b\u202e") {
		t.Fatalf("list with the key: %d\n%q%s", code, out, stderr)
	}
	if code, out, stderr = runCLI(t, envv, append([]string{"states", "delete", "shop-alice"}, flags...)...); code != 0 || !strings.Contains(out, "deleted state shop-alice") {
		t.Fatalf("delete: %d\n%s%s", code, out, stderr)
	}
	if code, _, stderr = runCLI(t, envv, append([]string{"states", "delete", "shop-alice"}, flags...)...); code != 1 || !strings.Contains(stderr, "no state") {
		t.Fatalf("deleting again: %d %s", code, stderr)
	}
	if code, _, stderr = runCLI(t, envv, append([]string{"states", "delete", "../x"}, flags...)...); code != 1 || !strings.Contains(stderr, "invalid state name") {
		t.Fatalf("a bad name: %d %s", code, stderr)
	}
	if code, _, stderr = runCLI(t, envv, append([]string{"states", "delete"}, flags...)...); code != 1 || !strings.Contains(stderr, "want exactly one NAME or HASH") {
		t.Fatalf("delete with no name: %d %s", code, stderr)
	}
	// The 16-character hash list shows (here without the key) deletes the
	// state it names, as the usage's NAME|HASH says.
	if _, err := store.Save(ctx, states.State{Name: "shop-bob", Cookies: []states.Cookie{{Name: "sid", Value: "v", Domain: "a", Path: "/"}}}); err != nil {
		t.Fatal(err)
	}
	noKey := map[string]string{"AWS_ACCESS_KEY_ID": srv.AccessKey(), "AWS_SECRET_ACCESS_KEY": srv.SecretKey(), "DURABLE_BROWSER_S3_ENDPOINT": srv.Endpoint()}
	short := states.NameHash("shop-bob")[:16]
	if code, out, stderr = runCLI(t, noKey, append([]string{"states", "list"}, flags...)...); code != 0 || !strings.Contains(out, short) {
		t.Fatalf("list: %d\n%s%s", code, out, stderr)
	}
	if code, out, stderr = runCLI(t, noKey, append([]string{"states", "delete", short}, flags...)...); code != 0 || !strings.Contains(out, "deleted state "+short) {
		t.Fatalf("delete by the short hash list shows: %d\n%s%s", code, out, stderr)
	}
	if code, _, stderr = runCLI(t, noKey, append([]string{"states", "delete", short}, flags...)...); code != 1 || !strings.Contains(stderr, "no state") {
		t.Fatalf("deleting the short hash again: %d %s", code, stderr)
	}
	// The bucket holds no state now: JSON lists none as [], not null.
	if code, out, stderr = runCLI(t, envv, append([]string{"states", "list", "--json"}, flags...)...); code != 0 || strings.TrimSpace(out) != "[]" {
		t.Fatalf("list --json of an empty bucket: %d %q %s", code, out, stderr)
	}
}
