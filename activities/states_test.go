package activities

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/devstack"
	"github.com/durable-browser/durable-browser/internal/driver"
	"github.com/durable-browser/durable-browser/internal/evidence"
	"github.com/durable-browser/durable-browser/internal/states"
)

// keepingBrowser is a fake browser with a cookie jar it exports and
// imports, as the driver's does.
type keepingBrowser struct {
	*fakeBrowser
	mu       sync.Mutex
	cookie   string
	imported *states.State
}

func (b *keepingBrowser) ExportState(context.Context) (states.State, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return states.State{Cookies: []states.Cookie{{Name: "sid", Value: b.cookie, Domain: "shop.example", Path: "/"}}}, nil
}

func (b *keepingBrowser) ImportState(_ context.Context, st states.State) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.imported = &st
	return nil
}

func (b *keepingBrowser) setCookie(v string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cookie = v
}

// stateStore is a store over a versitygw on loopback.
func stateStore(t *testing.T) *states.Store {
	t.Helper()
	ctx := context.Background()
	port, err := devstack.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := devstack.StartS3(ctx, devstack.S3Options{Address: fmt.Sprintf("127.0.0.1:%d", port), Dir: filepath.Join(t.TempDir(), "s3"), Bucket: "acts-states"})
	if err != nil {
		t.Fatalf("versitygw: %v", err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	ev, err := evidence.NewS3(ctx, evidence.S3Options{Bucket: "acts-states", Endpoint: srv.Endpoint(), PathStyle: true, Region: "us-east-1",
		AccessKey: srv.AccessKey(), SecretKey: srv.SecretKey()})
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := states.NewSealer(bytes.Repeat([]byte{9}, 32))
	if err != nil {
		t.Fatal(err)
	}
	st, err := states.New(states.Options{Client: ev.Client(), Bucket: "acts-states", Sealer: sealer})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// withStates gives the harness a state store and browsers that keep state.
func withStates(store *states.Store, kept *[]*keepingBrowser) func(*Options) {
	return func(o *Options) {
		o.States, o.StateNames, o.StateLeaseWait = store, []string{"shop-*"}, 300*time.Millisecond
		inner := o.Attach
		var mu sync.Mutex
		o.Attach = func(ctx context.Context, do driver.Options) (Browser, error) {
			b, err := inner(ctx, do)
			if err != nil {
				return nil, err
			}
			kb := &keepingBrowser{fakeBrowser: b.(*fakeBrowser), cookie: "signed-out"}
			mu.Lock()
			*kept = append(*kept, kb)
			mu.Unlock()
			return kb, nil
		}
	}
}

// A state the worker cannot keep, a bad or disallowed name, and a state
// another session holds are refused by name before any browser starts.
func TestStateRefusals(t *testing.T) {
	h := newHarness(t, nil)
	_, err := call[contract.CreateResult](h, contract.ActivityCreate, contract.CreateRequest{Tag: "t-1", Options: contract.SessionOptions{State: "shop-a"}})
	if f := wantCode(t, err, contract.CodeRefused, false); !strings.Contains(f.Message, states.EnvKey) {
		t.Fatalf("no store: %s", f.Message)
	}

	store := stateStore(t)
	var kept []*keepingBrowser
	h = newHarness(t, withStates(store, &kept))
	for name, want := range map[string]string{"../etc": "state name", "crm": "--state-names", "shop-a..b": "state name"} {
		_, err := call[contract.CreateResult](h, contract.ActivityCreate, contract.CreateRequest{Tag: "t-1", Options: contract.SessionOptions{State: name}})
		if f := wantCode(t, err, contract.CodeRefused, false); !strings.Contains(f.Message, want) {
			t.Fatalf("%q: %s", name, f.Message)
		}
	}
	if err := store.Acquire(context.Background(), "shop-held", "someone-else-1", ""); err != nil {
		t.Fatal(err)
	}
	_, err = call[contract.CreateResult](h, contract.ActivityCreate, contract.CreateRequest{Tag: "t-2", Options: contract.SessionOptions{State: "shop-held"}})
	f := wantCode(t, err, contract.CodeRefused, false)
	for _, w := range []string{`"shop-held"`, "in use by another session", "browser_release", "another state name"} {
		if !strings.Contains(f.Message, w) {
			t.Fatalf("held state: %q lacks %q", f.Message, w)
		}
	}
	if created, _ := h.prov.calls(); len(created) != 0 {
		t.Fatalf("browsers started for refused sessions: %v", created)
	}
}

// A session's state is saved after each run that changed it (a run that
// changed nothing writes no version) and at release, which gives the lease
// up; the next session starts from the newest version.
func TestStateSavedAfterRunsAndRelease(t *testing.T) {
	store := stateStore(t)
	var kept []*keepingBrowser
	h := newHarness(t, withStates(store, &kept))
	ctx := context.Background()
	ref := h.create("t-1", contract.SessionOptions{State: "shop-a"})
	if ref.State != "shop-a" || kept[0].imported != nil {
		t.Fatalf("first session: ref %+v, imported %+v", ref, kept[0].imported)
	}
	newest := func() (string, int64) {
		st, v, err := store.Newest(ctx, "shop-a")
		if err != nil || st == nil {
			t.Fatalf("newest: %v %v", st, err)
		}
		return st.Cookies[0].Value, v
	}
	run := func() {
		t.Helper()
		if _, err := call[contract.RunResult](h, contract.ActivityRun, runReq(ref, []byte(`[{"op":"click","id":"3"}]`))); err != nil {
			t.Fatal(err)
		}
	}
	kept[0].setCookie("signed-in-1")
	run()
	if val, v := newest(); val != "signed-in-1" || v != 1 {
		t.Fatalf("after the first run: %s v%d", val, v)
	}
	run()
	if _, v := newest(); v != 1 {
		t.Fatalf("a run that changed nothing wrote v%d", v)
	}
	kept[0].setCookie("signed-in-2")
	if _, err := call[contract.ReleaseResult](h, contract.ActivityRelease, contract.ReleaseRequest{Session: ref}); err != nil {
		t.Fatal(err)
	}
	if val, v := newest(); val != "signed-in-2" || v != 2 {
		t.Fatalf("after release: %s v%d", val, v)
	}
	if held, _ := store.Holds(ctx, "shop-a", "t-1"); held {
		t.Fatal("the released session still holds the state")
	}
	h.create("t-2", contract.SessionOptions{State: "shop-a"})
	if im := kept[1].imported; im == nil || im.Cookies[0].Value != "signed-in-2" {
		t.Fatalf("the next session did not start from the newest version: %+v", im)
	}
}
