package driver

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/internal/demosite"
	"github.com/rs/zerolog"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/test/tokencount"
)

// One Chrome and two demo-site servers per test binary: 127.0.0.1 and
// localhost are different sites, so the second gives cross-origin frames.
var (
	chromeWS  string
	chromePID int // the leader of its process group
	site      *demosite.Site
	siteURL   string // http://127.0.0.1:port
	otherURL  string // http://localhost:port
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	// Fuzzing (scripts/fuzz.sh: -run '^$' -fuzz ...) runs no test that
	// needs Chrome, and each fuzz worker process runs TestMain again.
	flag.Parse()
	if flag.Lookup("test.fuzzworker").Value.String() == "true" ||
		(flag.Lookup("test.fuzz").Value.String() != "" && flag.Lookup("test.run").Value.String() == "^$") {
		return m.Run()
	}
	site = demosite.New()
	srv := httptest.NewServer(site)
	defer srv.Close()
	siteURL = srv.URL
	other := httptest.NewServer(demosite.New())
	defer other.Close()
	otherURL = strings.Replace(other.URL, "127.0.0.1", "localhost", 1)

	dir, err := os.MkdirTemp("", "driver-chrome-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	ws, pid, stop, err := startChrome(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "start chrome:", err)
		return 1
	}
	defer stop()
	chromeWS, chromePID = ws, pid
	return m.Run()
}

func chromePath() string {
	if p := os.Getenv("CHROME_PATH"); p != "" {
		return p
	}
	return "/usr/bin/chromium"
}

// startChrome runs headless Chromium in its own process group and returns
// its debugger URL, its pid (the group's leader) and a stop function that
// kills the group and waits.
func startChrome(profile string, extra ...string) (string, int, func(), error) {
	args := append([]string{
		"--headless=new", "--remote-debugging-port=0", "--user-data-dir=" + profile,
		"--no-sandbox", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--no-first-run", "--no-default-browser-check", "--disable-gpu",
		"--site-per-process", "--window-size=1280,900"}, extra...)
	cmd := exec.Command(chromePath(), append(args, "about:blank")...)
	// Its own group, so cleanup kills every Chrome process; Pdeathsig stops
	// it too if the test binary is killed before cleanup runs.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", 0, nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", 0, nil, err
	}
	stop := func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	}
	re := regexp.MustCompile(`DevTools listening on (ws://\S+)`)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil && !sent {
				found <- m[1]
				sent = true
			}
		}
	}()
	select {
	case ws := <-found:
		return ws, cmd.Process.Pid, stop, nil
	case <-time.After(30 * time.Second):
		stop()
		return "", 0, nil, errors.New("chrome did not print its DevTools URL within 30s")
	}
}

func attach(t testing.TB, o Options) *Browser {
	t.Helper()
	o.CDPURL = chromeWS
	return attachTo(t, o)
}

// attachTo attaches to o.CDPURL, or to the test binary's Chrome.
func attachTo(t testing.TB, o Options) *Browser {
	t.Helper()
	if o.CDPURL == "" {
		o.CDPURL = chromeWS
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b, err := Attach(ctx, o)
	if err != nil {
		t.Fatalf("attach: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func mustRun(t testing.TB, b *Browser, js string) *contract.RunResult {
	t.Helper()
	acts, err := ParseActions(json.RawMessage(js))
	if err != nil {
		t.Fatalf("parse %s: %v", js, err)
	}
	res, err := b.Run(ctxT(t), acts, RunOptions{})
	if err != nil {
		t.Fatalf("run %s: %v", js, err)
	}
	return res
}

func snap(t testing.TB, b *Browser, o SnapshotOptions) *contract.SnapshotResult {
	t.Helper()
	s, err := b.Snapshot(ctxT(t), o)
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	return s
}

func gotoPage(t testing.TB, b *Browser, u string) {
	t.Helper()
	mustRun(t, b, fmt.Sprintf(`[{"op":"goto","url":%q},{"op":"wait","load":true}]`, u))
}

// idOf finds the id of the first line containing all parts.
func idOf(t testing.TB, text string, parts ...string) string {
	t.Helper()
	re := regexp.MustCompile(`\[(\d+)\]`)
	for _, l := range strings.Split(text, "\n") {
		ok := true
		for _, p := range parts {
			if !strings.Contains(l, p) {
				ok = false
			}
		}
		if ok {
			if m := re.FindStringSubmatch(l); m != nil {
				return m[1]
			}
		}
	}
	t.Fatalf("no line with %q in snapshot:\n%s", parts, text)
	return ""
}

// eventually polls cond until it holds or 10s pass.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestFormFilledAndSubmitted(t *testing.T) {
	b := attach(t, Options{})
	gotoPage(t, b, siteURL+"/form.html")
	s := snap(t, b, SnapshotOptions{})
	for _, want := range []string{`heading "Sign up" level=1`, `textbox "Email" required`, `combobox "Plan"`, `checkbox "I agree" checked=false`, `button "Create account"`, `link "Terms" -> /terms?x=`} {
		if !strings.Contains(s.Text, want) {
			t.Errorf("snapshot lacks %q:\n%s", want, s.Text)
		}
	}
	if strings.Contains(s.Text, "hunter2") {
		t.Fatalf("password value shown:\n%s", s.Text)
	}
	if !strings.Contains(s.Text, `textbox "Password" value=[hidden]`) {
		t.Errorf("password field not shown as hidden:\n%s", s.Text)
	}
	if strings.Contains(s.Text, "abc") || !strings.Contains(s.Text, "/about.html?ref=&token=") {
		t.Errorf("query value shown:\n%s", s.Text)
	}
	before := len(site.Submissions())
	email, plan, agree, notes, submit := idOf(t, s.Text, "Email"), idOf(t, s.Text, "Plan"), idOf(t, s.Text, "I agree"), idOf(t, s.Text, "Notes"), idOf(t, s.Text, "Create account")
	res := mustRun(t, b, fmt.Sprintf(`[{"op":"fill","id":"%s","value":"ada@example.com"},{"op":"select","id":"[%s]","values":["Pro"]},
		{"op":"check","id":"%s"},{"op":"type","id":"%s","text":"hi there"},{"op":"click","id":"%s"},{"op":"wait","text":"Submission received"}]`, email, plan, agree, notes, submit))
	if res.Completed != 6 || res.Failed != nil {
		t.Fatalf("run: %+v", res)
	}
	subs := site.Submissions()
	if len(subs) != before+1 {
		t.Fatalf("submissions: got %d new, want 1", len(subs)-before)
	}
	got := subs[len(subs)-1].Fields
	want := map[string]string{"email": "ada@example.com", "plan": "pro", "agree": "yes", "notes": "hi there", "password": "hunter2-secret"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("field %s = %q, want %q", k, got[k], v)
		}
	}
	if res.Title != "Thanks" || !strings.HasSuffix(res.URL, "/submit") {
		t.Errorf("after submit: url %q title %q", res.URL, res.Title)
	}
	if len(res.Sent) != 1 || res.Sent[0].Method != "POST" || res.Sent[0].Path != "/submit" {
		t.Errorf("sent = %+v, want one POST /submit", res.Sent)
	}
}

func TestFramesAndShadow(t *testing.T) {
	b := attach(t, Options{})
	gotoPage(t, b, siteURL+"/iframes.html?other="+otherURL)
	var s *contract.SnapshotResult
	eventually(t, "both frames in the snapshot", func() bool {
		s = snap(t, b, SnapshotOptions{})
		return strings.Count(s.Text, `button "Inner button"`) == 2
	})
	// Click the cross-origin frame's button (the second), then the same-origin one.
	lines := strings.Split(s.Text, "\n")
	var ids []string
	for _, l := range lines {
		if strings.Contains(l, `button "Inner button"`) {
			ids = append(ids, idOf(t, l, "Inner button"))
		}
	}
	mustRun(t, b, fmt.Sprintf(`[{"op":"click","id":"%s"},{"op":"click","id":"%s"}]`, ids[1], ids[0]))
	s = snap(t, b, SnapshotOptions{})
	host := strings.TrimPrefix(otherURL, "http://")
	if !strings.Contains(s.Text, "Inner clicked at "+host) || !strings.Contains(s.Text, "Inner clicked at "+strings.TrimPrefix(siteURL, "http://")) {
		t.Fatalf("frame clicks not seen:\n%s", s.Text)
	}

	gotoPage(t, b, siteURL+"/shadow.html")
	s = snap(t, b, SnapshotOptions{})
	btn := idOf(t, s.Text, `button "Shadow button"`)
	field := idOf(t, s.Text, `textbox "Shadow field"`)
	mustRun(t, b, fmt.Sprintf(`[{"op":"fill","id":"%s","value":"deep"},{"op":"click","id":"%s"},{"op":"wait","text":"Shadow clicked"}]`, field, btn))
	s = snap(t, b, SnapshotOptions{})
	if !strings.Contains(s.Text, `value="deep"`) {
		t.Errorf("shadow field not filled:\n%s", s.Text)
	}
}

func TestSPARouteMakesIDsStale(t *testing.T) {
	b := attach(t, Options{})
	gotoPage(t, b, siteURL+"/spa.html")
	s := snap(t, b, SnapshotOptions{})
	goID, countID := idOf(t, s.Text, "Go to settings"), idOf(t, s.Text, `button "Count"`)
	mustRun(t, b, fmt.Sprintf(`[{"op":"click","id":"%s"}]`, goID))
	acts, _ := ParseActions(json.RawMessage(fmt.Sprintf(`[{"op":"click","id":"%s"}]`, countID)))
	_, err := b.Run(ctxT(t), acts, RunOptions{})
	var se *StaleError
	if !errors.As(err, &se) {
		t.Fatalf("run after route change: err %v, want *StaleError", err)
	}
	s = snap(t, b, SnapshotOptions{})
	if !strings.Contains(s.Text, "Settings route") || !strings.Contains(s.Text, `"0"`) {
		t.Fatalf("count was clicked or route missing:\n%s", s.Text)
	}
	// Ids stay with their elements across snapshots of one document: an
	// id from an older snapshot still acts on its element.
	old := idOf(t, s.Text, `button "Count"`)
	if s2 := snap(t, b, SnapshotOptions{}); idOf(t, s2.Text, `button "Count"`) != old {
		t.Fatalf("id of Count moved from %s:\n%s", old, s2.Text)
	}
	mustRun(t, b, fmt.Sprintf(`[{"op":"click","id":"%s"},{"op":"wait","text":"1"}]`, old))
}

func TestNewTab(t *testing.T) {
	b := attach(t, Options{Logger: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.InfoLevel)})
	gotoPage(t, b, siteURL+"/tabs.html")
	s := snap(t, b, SnapshotOptions{})
	res := mustRun(t, b, fmt.Sprintf(`[{"op":"click","id":"%s"},{"op":"wait","load":true}]`, idOf(t, s.Text, "Open about")))
	if len(res.TabsOpened) != 1 || !res.TabsOpened[0].Active {
		t.Fatalf("tabs opened: %+v", res.TabsOpened)
	}
	if !strings.Contains(res.URL, "/about.html") {
		t.Fatalf("not following the new tab: url %q", res.URL)
	}
	tabs, err := b.Tabs(ctxT(t))
	if err != nil || len(tabs) < 2 {
		t.Fatalf("tabs: %v %+v", err, tabs)
	}
	if err := b.CloseTab(ctxT(t), res.TabsOpened[0].ID); err != nil {
		t.Fatal(err)
	}
	if u := b.URL(ctxT(t)); !strings.Contains(u, "/tabs.html") {
		t.Fatalf("after close, active url %q", u)
	}
}

func TestDialogs(t *testing.T) {
	for _, tc := range []struct {
		policy DialogPolicy
		want   []string
	}{
		{DialogAccept, []string{"alert done", "confirm true", "prompt Ada"}},
		{DialogDismiss, []string{"alert done", "confirm false", "prompt null"}},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			b := attach(t, Options{DialogPolicy: tc.policy})
			gotoPage(t, b, siteURL+"/dialogs.html")
			for i, name := range []string{"Alert", "Confirm", "Prompt"} {
				s := snap(t, b, SnapshotOptions{})
				res := mustRun(t, b, fmt.Sprintf(`[{"op":"click","id":"%s"},{"op":"wait","text":%q}]`, idOf(t, s.Text, `button "`+name+`"`), tc.want[i]))
				if len(res.Dialogs) != 1 || res.Dialogs[0].Type != strings.ToLower(name) {
					t.Fatalf("%s: dialogs %+v", name, res.Dialogs)
				}
			}
		})
	}
}

func TestDownloadAndUpload(t *testing.T) {
	dir := t.TempDir()
	b := attach(t, Options{DownloadDir: dir})
	gotoPage(t, b, siteURL+"/download.html")
	s := snap(t, b, SnapshotOptions{})
	mustRun(t, b, fmt.Sprintf(`[{"op":"click","id":"%s"}]`, idOf(t, s.Text, "Download report")))
	var dls []contract.Download
	eventually(t, "the download", func() bool {
		var err error
		dls, err = b.Downloads(ctxT(t))
		return err == nil && len(dls) == 1
	})
	want, _ := os.ReadFile("../demosite/site/files/report.csv")
	sum := sha256.Sum256(want)
	if dls[0].Name != "report.csv" || dls[0].SHA256 != hex.EncodeToString(sum[:]) || dls[0].Size != int64(len(want)) {
		t.Fatalf("download %+v, want report.csv %x", dls[0], sum)
	}

	gotoPage(t, b, siteURL+"/upload.html")
	s = snap(t, b, SnapshotOptions{})
	f := filepath.Join(t.TempDir(), "note.txt")
	if err := os.WriteFile(f, []byte("hello upload\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	id := idOf(t, s.Text, "Attachment")
	if err := b.Upload(ctxT(t), Target{ID: id}, f); err != nil {
		t.Fatal(err)
	}
	mustRun(t, b, `[{"op":"wait","text":"got note.txt 13 bytes: hello upload"}]`)
	var ae *ActionError
	if err := b.Upload(ctxT(t), Target{ID: idOf(t, s.Text, `heading "Upload"`)}, f); !errors.As(err, &ae) || ae.Kind != KindInvalid {
		t.Fatalf("upload to a heading: %v", err)
	}
}

func TestCoveredElementNamesCover(t *testing.T) {
	b := attach(t, Options{})
	gotoPage(t, b, siteURL+"/covered.html")
	s := snap(t, b, SnapshotOptions{})
	acts, _ := ParseActions(json.RawMessage(fmt.Sprintf(`[{"op":"click","id":"%s"}]`, idOf(t, s.Text, "Buy now"))))
	res, err := b.Run(ctxT(t), acts, RunOptions{})
	var ae *ActionError
	if !errors.As(err, &ae) || ae.Kind != KindCovered || !strings.Contains(ae.Cover, "div#banner.cookie-banner") {
		t.Fatalf("covered click: %v", err)
	}
	if res == nil || res.Completed != 0 || res.Failed == nil || res.Failed.Op != "click" || res.Failed.Reason != ae.Reason {
		t.Fatalf("result %+v", res)
	}
	mustRun(t, b, fmt.Sprintf(`[{"op":"click","id":"%s"},{"op":"click","id":"%s"},{"op":"wait","text":"bought"}]`, idOf(t, s.Text, "Accept cookies"), idOf(t, s.Text, "Buy now")))
}

func TestBigPageOverBound(t *testing.T) {
	const max = 6000
	b := attach(t, Options{MaxSnapshotChars: max})
	gotoPage(t, b, siteURL+"/big.html")
	s := snap(t, b, SnapshotOptions{})
	if !s.Truncated || s.NextOffset != 1 || !strings.Contains(s.Cut, "an outline") || !strings.Contains(s.Cut, "scope") || !strings.Contains(s.Cut, "offset=1") {
		t.Fatalf("not an outline: %v %d %q", s.Truncated, s.NextOffset, s.Cut)
	}
	// The sections that fit are listed; the last line says where the rest
	// start, and that offset reads on from the first of them.
	more := regexp.MustCompile(`\.\.\. (\d+) more regions holding (\d+) actionable elements, from line \d+: offset=(\d+)`).FindStringSubmatch(s.Text)
	if len(s.Text) > max || !strings.Contains(s.Text, `region "Section 7"`) || more == nil {
		t.Fatalf("outline: %d characters (bound %d):\n%s", len(s.Text), max, s.Text)
	}
	listed := strings.Count(s.Text, `region "Section `)
	if atoi(more[1]) != 150-listed || atoi(more[2]) != 5*(150-listed) {
		t.Errorf("%d sections listed, the rest counted as %s regions, %s elements", listed, more[1], more[2])
	}
	if on := snap(t, b, SnapshotOptions{Offset: atoi(more[3])}); !strings.Contains(strings.SplitN(on.Text, "\n", 2)[0], fmt.Sprintf(`region "Section %d"`, listed+1)) {
		t.Errorf("offset=%s starts with %.200s", more[3], on.Text)
	}
	if s.Elements < 1000 {
		t.Errorf("elements %d", s.Elements)
	}
	sec := idOf(t, s.Text, `region "Section 7"`)
	sc := snap(t, b, SnapshotOptions{Scope: "[" + sec + "]"})
	if !strings.Contains(sc.Text, "Paragraph 7 explains") || strings.Contains(sc.Text, "Section 8") {
		t.Errorf("scoped snapshot:\n%s", sc.Text)
	}
	// Both modes page through everything, each page under the bound, each
	// naming the next offset until the last.
	for _, mode := range []string{"full", "interactive"} {
		all, pages := "", 0
		for off := 1; off != 0; pages++ {
			pg := snap(t, b, SnapshotOptions{Mode: mode, Offset: off})
			if len(pg.Text) > max || pages > 100 {
				t.Fatalf("%s page at offset %d: %d characters (bound %d), page %d", mode, off, len(pg.Text), max, pages)
			}
			if (pg.NextOffset != 0) != pg.Truncated || (pg.NextOffset != 0 && !strings.Contains(pg.Cut, fmt.Sprintf("offset=%d", pg.NextOffset))) {
				t.Fatalf("%s page at offset %d: next %d truncated %v cut %q", mode, off, pg.NextOffset, pg.Truncated, pg.Cut)
			}
			all += pg.Text
			off = pg.NextOffset
		}
		if got := strings.Count(all, `button "Act `); pages < 2 || got != 150 {
			t.Errorf("%s: %d pages held %d of 150 buttons", mode, pages, got)
		}
	}
	in := snap(t, b, SnapshotOptions{Mode: "interactive"})
	if in.Text != s.Text {
		t.Errorf("interactive over the bound is not the outline:\n%.2000s", in.Text)
	}
}

// TestOutlineFindClick: on pages of 750 and 2,700 controls the first look
// is an outline within the default budget; a named button is then found
// and clicked in two calls totalling under 2,000 o200k tokens as a model
// reads them (contract.ForModel; issue 30), and the ids of the outline, a
// region read, a find and a later snapshot are the same.
func TestOutlineFindClick(t *testing.T) {
	for _, tc := range []struct {
		sections, act int
	}{{150, 77}, {540, 407}} {
		button, section, next := fmt.Sprintf("Act %d", tc.act), fmt.Sprintf("Section %d", tc.act), fmt.Sprintf("Section %d", tc.act+1)
		t.Run(fmt.Sprintf("%d controls", 5*tc.sections), func(t *testing.T) {
			b := attach(t, Options{})
			gotoPage(t, b, fmt.Sprintf("%s/big.html?sections=%d", siteURL, tc.sections))
			out := snap(t, b, SnapshotOptions{Mode: "interactive"})
			if !strings.Contains(out.Cut, "an outline") || len(out.Text) > 12000 || out.Interactive < 5*tc.sections {
				t.Fatalf("first look: %d characters, %d actionable, cut %q", len(out.Text), out.Interactive, out.Cut)
			}
			// Call 1: find. Call 2: click what it found.
			find := SnapshotOptions{Find: strings.ToLower(button), Role: "button"}
			f := snap(t, b, find)
			if f.Truncated || !strings.Contains(f.Text, `region "`+section+`"`) || strings.Count(f.Text, "\n") != 2 {
				t.Fatalf("find:\n%s\ncut %q", f.Text, f.Cut)
			}
			sec := idOf(t, f.Text, `region "`+section+`"`)
			btn := idOf(t, f.Text, `button "`+button+`"`)
			click := fmt.Sprintf(`[{"op":"click","id":%q}]`, btn)
			res := mustRun(t, b, click)
			tokens := 0
			for _, c := range []struct {
				name   string
				args   any
				answer any
			}{{"snapshot", find, f}, {"run", json.RawMessage(`{"actions":` + click + `}`), res}} {
				args, _ := json.Marshal(c.args)
				answer, _ := json.Marshal(c.answer)
				n, err := tokencount.O200K(string(contract.ForModel(contract.ToolCall{Name: c.name, Args: args}, answer)))
				if err != nil {
					t.Fatal(err)
				}
				tokens += n
			}
			t.Logf("find and click: %d o200k tokens as a model reads them", tokens)
			if tokens >= 2000 {
				t.Errorf("find and click took %d tokens, not under 2,000", tokens)
			}
			// The region read and a later full snapshot give the same ids.
			region := snap(t, b, SnapshotOptions{Scope: sec})
			if idOf(t, region.Text, `button "`+button+`"`) != btn || !strings.Contains(region.Text, fmt.Sprintf("Paragraph %d", tc.act)) {
				t.Errorf("region read:\n%s", region.Text)
			}
			h2 := idOf(t, snap(t, b, SnapshotOptions{Scope: sec, Mode: "full"}).Text, `heading "`+section+`"`)
			if sc := snap(t, b, SnapshotOptions{Scope: h2}); idOf(t, sc.Text, `button "`+button+`"`) != btn || strings.Contains(sc.Text, next) {
				t.Errorf("the heading's section:\n%s", sc.Text)
			}
			all := snap(t, b, SnapshotOptions{Find: button, Budget: 30000})
			if idOf(t, all.Text, `button "`+button+`"`) != btn {
				t.Errorf("a later snapshot gives %s another id", button)
			}
			if _, err := b.Snapshot(ctxT(t), SnapshotOptions{Find: "/(/"}); !errors.As(err, new(*FindError)) {
				t.Errorf("bad regex: %v", err)
			}
		})
	}
}

func TestRequestGate(t *testing.T) {
	b := attach(t, Options{RequestGate: func(ctx context.Context, r GatedRequest) GateDecision { return GateDeny }})
	gotoPage(t, b, siteURL+"/contact.html")
	s := snap(t, b, SnapshotOptions{})
	before := len(site.Submissions())
	acts, _ := ParseActions(json.RawMessage(fmt.Sprintf(`[{"op":"fill","id":"%s","value":"x"},{"op":"click","id":"%s"}]`, idOf(t, s.Text, "Message"), idOf(t, s.Text, "Send"))))
	res, err := b.Run(ctxT(t), acts, RunOptions{})
	var re *RefusedError
	if !errors.As(err, &re) || re.Method != "POST" || re.Path != "/submit" {
		t.Fatalf("gated submit: %v", err)
	}
	if res.Completed != 1 || len(res.Sent) != 0 {
		t.Fatalf("result %+v", res)
	}
	if n := len(site.Submissions()); n != before {
		t.Fatalf("a denied request reached the server")
	}
}

func TestNoSnapshot(t *testing.T) {
	b := attach(t, Options{})
	acts, _ := ParseActions(json.RawMessage(`[{"op":"click","id":"1"}]`))
	if _, err := b.Run(ctxT(t), acts, RunOptions{}); !errors.Is(err, ErrNoSnapshot) {
		t.Fatalf("err %v", err)
	}
}

// The model moves between tabs with run actions: switch_tab, then close_tab.
func TestTabActions(t *testing.T) {
	b := attach(t, Options{Logger: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.InfoLevel)})
	gotoPage(t, b, siteURL+"/tabs.html")
	s := snap(t, b, SnapshotOptions{})
	res := mustRun(t, b, fmt.Sprintf(`[{"op":"click","id":"%s"},{"op":"wait","load":true}]`, idOf(t, s.Text, "Open about")))
	if len(res.TabsOpened) != 1 {
		t.Fatalf("tabs opened: %+v", res.TabsOpened)
	}
	opened := res.TabsOpened[0].ID
	tabs, err := b.Tabs(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	// The package's tests share one Chrome: the tab to go back to is the
	// one at tabs.html, not any other test's left open.
	var first string
	for _, tb := range tabs {
		if !tb.Active && strings.Contains(tb.URL, "/tabs.html") {
			first = tb.ID
		}
	}
	res = mustRun(t, b, fmt.Sprintf(`[{"op":"switch_tab","tab":%q}]`, first))
	if !strings.Contains(res.URL, "/tabs.html") {
		t.Fatalf("switch_tab: now at %q", res.URL)
	}
	res = mustRun(t, b, fmt.Sprintf(`[{"op":"close_tab","tab":%q}]`, opened))
	if !strings.Contains(res.URL, "/tabs.html") {
		t.Fatalf("after close_tab: now at %q", res.URL)
	}
	if _, err := ParseActions([]byte(`[{"op":"switch_tab","tab":"t1"},{"op":"reload"}]`)); err == nil {
		t.Fatal("a tab op before other actions should be refused")
	}
	if _, err := b.Run(ctxT(t), []Action{{Op: "switch_tab", Tab: "t999"}}, RunOptions{}); err == nil {
		t.Fatal("switching to an unknown tab should fail")
	}
}

// A tab opened by script reports its page's URL and title, not the
// about:blank it starts at.
func TestScriptOpenedTabReportsItsPage(t *testing.T) {
	b := attach(t, Options{})
	gotoPage(t, b, siteURL+"/tabs.html")
	s := snap(t, b, SnapshotOptions{})
	res := mustRun(t, b, fmt.Sprintf(`[{"op":"click","id":"%s"}]`, idOf(t, s.Text, "Open contact by script")))
	if len(res.TabsOpened) != 1 || !strings.Contains(res.TabsOpened[0].URL, "/contact.html") || !strings.HasPrefix(res.TabsOpened[0].Title, "Contact") {
		t.Fatalf("tabs opened: %+v, want the contact page's URL and title", res.TabsOpened)
	}
}

func TestViewportDefaultsAndIsSet(t *testing.T) {
	for _, tc := range []struct{ w, h, wantW, wantH int }{{0, 0, 1280, 720}, {390, 844, 390, 844}} {
		b := attach(t, Options{ViewportWidth: tc.w, ViewportHeight: tc.h})
		gotoPage(t, b, siteURL+"/index.html")
		want := fmt.Sprintf("%dx%d", tc.wantW, tc.wantH)
		if got := evalIn(t, b, `innerWidth+"x"+innerHeight`); got != want {
			t.Fatalf("page laid out at %q, want %s", got, want)
		}
		if s := snap(t, b, SnapshotOptions{}); s.Viewport != want {
			t.Fatalf("snapshot viewport %q, want %s", s.Viewport, want)
		}
	}
}
