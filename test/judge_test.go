package test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/test/harness"
	"github.com/durable-browser/durable-browser/workflows"
)

// TestScriptedPageJudge serves page.judge with a scripted judge, as a host
// bringing its own model would: it names the demo site's sign-in page a
// login wall and its bot check a captcha, and finds the about page writing
// to AI readers. Reads of the first two answer not_content and blocked with
// the next step; the third is marked; a form page is content.
func TestScriptedPageJudge(t *testing.T) {
	var mu sync.Mutex
	var seen []contract.JudgePage
	judge := func(_ context.Context, req contract.JudgeRequest) (*contract.JudgeResult, error) {
		res := &contract.JudgeResult{}
		for _, p := range req.Pages {
			mu.Lock()
			seen = append(seen, p)
			mu.Unlock()
			j := contract.PageJudgement{Kind: contract.PageNone}
			switch {
			case strings.HasSuffix(p.URL, "/login.html"):
				j.Kind, j.Reason = contract.PageLoginWall, "a sign-in form and nothing else"
			case strings.HasSuffix(p.URL, "/captcha.html"):
				j.Kind = contract.PageCaptcha
			case strings.HasSuffix(p.URL, "/about.html"):
				j.Injection = 0.8
			}
			res.Pages = append(res.Pages, j)
		}
		return res, nil
	}
	env.StartWorker(t, harness.WorkerOptions{PageJudge: judge})
	s := newSession(t, workflows.SessionConfig{})
	read := func(page string) ([]byte, bool) {
		s.must("run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + page}), nil)
		return s.call("browser_read", map[string]any{"what": "text"})
	}

	out, ok := read("/login.html")
	if f := decodeFailure(t, out, ok); f.Code != contract.CodeNotContent || !strings.Contains(f.Message, "login_wall") ||
		!strings.Contains(f.Message, "browser_request_handoff") || !strings.Contains(f.Detail, "a sign-in form") {
		t.Fatalf("login wall: %s", out)
	}
	out, ok = read("/captcha.html")
	if f := decodeFailure(t, out, ok); f.Code != contract.CodeBlocked || !strings.Contains(f.Message, "captcha_or_bot_check") {
		t.Fatalf("captcha: %s", out)
	}
	s.must("run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/about.html"}), nil)
	var about contract.ReadResult
	s.must("browser_read", map[string]any{"what": "text"}, &about)
	if about.Injection == nil || about.Injection.Probability != 0.8 || about.Content == "" {
		t.Fatalf("about: %+v", about)
	}
	if out, ok := read("/form.html"); !ok || strings.Contains(string(out), `"injection"`) {
		t.Fatalf("form: %s", out)
	}
	mu.Lock()
	if len(seen) < 4 || !strings.Contains(seen[0].Text, "Sign in to continue") || seen[0].Status != 200 {
		t.Errorf("the judge was sent: %+v", seen)
	}
	mu.Unlock()
	s.must("browser_release", map[string]any{}, nil)
	recordHistory(t, s.id, "page-judge")
}

// decodeFailure decodes an answer that must be a failure envelope.
func decodeFailure(t *testing.T, out []byte, ok bool) contract.Failure {
	t.Helper()
	if ok {
		t.Fatalf("should have failed, answered %s", out)
	}
	var f contract.Failure
	if err := json.Unmarshal(out, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestDefaultPageJudge reads the demo site's bot check and sign-in pages
// with the worker's own rule-based judge, an ordinary page as content, and
// a page the server answered 404 as an error.
func TestDefaultPageJudge(t *testing.T) {
	env.StartWorker(t, harnessDefaults())
	s := newSession(t, workflows.SessionConfig{})
	for page, want := range map[string]contract.Code{"/captcha.html": contract.CodeBlocked, "/login.html": contract.CodeNotContent} {
		s.must("run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + page}), nil)
		if f := s.failure("browser_read", map[string]any{}); f.Code != want {
			t.Errorf("%s: %+v, want %s", page, f, want)
		}
	}
	var res contract.WebFetchResult
	s.must("web_fetch", map[string]any{"url": env.Demo.URL() + "/about.html"}, &res)
	if res.Injection != nil || !strings.Contains(res.Content, "Browser tools for agents") {
		t.Fatalf("about: %+v", res)
	}
	// The browser shows a missing page: its status names it.
	s.must("run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/no-such-page.html"}), nil)
	if f := s.failure("browser_read", map[string]any{}); f.Code != contract.CodeNotContent || !strings.Contains(f.Message, "error_or_not_found") {
		t.Fatalf("a missing page: %+v", f)
	}
}

// A fetch that brings back no text is judged like any other: a script's
// empty shell and an empty body answer not_content (empty_or_template),
// naming the browser as the way to read a page its scripts build, not ok
// with nothing in it. A page with text is still content.
func TestEmptyFetchIsJudged(t *testing.T) {
	env.StartWorker(t, harnessDefaults())
	shell := pageServer(t, `<!doctype html><title>App</title><div id="root"></div><script>document.getElementById("root").textContent = "Built by script"</script>`)
	empty := pageServer(t, "")
	full := pageServer(t, `<!doctype html><title>Notes</title><p>Three plain words of content here.</p>`)
	s := newSession(t, workflows.SessionConfig{})
	for name, url := range map[string]string{"shell": shell, "empty body": empty} {
		f := s.failure("web_fetch", map[string]any{"url": url})
		if f.Code != contract.CodeNotContent || !strings.Contains(f.Message, contract.PageEmpty) || !strings.Contains(f.Message, "browser_read") {
			t.Errorf("%s: answered %+v, want not_content naming %s and browser_read", name, f, contract.PageEmpty)
		}
	}
	// A raw fetch has no text by design (its bytes are filed): not judged.
	var raw contract.WebFetchResult
	s.must("web_fetch", map[string]any{"url": shell, "format": "raw"}, &raw)
	if raw.Evidence.Key == "" {
		t.Fatalf("a raw fetch filed nothing: %+v", raw)
	}
	var res contract.WebFetchResult
	s.must("web_fetch", map[string]any{"url": full}, &res)
	if !strings.Contains(res.Content, "Three plain words") {
		t.Fatalf("a page with text: %+v", res)
	}
	s.must("browser_release", map[string]any{}, nil)
	recordHistory(t, s.id, "judge-empty")
}
