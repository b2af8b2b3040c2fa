//go:build unix

package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/chrome"
	"github.com/durable-browser/durable-browser/providers"
)

func chromePath(tb testing.TB) string {
	tb.Helper()
	p, err := chrome.Find(chrome.FindOptions{})
	if err != nil {
		tb.Fatalf("these tests need Chromium: %v", err)
	}
	return p
}

func newProvider(tb testing.TB, root, boot string) *Provider {
	tb.Helper()
	chromePath(tb) // these tests need a browser; New finds it as a worker does
	p, err := New(Options{
		ProfileRoot: root,
		BootID:      boot,
		Logger:      zerolog.New(zerolog.NewTestWriter(tb)).Level(zerolog.WarnLevel),
	})
	if err != nil {
		tb.Fatal(err)
	}
	// Whatever a test leaves, this provider's cleanup ends it.
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		recs, _ := p.Records()
		for _, r := range recs {
			if err := p.Release(ctx, r.Tag); err != nil {
				tb.Errorf("cleanup release %s: %v", r.Tag, err)
			}
		}
	})
	return p
}

func testCtx(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	tb.Cleanup(cancel)
	return ctx
}

// processGone checks by pid: kill(pid, 0) fails and no live process is left
// in the browser's process group.
func processGone(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("pid %d: kill(pid, 0) = %v, want ESRCH", pid, err)
	}
	if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); err == nil {
		t.Errorf("/proc/%d still exists", pid)
	}
	if groupAlive(pid) {
		t.Errorf("process group %d still has live members", pid)
	}
}

// noProcessUses checks that no live process anywhere names dir as its
// --user-data-dir (renderers and helpers included).
func noProcessUses(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc")
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !pidAlive(pid) {
			continue
		}
		if isOurs(pid, dir) {
			t.Errorf("pid %d still runs on %s", pid, dir)
		}
	}
}

func TestCreateTwiceYieldsOneBrowserAndReleaseLeavesNothing(t *testing.T) {
	ctx := testCtx(t)
	root := t.TempDir()
	p := newProvider(t, root, "boot-a")

	// Concurrent creates of one tag, then a later one: one browser.
	var wg sync.WaitGroup
	pids := make([]int, 3)
	errs := make([]error, 3)
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := p.Create(ctx, providers.CreateOptions{Tag: "wf-1"})
			errs[i] = err
			if err == nil {
				pids[i] = s.PID
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	s, err := p.Create(ctx, providers.CreateOptions{Tag: "wf-1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if pid != s.PID {
			t.Fatalf("pids %v and %d: creating one tag twice made two browsers", pids, s.PID)
		}
	}
	if !strings.HasPrefix(s.CDPURL, "ws://127.0.0.1:") || strings.Contains(s.CDPURL, ":9222/") {
		t.Fatalf("CDPURL %q", s.CDPURL)
	}
	if s.Provider != Name || s.DownloadDir == "" {
		t.Fatalf("session %+v", s)
	}
	if fi, err := os.Stat(s.DownloadDir); err != nil || !fi.IsDir() {
		t.Fatalf("download dir: %v", err)
	}
	// The browser answers DevTools.
	conn, err := chrome.Dial(ctx, s.CDPURL)
	if err != nil {
		t.Fatal(err)
	}
	var ver struct {
		Product string `json:"product"`
	}
	if err := conn.Call(ctx, "Browser.getVersion", nil, &ver); err != nil || ver.Product == "" {
		t.Fatalf("Browser.getVersion: %v %q", err, ver.Product)
	}
	conn.Close()
	// No omnibox WebUI: its renderer would serve nothing (issue 26).
	if ui := browserUITargets(t, s.CDPURL); len(ui) > 0 {
		t.Errorf("the browser has browser_ui targets %v: each holds a renderer of its own", ui)
	}
	if _, err := p.Find(ctx, "wf-1"); err != nil {
		t.Fatalf("status %v", err)
	}
	rec, _ := p.readRecord("wf-1")
	if rec == nil || rec.ProfileDir == "" {
		t.Fatal("no record")
	}

	if err := p.Release(ctx, "wf-1"); err != nil {
		t.Fatal(err)
	}
	processGone(t, s.PID)
	noProcessUses(t, rec.ProfileDir)
	if _, err := os.Stat(rec.ProfileDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("profile dir left behind: %v", err)
	}
	if _, err := p.Find(ctx, "wf-1"); !errors.Is(err, providers.ErrNotFound) {
		t.Errorf("Find after release: %v", err)
	}
	if _, err := p.Find(ctx, "wf-1"); !errors.Is(err, providers.ErrNotFound) {
		t.Errorf("status after release %v", err)
	}
	// Idempotent, and an unknown tag is not an error.
	if err := p.Release(ctx, "wf-1"); err != nil {
		t.Fatal(err)
	}
	if err := p.Release(ctx, "never-made"); err != nil {
		t.Fatal(err)
	}
}

func TestRestartedWorkerFindsByTagAndReapsUnowned(t *testing.T) {
	ctx := testCtx(t)
	root := t.TempDir()
	old := newProvider(t, root, "boot-old")
	made := &contract.SessionOptions{Provider: Name, Stealth: true, ActionPolicy: "ask", AllowHosts: []string{"shop.example"}}
	kept, err := old.Create(ctx, providers.CreateOptions{Tag: "kept", Stealth: true, Session: made})
	if err != nil {
		t.Fatal(err)
	}
	if kept.Found {
		t.Fatal("a started browser says it was found")
	}
	dropped, err := old.Create(ctx, providers.CreateOptions{Tag: "dropped"})
	if err != nil {
		t.Fatal(err)
	}

	// A new boot of the worker, on the same profile root.
	p := newProvider(t, root, "boot-new")
	found, err := p.Find(ctx, "kept")
	if err != nil {
		t.Fatal(err)
	}
	if found.PID != kept.PID || found.CDPURL != kept.CDPURL || !found.Stealth || !found.Found {
		t.Fatalf("found %+v, want pid %d", found, kept.PID)
	}
	// The record keeps what the browser was made with, for the next create
	// to compare.
	if found.Made == nil || !reflect.DeepEqual(*found.Made, *made) {
		t.Fatalf("found browser made with %+v, want %+v", found.Made, made)
	}
	released, err := p.Reap(ctx, func(r Record) bool { return r.Tag == "kept" })
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(released, ",") != "dropped" {
		t.Fatalf("reaped %v, want [dropped]", released)
	}
	processGone(t, dropped.PID)
	if _, err := p.Find(ctx, "kept"); err != nil {
		t.Fatalf("kept browser is %v", err)
	}

	// Creating the kept tag adopts it; a later Reap leaves it alone.
	again, err := p.Create(ctx, providers.CreateOptions{Tag: "kept"})
	if err != nil || again.PID != kept.PID || !again.Found || again.Made == nil || !again.Made.Stealth {
		t.Fatalf("adopt: %v pid %d want %d (%+v)", err, again.PID, kept.PID, again)
	}
	if released, err := p.Reap(ctx, nil); err != nil || len(released) != 0 {
		t.Fatalf("second reap %v %v", released, err)
	}
	if err := p.Release(ctx, "kept"); err != nil {
		t.Fatal(err)
	}
	processGone(t, kept.PID)
}

func TestReapCleansDeadBrowserLeftovers(t *testing.T) {
	ctx := testCtx(t)
	root := t.TempDir()
	p := newProvider(t, root, "boot-a")
	s, err := p.Create(ctx, providers.CreateOptions{Tag: "crashy"})
	if err != nil {
		t.Fatal(err)
	}
	// The browser dies on its own.
	signalGroup(s.PID, sigKill)
	released, err := p.Reap(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(released, ",") != "crashy" {
		t.Fatalf("reaped %v", released)
	}
	processGone(t, s.PID)
	if _, err := os.Stat(filepath.Join(root, "sessions", "crashy")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("session dir left: %v", err)
	}
}

func TestStartFailureExplains(t *testing.T) {
	tests := []struct {
		name     string
		script   string
		hint     bool
		stderrIn string
	}{
		{"sandbox message", "echo 'FATAL:zygote_host_impl_linux.cc(127)] Check failed: sandbox' >&2\nexit 1", true, "Check failed: sandbox"},
		{"aborted", "echo 'about to abort' >&2\nkill -ABRT $$", true, "about to abort"},
		{"plain failure", "echo 'error while loading shared libraries: libnss3.so' >&2\nexit 127", false, "libnss3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			dir := t.TempDir()
			script := filepath.Join(dir, "fake-chrome")
			if err := os.WriteFile(script, []byte("#!/bin/sh\n"+tt.script+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			root := t.TempDir()
			p, err := New(Options{ChromePath: script, ProfileRoot: root, BootID: "b"})
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Create(ctx, providers.CreateOptions{Tag: "t"})
			var se *StartError
			if !errors.As(err, &se) || !errors.Is(err, ErrStartFailed) {
				t.Fatalf("err = %v, want *StartError", err)
			}
			if se.SandboxHint != tt.hint || strings.Contains(err.Error(), "--no-sandbox") != tt.hint {
				t.Fatalf("hint = %v in %q, want %v", se.SandboxHint, err, tt.hint)
			}
			if !strings.Contains(se.Stderr, tt.stderrIn) {
				t.Fatalf("stderr %q lacks %q", se.Stderr, tt.stderrIn)
			}
			// A failed start leaves nothing behind.
			if recs, _ := p.Records(); len(recs) != 0 {
				t.Fatalf("records left: %+v", recs)
			}
			if _, err := os.Stat(filepath.Join(root, "sessions", "t")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("session dir left: %v", err)
			}
		})
	}
}

type cookie struct {
	Name    string  `json:"name"`
	Value   string  `json:"value"`
	Domain  string  `json:"domain"`
	Path    string  `json:"path"`
	Expires float64 `json:"expires,omitempty"`
}

func setCookie(t *testing.T, ctx context.Context, ws, name string) {
	t.Helper()
	conn, err := chrome.Dial(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := cookie{Name: name, Value: "v-" + name, Domain: "example.test", Path: "/",
		Expires: float64(time.Now().Add(24 * time.Hour).Unix())}
	if err := conn.Call(ctx, "Storage.setCookies", map[string]any{"cookies": []cookie{c}}, nil); err != nil {
		t.Fatal(err)
	}
}

func cookieNames(t *testing.T, ctx context.Context, ws string) []string {
	t.Helper()
	conn, err := chrome.Dial(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var res struct {
		Cookies []cookie `json:"cookies"`
	}
	if err := conn.Call(ctx, "Storage.getCookies", nil, &res); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range res.Cookies {
		names = append(names, c.Name)
	}
	sort.Strings(names)
	return names
}

func TestProfilesSaveAndCopy(t *testing.T) {
	ctx := testCtx(t)
	root := t.TempDir()
	p := newProvider(t, root, "boot-a")
	save := &contract.Profile{Name: "acct", Save: true}

	s1, err := p.Create(ctx, providers.CreateOptions{Tag: "saver-1", Profile: save})
	if err != nil {
		t.Fatal(err)
	}
	setCookie(t, ctx, s1.CDPURL, "signed_in")

	// One saver at a time.
	_, err = p.Create(ctx, providers.CreateOptions{Tag: "saver-2", Profile: save})
	var busy *ProfileBusyError
	if !errors.As(err, &busy) || busy.HolderTag != "saver-1" || !errors.Is(err, ErrProfileBusy) {
		t.Fatalf("second saver: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "sessions", "saver-2")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("refused saver left a session dir: %v", err)
	}
	// A non-saving session may run beside the saver.
	if err := p.Release(ctx, "saver-1"); err != nil {
		t.Fatal(err)
	}
	processGone(t, s1.PID)
	if _, err := os.Stat(p.profileDir("acct")); err != nil {
		t.Fatalf("saved profile deleted by release: %v", err)
	}

	// A copy sees the saved sign-in; its own changes do not persist.
	c1, err := p.Create(ctx, providers.CreateOptions{Tag: "copy-1", Profile: &contract.Profile{Name: "acct"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := cookieNames(t, ctx, c1.CDPURL); strings.Join(got, ",") != "signed_in" {
		t.Fatalf("copy sees cookies %v, want [signed_in]", got)
	}
	setCookie(t, ctx, c1.CDPURL, "copy_only")
	if err := p.Release(ctx, "copy-1"); err != nil {
		t.Fatal(err)
	}

	// The next saver starts from what the first saved, without the copy's change.
	s3, err := p.Create(ctx, providers.CreateOptions{Tag: "saver-3", Profile: save})
	if err != nil {
		t.Fatal(err)
	}
	if got := cookieNames(t, ctx, s3.CDPURL); strings.Join(got, ",") != "signed_in" {
		t.Fatalf("saver sees cookies %v, want [signed_in]", got)
	}
	if err := p.Release(ctx, "saver-3"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p.lockPath("acct")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("profile lock left after release: %v", err)
	}
}

func TestCheckProxy(t *testing.T) {
	for _, tt := range []struct {
		in string
		ok bool
	}{
		{"", true}, {"http://127.0.0.1:3128", true}, {"socks5://127.0.0.1:1080", true},
		{"http://user:pass@127.0.0.1:3128", false}, {"ftp://x:1", false}, {"127.0.0.1:3128", false},
	} {
		err := checkProxy(tt.in)
		if (err == nil) != tt.ok {
			t.Errorf("checkProxy(%q) = %v", tt.in, err)
		}
		if err != nil && strings.Contains(err.Error(), "pass@") {
			t.Errorf("error repeats the credential: %v", err)
		}
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	if _, err := New(Options{ChromePath: chromePath(t), BootID: "b"}); err == nil {
		t.Error("no ProfileRoot accepted")
	}
	if _, err := New(Options{ChromePath: chromePath(t), ProfileRoot: t.TempDir()}); err == nil {
		t.Error("no BootID accepted")
	}
	_, err := New(Options{ChromePath: filepath.Join(t.TempDir(), "nope"), ProfileRoot: t.TempDir(), BootID: "b"})
	if !errors.Is(err, chrome.ErrBadPath) {
		t.Errorf("missing chrome: %v", err)
	}
}

// BenchmarkCreateRelease measures a cold create to a browser whose DevTools
// port answers; the release after each is outside the timer.
func BenchmarkCreateRelease(b *testing.B) {
	ctx := context.Background()
	p := newProvider(b, b.TempDir(), "bench")
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		tag := "bench-" + strconv.Itoa(i)
		if _, err := p.Create(ctx, providers.CreateOptions{Tag: tag}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := p.Release(ctx, tag); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// TestHeadlessSessionsRunTheShell: where the headless shell is installed a
// headless session's browser is the shell unless the operator turns it
// off, and a bad path is refused when the provider is made.
func TestHeadlessSessionsRunTheShell(t *testing.T) {
	shell, err := chrome.FindShell(chrome.FindOptions{}, chrome.ShellAuto)
	if err != nil || shell == "" {
		t.Skipf("no headless shell installed (make chromium installs Debian's): %v", err)
	}
	for i, c := range []struct {
		setting, want string
	}{{"", shell}, {"off", chromePath(t)}, {shell, shell}} {
		tag := "shell-" + strconv.Itoa(i)
		t.Run("setting="+c.setting, func(t *testing.T) {
			p, err := New(Options{ProfileRoot: t.TempDir(), BootID: "shell", HeadlessShell: c.setting, Logger: zerolog.Nop()})
			if err != nil {
				t.Fatal(err)
			}
			ctx := testCtx(t)
			s, err := p.Create(ctx, providers.CreateOptions{Tag: tag})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Release(ctx, s.Tag)
			exe, err := os.Readlink("/proc/" + strconv.Itoa(s.PID) + "/exe")
			if err != nil {
				t.Skipf("reading the browser's executable: %v", err)
			}
			want, _ := filepath.EvalSymlinks(c.want)
			if got, _ := filepath.EvalSymlinks(exe); filepath.Base(got) != filepath.Base(want) {
				t.Fatalf("the session's browser runs %s, want %s", exe, want)
			}
		})
	}
	_, err = New(Options{ProfileRoot: t.TempDir(), BootID: "b", HeadlessShell: filepath.Join(t.TempDir(), "nope")})
	if !errors.Is(err, chrome.ErrBadPath) || !strings.Contains(err.Error(), "--headless-shell") {
		t.Fatalf("a missing shell path: err = %v, want ErrBadPath naming --headless-shell", err)
	}
}

// TestProfileMovesBetweenBrowsers: a profile saved by the full browser (a
// headed session's, or a worker with --headless-shell off) opens with its
// sign-in in the headless shell, and back: both are one Chromium build.
func TestProfileMovesBetweenBrowsers(t *testing.T) {
	shell, err := chrome.FindShell(chrome.FindOptions{}, chrome.ShellAuto)
	if err != nil || shell == "" {
		t.Skipf("no headless shell installed (make chromium installs Debian's): %v", err)
	}
	ctx := testCtx(t)
	root := t.TempDir()
	full, err := New(Options{ProfileRoot: root, BootID: "full", HeadlessShell: chrome.ShellOff, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	viaShell, err := New(Options{ProfileRoot: root, BootID: "shell", Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	save := &contract.Profile{Name: "moves", Save: true}
	steps := []struct {
		p         *Provider
		set, want string
	}{{full, "from_full", ""}, {viaShell, "from_shell", "from_full"}, {full, "", "from_full,from_shell"}}
	for i, st := range steps {
		tag := "moves-" + strconv.Itoa(i)
		s, err := st.p.Create(ctx, providers.CreateOptions{Tag: tag, Profile: save})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(cookieNames(t, ctx, s.CDPURL), ","); got != st.want {
			t.Errorf("step %d (%s): the saved profile has cookies %q, want %q", i, filepath.Base(st.p.Executable(false)), got, st.want)
		}
		if st.set != "" {
			setCookie(t, ctx, s.CDPURL, st.set)
		}
		if err := st.p.Release(ctx, tag); err != nil {
			t.Fatal(err)
		}
	}
}
