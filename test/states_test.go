package test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/demosite"
	"github.com/durable-browser/durable-browser/providers"
	"github.com/durable-browser/durable-browser/providers/rentfake"
	"github.com/durable-browser/durable-browser/test/harness"
	"github.com/durable-browser/durable-browser/workflows"
)

// A sign-in moves with its named state: made on the demo shop in a local
// session on one worker process and released, it is there again in a
// session on the cdp provider, on another worker process. The state's
// objects in S3 hold no cookie value in clear, and neither do the
// sessions' histories or the workers' logs. A second session asking for a
// state in use is refused by name.
func TestStateMovesBetweenWorkers(t *testing.T) {
	keyBytes := make([]byte, 32)
	_, _ = rand.Read(keyBytes)
	key := base64.StdEncoding.EncodeToString(keyBytes)
	name := "shop-" + strings.ToLower(rand.Text()[:8])
	keyEnv := "DURABLE_BROWSER_STATE_KEY=" + key

	// The demo site is shared by the package's tests: count only the
	// sign-ins this test makes.
	before := env.Demo.ShopSessions()
	a := env.StartWorkerProcess(t, harness.ProcessOptions{Env: []string{keyEnv}})
	s := newSession(t, workflows.SessionConfig{Session: contract.SessionOptions{State: name}})
	var run contract.RunResult
	s.must("run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/shop/"}), &run)
	var snap contract.SnapshotResult
	s.must("snapshot", map[string]any{"mode": "interactive"}, &snap)
	email, pass := refFor(t, snap.Text, `textbox "Email"`), refFor(t, snap.Text, `textbox "Password"`)
	button := refFor(t, snap.Text, `button "Sign in"`)
	s.must("run", actions(
		map[string]any{"op": "fill", "id": email, "value": demosite.ShopEmail},
		map[string]any{"op": "fill", "id": pass, "value": demosite.ShopPassword},
		map[string]any{"op": "click", "id": button},
	), &run)
	if !strings.HasPrefix(run.Title, "Search") {
		t.Fatalf("the sign-in did not land on the shop's search page: %q", run.Title)
	}

	// While the first session holds the state, another is refused by name.
	other := newSession(t, workflows.SessionConfig{Session: contract.SessionOptions{State: name}})
	out, ok := other.call("snapshot", map[string]any{})
	if ok || !strings.Contains(string(out), `"refused"`) || !strings.Contains(string(out), name) || !strings.Contains(string(out), "in use by another session") {
		t.Fatalf("a second session on a state in use should be refused naming it: %s", out)
	}

	var rel contract.ReleaseResult
	s.must("browser_release", map[string]any{}, &rel)
	if err := <-a.Terminate(); err != nil {
		t.Logf("first worker exited: %v", err)
	}

	// A Chrome of someone else's, driven through the cdp provider by
	// another worker process.
	browsers, err := rentfake.NewBrowsers(t.TempDir())
	if err != nil {
		t.Fatalf("this test needs Chromium: %v", err)
	}
	chrome, err := browsers.Create(context.Background(), providers.CreateOptions{Tag: "cdp-chrome"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = browsers.Release(context.Background(), "cdp-chrome") })
	b := env.StartWorkerProcess(t, harness.ProcessOptions{Env: []string{keyEnv, "DURABLE_BROWSER_CDP_ENDPOINT=" + chrome.CDPURL}})

	s2 := newSession(t, workflows.SessionConfig{Session: contract.SessionOptions{Provider: "cdp", State: name}})
	s2.must("run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/shop/search"}), &run)
	if !strings.HasPrefix(run.Title, "Search") {
		t.Fatalf("the cdp session on another worker is not signed in: landed on %q", run.Title)
	}
	s2.must("browser_release", map[string]any{}, &rel)

	var cookies []string
	for _, c := range env.Demo.ShopSessions() {
		if !slices.Contains(before, c) {
			cookies = append(cookies, c)
		}
	}
	if len(cookies) != 1 {
		t.Fatalf("the shop handed out %d sign-ins; one sign-in should serve both sessions", len(cookies))
	}
	objects := stateObjects(t)
	if len(objects) == 0 {
		t.Fatal("no state objects in the bucket")
	}
	corpus := decodedHistory(t, s.id) + decodedHistory(t, s2.id) + decodedHistory(t, other.id) + a.Stderr.String() + b.Stderr.String()
	for _, c := range cookies {
		for k, body := range objects {
			if strings.Contains(body, c) {
				t.Fatalf("state object %s holds the sign-in cookie in clear", k)
			}
			if strings.Contains(k, name) {
				t.Fatalf("state object key %s holds the state's name", k)
			}
		}
		if strings.Contains(corpus, c) {
			t.Fatal("the sign-in cookie is in a history or a worker's log")
		}
	}
	for k, body := range objects {
		if strings.Contains(body, demosite.ShopEmail) || strings.Contains(body, `"cookies"`) {
			t.Fatalf("state object %s is not sealed", k)
		}
	}
	if strings.Contains(corpus, key) {
		t.Fatal("the state key is in a history or a worker's log")
	}
	harness.Eventually(t, 30*time.Second, func() bool { return len(harness.PIDsUnder(a.ProfileRoot)) == 0 }, "the first worker's browser outlived it")
}

// stateObjects reads every object under states/ in the test bucket.
func stateObjects(t *testing.T) map[string]string {
	t.Helper()
	ctx := context.Background()
	c := env.Store.Client()
	out := map[string]string{}
	list, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(env.Store.Bucket()), Prefix: aws.String("states/")})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range list.Contents {
		g, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(env.Store.Bucket()), Key: o.Key})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(g.Body)
		g.Body.Close()
		out[aws.ToString(o.Key)] = string(b)
	}
	return out
}
