package test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/proto"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/evidence"
	"github.com/durable-browser/durable-browser/workflows"
)

// maxResult is the bound every activity result and update answer must stay
// under, so history stays well inside Temporal's payload limits.
const maxResult = 512 << 10

// An agent screenshots and reads a demo page: both reads are filed beside
// their receipts, the claim checks resolve to the same bytes, a retried
// filing writes nothing, no result in history is large, and the CLI verb
// reads the same bytes back and refuses a tampered object.
func TestEvidenceFiledReads(t *testing.T) {
	env.StartWorker(t, harnessDefaults())
	s := newSession(t, workflows.SessionConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	page := env.Demo.URL() + "/about.html?token=evidence-query-secret&x=1"
	s.must("run", actions(map[string]any{"op": "goto", "url": page}), nil)
	var shot contract.ScreenshotResult
	s.must("screenshot", map[string]any{}, &shot)
	var read contract.ReadResult
	s.must("browser_read", map[string]any{}, &read)

	tag := workflows.SessionTag(s.id, 1)
	ids := activityIDs(t, ctx, s.id)
	runID := env.Client.GetWorkflow(ctx, s.id, "").GetRunID()

	for _, c := range []struct {
		tool, activity string
		cc             contract.ClaimCheck
	}{
		{contract.ToolScreenshot, contract.ActivityScreenshot, shot.Evidence},
		{contract.ToolRead, contract.ActivityRead, read.Evidence},
	} {
		t.Run(c.tool, func(t *testing.T) {
			body, rec := objectWithReceipt(t, ctx, c.cc.Key)
			if got := evidence.SHA256Hex(body); got != c.cc.SHA256 || rec.SHA256 != got || int64(len(body)) != c.cc.Size {
				t.Fatalf("hashes: body %s, claim check %s, receipt %s (size %d vs %d)", got, c.cc.SHA256, rec.SHA256, len(body), c.cc.Size)
			}
			wantIDs := ids[c.activity]
			if len(wantIDs) != 1 {
				t.Fatalf("%s scheduled %d times: %v", c.activity, len(wantIDs), wantIDs)
			}
			// Query values are replaced the same way whichever way the tool
			// read the URL; the names stay.
			final := env.Demo.URL() + "/about.html?token=[redacted]&x=[redacted]"
			if rec.Tool != c.tool || rec.SessionTag != tag || rec.WorkflowID != s.id || rec.RunID != runID ||
				rec.ActivityID != wantIDs[0] || rec.FinalURL != final ||
				rec.Title != "About · Durable Browser Demo" ||
				rec.Status != "ok" || rec.BodyKey != c.cc.Key || rec.Time.IsZero() {
				t.Fatalf("receipt %+v\nwant tool %s, tag %s, workflow %s run %s, activity %s, final URL %s", rec, c.tool, tag, s.id, runID, wantIDs[0], final)
			}
			if strings.Contains(string(mustJSON(t, rec)), "evidence-query-secret") {
				t.Fatalf("receipt keeps the query value: %+v", rec)
			}
			// The claim check resolves to the same bytes.
			got, r2, err := evidence.GetVerified(ctx, env.Store, c.cc.Key)
			if err != nil || !bytes.Equal(got, body) || r2 == nil || r2.SHA256 != c.cc.SHA256 {
				t.Fatalf("GetVerified: %v (receipt %+v)", err, r2)
			}
			refileWritesNothing(t, ctx, s.id, c.cc, body, rec)
		})
	}
	if !strings.Contains(read.Content, "About") || read.Evidence.Inline == "" {
		t.Fatalf("a small read rides inline too: %+v", read)
	}
	// A markdown read files the markdown it returned, not the page's HTML.
	// (The content the model reads is fenced as page text; the fence is not filed.)
	if !strings.HasPrefix(read.Evidence.ContentType, "text/markdown") || read.Evidence.Inline == "" || !strings.Contains(read.Content, read.Evidence.Inline) ||
		!strings.HasSuffix(read.Evidence.Key, ".md") {
		t.Fatalf("browser_read markdown filed %s as %s, inline %q; want the markdown returned", read.Evidence.Key, read.Evidence.ContentType, read.Evidence.Inline)
	}
	// Filed and inlined HTML blanks a password field's value (the form
	// page writes one into its markup).
	s.must("run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/form.html"}), nil)
	var html contract.ReadResult
	s.must("browser_read", map[string]any{"what": "html"}, &html)
	filed, _ := objectWithReceipt(t, ctx, html.Evidence.Key)
	for where, text := range map[string]string{"content": html.Content, "inline": html.Evidence.Inline, "filed body": string(filed)} {
		if strings.Contains(text, "hunter2-secret") || !strings.Contains(text, `type="password"`) {
			t.Fatalf("the %s of an html read of the form keeps the password's value (or lost the field):\n%.2000s", where, text)
		}
	}

	checkHistorySizes(t, ctx, s.id)

	t.Run("cli", func(t *testing.T) {
		shotBody, _ := objectWithReceipt(t, ctx, shot.Evidence.Key)
		out := filepath.Join(t.TempDir(), "shot.png")
		if o, err := evidenceCLI(ctx, "-o", out, shot.Evidence.Key); err != nil {
			t.Fatalf("evidence get -o: %v\n%s", err, o)
		}
		if got, err := os.ReadFile(out); err != nil || !bytes.Equal(got, shotBody) {
			t.Fatalf("-o wrote %d bytes (%v), want %d", len(got), err, len(shotBody))
		}
		o, err := evidenceCLI(ctx, read.Evidence.Key)
		if readBody, _ := objectWithReceipt(t, ctx, read.Evidence.Key); err != nil || !bytes.Equal(o, readBody) {
			t.Fatalf("evidence get to stdout: %v\n%s", err, o)
		}
		o, err = evidenceCLI(ctx, "--receipt", read.Evidence.Key)
		var rec contract.Receipt
		if err != nil || json.Unmarshal(o, &rec) != nil || rec.SHA256 != read.Evidence.SHA256 || rec.Tool != contract.ToolRead {
			t.Fatalf("evidence get --receipt: %v\n%s", err, o)
		}

		// A forged object, even with its own hash recorded beside it, is
		// refused: exit 1, and the -o file is not written.
		forged := []byte("not the page that was read")
		_, err = env.S3.Client().PutObject(ctx, &s3.PutObjectInput{
			Bucket: aws.String(env.S3.Bucket()), Key: aws.String(env.Store.ObjectKey(read.Evidence.Key)),
			Body: bytes.NewReader(forged), Metadata: map[string]string{"sha256": evidence.SHA256Hex(forged)},
		})
		if err != nil {
			t.Fatal(err)
		}
		out2 := filepath.Join(t.TempDir(), "forged.md")
		o, err = evidenceCLI(ctx, "-o", out2, read.Evidence.Key)
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(o), "verification") {
			t.Fatalf("tampered object: %v\n%s", err, o)
		}
		if _, err := os.Stat(out2); !os.IsNotExist(err) {
			t.Fatalf("-o written for a tampered object: %v", err)
		}
		if _, _, err := evidence.GetVerified(ctx, env.Store, read.Evidence.Key); !errors.Is(err, evidence.ErrHashMismatch) {
			t.Fatalf("GetVerified of a tampered object: %v", err)
		}
		// A missing key is exit 1 too, naming where it looked.
		o, err = evidenceCLI(ctx, s.id+"/"+tag+"/no-such-screenshot-0123456789ab.png")
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(o), "no evidence at s3://") {
			t.Fatalf("missing key: %v\n%s", err, o)
		}
	})
}

// A full-page screenshot of the 2,000-element page is over the inline
// budget, so its result carries the claim check only.
func TestEvidenceBigScreenshotByReference(t *testing.T) {
	env.StartWorker(t, harnessDefaults())
	s := newSession(t, workflows.SessionConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s.must("run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/big.html"}), nil)
	var shot contract.ScreenshotResult
	s.must("screenshot", map[string]any{"full_page": true}, &shot)
	if shot.Evidence.Size <= int64(evidence.DefaultInlineBudget) {
		t.Fatalf("a full-page shot of big.html is only %d bytes; the test needs one over the inline budget", shot.Evidence.Size)
	}
	if shot.Evidence.Inline != "" || shot.Evidence.InlineEncoding != "" {
		t.Fatalf("a %d-byte screenshot rode inline (%d characters)", shot.Evidence.Size, len(shot.Evidence.Inline))
	}
	body, rec := objectWithReceipt(t, ctx, shot.Evidence.Key)
	if int64(len(body)) != shot.Evidence.Size || !bytes.HasPrefix(body, []byte("\x89PNG")) || rec.ContentType != "image/png" {
		t.Fatalf("filed %d bytes, %q, receipt %+v", len(body), body[:min(8, len(body))], rec)
	}
	// The big page is far taller than wide: the image keeps a readable
	// width and shows the top, saying how to see the rest.
	if shot.Width < 600 || shot.Cut == nil || shot.Cut.NextClip.Y != shot.Region.Y+shot.Region.Height ||
		!strings.Contains(shot.Cut.Note, `"y":`) {
		t.Fatalf("full page of big.html: %dx%d, region %+v, cut %+v; want at least 600 px wide and the cut named", shot.Width, shot.Height, shot.Region, shot.Cut)
	}
	var next contract.ScreenshotResult
	c := shot.Cut.NextClip
	s.must("screenshot", map[string]any{"clip": map[string]any{"x": c.X, "y": c.Y, "width": c.Width, "height": c.Height}}, &next)
	if next.Region.Y != c.Y || next.Width < 600 {
		t.Fatalf("the next clip showed %+v at %dx%d", next.Region, next.Width, next.Height)
	}
	checkHistorySizes(t, ctx, s.id)
}

// web_fetch through a session files its receipt under the session's tag.
func TestEvidenceWebFetchFiled(t *testing.T) {
	env.StartWorker(t, harnessDefaults())
	s := newSession(t, workflows.SessionConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s.must("run", actions(map[string]any{"op": "goto", "url": env.Demo.URL() + "/"}), nil)
	var res contract.WebFetchResult
	s.must("web_fetch", map[string]any{"url": env.Demo.URL() + "/about.html"}, &res)
	if res.Status != 200 || !strings.Contains(res.Content, "About") || res.Evidence.Key == "" {
		t.Fatalf("web_fetch: %+v", res)
	}
	body, rec := objectWithReceipt(t, ctx, res.Evidence.Key)
	ids := activityIDs(t, ctx, s.id)[contract.ActivityWebFetch]
	if evidence.SHA256Hex(body) != res.Evidence.SHA256 || rec.Tool != contract.ToolWebFetch ||
		rec.SessionTag != workflows.SessionTag(s.id, 1) || rec.WorkflowID != s.id || len(ids) != 1 || rec.ActivityID != ids[0] ||
		rec.HTTPStatus != 200 || rec.RequestedURL != env.Demo.URL()+"/about.html" || rec.FinalURL != env.Demo.URL()+"/about.html" {
		t.Fatalf("web_fetch receipt %+v (activity ids %v)", rec, ids)
	}
	checkHistorySizes(t, ctx, s.id)
}

// evidenceTestQueue is where the orchestrator workflow below runs.
const evidenceTestQueue = "e2e-evidence-orchestrator"

// fetchEvidenceWorkflow is an orchestrator's workflow using the Go helper.
func fetchEvidenceWorkflow(ctx workflow.Context, key string) ([]byte, error) {
	return workflows.GetEvidence(ctx, key)
}

// The workflow helper fetches a filed body through evidence.get, verified,
// and answers a missing key with a refused failure.
func TestEvidenceWorkflowHelper(t *testing.T) {
	env.StartWorker(t, harnessDefaults())
	w := sdkworker.New(env.Client, evidenceTestQueue, sdkworker.Options{})
	w.RegisterWorkflow(fetchEvidenceWorkflow)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	body := []byte("filed for the workflow helper")
	cc, err := evidence.File(ctx, env.Store, evidence.Filing{
		WorkflowID: "helper-" + t.Name(), SessionTag: "helper-1", CallID: "1", Tool: contract.ToolRead,
		Ext: "md", ContentType: "text/markdown", Body: body, Receipt: contract.Receipt{Status: "ok", Time: time.Unix(1, 0)},
	})
	if err != nil {
		t.Fatal(err)
	}
	run := func(key string) ([]byte, error) {
		r, err := env.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: evidenceTestQueue, WorkflowExecutionTimeout: time.Minute}, fetchEvidenceWorkflow, key)
		if err != nil {
			t.Fatal(err)
		}
		var out []byte
		err = r.Get(ctx, &out)
		return out, err
	}
	got, err := run(cc.Key)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("GetEvidence: %q, %v", got, err)
	}
	_, err = run("helper-x/helper-1/2-browser_read-0123456789ab.md")
	if err == nil || !strings.Contains(err.Error(), string(contract.CodeRefused)) {
		t.Fatalf("a missing key should fail the workflow with refused, got %v", err)
	}
}

// objectWithReceipt reads a filed body and its receipt straight from the
// bucket, as an auditor would, without the store's verification.
func objectWithReceipt(t *testing.T, ctx context.Context, key string) ([]byte, contract.Receipt) {
	t.Helper()
	body := rawObject(t, ctx, key)
	var rec contract.Receipt
	raw := rawObject(t, ctx, evidence.ReceiptKey(key))
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatalf("receipt of %s: %v\n%s", key, err, raw)
	}
	return body, rec
}

func rawObject(t *testing.T, ctx context.Context, key string) []byte {
	t.Helper()
	out, err := env.S3.Client().GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(env.S3.Bucket()), Key: aws.String(env.Store.ObjectKey(key))})
	if err != nil {
		t.Fatalf("object %s is not in the bucket: %v", env.Store.ObjectKey(key), err)
	}
	defer out.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(out.Body); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// refileWritesNothing files the same body again as a retried attempt of the
// same activity would (same ids, a later clock): the same claim check comes
// back and no object under the workflow changes or appears.
func refileWritesNothing(t *testing.T, ctx context.Context, workflowID string, cc contract.ClaimCheck, body []byte, rec contract.Receipt) {
	t.Helper()
	before := listObjects(t, ctx, workflowID)
	ext := cc.Key[strings.LastIndexByte(cc.Key, '.')+1:]
	again, err := evidence.File(ctx, env.Store, evidence.Filing{
		WorkflowID: rec.WorkflowID, SessionTag: rec.SessionTag, CallID: rec.ActivityID, Tool: rec.Tool, Ext: ext,
		ContentType: cc.ContentType, Body: body,
		Receipt: contract.Receipt{Status: "ok", FinalURL: rec.FinalURL, Title: rec.Title, RunID: rec.RunID, ActivityID: rec.ActivityID, Time: rec.Time.Add(time.Minute)},
	})
	if err != nil {
		t.Fatalf("re-filing: %v", err)
	}
	if again.Key != cc.Key || again.ReceiptKey != cc.ReceiptKey || again.SHA256 != cc.SHA256 {
		t.Fatalf("re-filing answered %+v, first filing %+v", again, cc)
	}
	after := listObjects(t, ctx, workflowID)
	if len(after) != len(before) {
		t.Fatalf("re-filing changed the objects: %v -> %v", before, after)
	}
	for k, v := range before {
		if after[k] != v {
			t.Fatalf("re-filing rewrote %s: %s -> %s", k, v, after[k])
		}
	}
}

// listObjects maps every object key under a workflow to its ETag and time.
func listObjects(t *testing.T, ctx context.Context, workflowID string) map[string]string {
	t.Helper()
	prefix := env.Store.ObjectKey(evidence.CleanSegment(workflowID)) + "/"
	out := map[string]string{}
	p := s3.NewListObjectsV2Paginator(env.S3.Client(), &s3.ListObjectsV2Input{Bucket: aws.String(env.S3.Bucket()), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Contents {
			out[aws.ToString(o.Key)] = aws.ToString(o.ETag) + " " + aws.ToTime(o.LastModified).String()
		}
	}
	if len(out) == 0 {
		t.Fatalf("no objects under %s", prefix)
	}
	return out
}

// historyEvents reads a workflow's whole history.
func historyEvents(t *testing.T, ctx context.Context, workflowID string) []*historypb.HistoryEvent {
	t.Helper()
	var evs []*historypb.HistoryEvent
	it := env.Client.GetWorkflowHistory(ctx, workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// activityIDs maps each activity type scheduled by a workflow to its ids.
func activityIDs(t *testing.T, ctx context.Context, workflowID string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, ev := range historyEvents(t, ctx, workflowID) {
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			out[a.GetActivityType().GetName()] = append(out[a.GetActivityType().GetName()], a.GetActivityId())
		}
	}
	return out
}

// checkHistorySizes fails when any activity result or update answer in the
// workflow's history reaches maxResult.
func checkHistorySizes(t *testing.T, ctx context.Context, workflowID string) {
	t.Helper()
	seen := 0
	for _, ev := range historyEvents(t, ctx, workflowID) {
		var size int
		switch {
		case ev.GetActivityTaskCompletedEventAttributes() != nil:
			size = proto.Size(ev.GetActivityTaskCompletedEventAttributes().GetResult())
		case ev.GetWorkflowExecutionUpdateCompletedEventAttributes() != nil:
			size = proto.Size(ev.GetWorkflowExecutionUpdateCompletedEventAttributes().GetOutcome())
		default:
			continue
		}
		seen++
		if size >= maxResult {
			t.Errorf("event %d (%s) carries %d bytes, over %d", ev.GetEventId(), ev.GetEventType(), size, maxResult)
		}
	}
	if seen == 0 {
		t.Fatalf("no activity results or update answers in %s's history", workflowID)
	}
}

// evidenceCLI runs `durable-browser evidence get` against the test bucket
// with the standard AWS environment, returning stdout and stderr together.
func evidenceCLI(ctx context.Context, args ...string) ([]byte, error) {
	full := append([]string{"evidence", "get",
		"--s3-bucket", env.S3.Bucket(), "--s3-prefix", "evidence", "--s3-endpoint", env.S3.Endpoint(),
		"--s3-path-style", "--s3-region", "us-east-1"}, args...)
	cmd := exec.CommandContext(ctx, env.Bin, full...)
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID="+env.S3.AccessKey(), "AWS_SECRET_ACCESS_KEY="+env.S3.SecretKey(), "AWS_EC2_METADATA_DISABLED=true")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
