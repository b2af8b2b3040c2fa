package test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/redact"
	"github.com/durable-browser/durable-browser/test/harness"
	"github.com/durable-browser/durable-browser/workflows"
)

// A {{secret:NAME}} value is typed into the page but appears in no history
// event, result, log line or evidence object.
func TestSecretNeverLeaves(t *testing.T) {
	const secret = "s3cr3t-Passphrase-4242"
	t.Setenv("DURABLE_BROWSER_SECRET_DEMO_NAME", secret)
	// The secret belongs to the demo site: it is typed only there.
	t.Setenv("DURABLE_BROWSER_SECRET_DEMO_NAME_ORIGINS", redact.OriginOf(env.Demo.URL()))
	env.StartWorker(t, harness.WorkerOptions{})
	s := newSession(t, workflows.SessionConfig{})
	before := len(env.Demo.Submissions())

	var results []string
	keep := func(tool string, args any) {
		out, ok := s.call(tool, args)
		if !ok {
			t.Fatalf("%s failed: %s", tool, out)
		}
		results = append(results, string(out))
	}
	keep("run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/"}))
	var snap contract.SnapshotResult
	s.must("snapshot", map[string]any{}, &snap)
	keep("run", actions(
		map[string]any{"op": "fill", "id": refFor(t, snap.Text, `textbox "Email"`), "value": "agent@example.com"},
		map[string]any{"op": "fill", "id": refFor(t, snap.Text, `textbox "Name"`), "value": "{{secret:DEMO_NAME}}"},
	))
	// The page now holds the secret in a field: snapshot it, then submit so
	// the thanks page shows it back, and read and screenshot that page.
	keep("snapshot", map[string]any{})
	s.must("snapshot", map[string]any{"mode": "interactive"}, &snap)
	keep("run", actions(
		map[string]any{"op": "click", "id": refFor(t, snap.Text, `button "Create account"`)},
		map[string]any{"op": "wait", "text": "Thanks"},
	))
	keep("browser_read", map[string]any{})
	keep("browser_read", map[string]any{"what": "html"})
	keep("screenshot", map[string]any{})
	s.must("browser_release", map[string]any{}, nil)

	subs := env.Demo.Submissions()[before:]
	if len(subs) != 1 || subs[0].Fields["name"] != secret {
		t.Fatalf("the page should have received the secret value; got %+v", subs)
	}
	for i, r := range results {
		if strings.Contains(r, secret) {
			t.Fatalf("result %d holds the secret: %s", i, r)
		}
	}
	if h := historyJSON(t, s.id); strings.Contains(h, secret) {
		t.Fatal("the secret is in the workflow history")
	}
	if strings.Contains(env.Log.String(), secret) {
		t.Fatal("the secret is in the worker log")
	}
	// Every evidence object of this workflow.
	ctx := context.Background()
	cl := env.S3.Client()
	out, err := cl.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("evidence")})
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, o := range out.Contents {
		if !strings.Contains(*o.Key, "e2e-TestSecretNeverLeaves") {
			continue
		}
		seen++
		body, err := cl.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("evidence"), Key: o.Key})
		if err != nil {
			t.Fatal(err)
		}
		b := new(strings.Builder)
		buf := make([]byte, 32<<10)
		for {
			n, err := body.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		body.Body.Close()
		if strings.Contains(b.String(), secret) {
			t.Fatalf("evidence %s holds the secret", *o.Key)
		}
	}
	if seen < 4 {
		t.Fatalf("expected the reads and the screenshot filed with receipts, found %d objects", seen)
	}
}
