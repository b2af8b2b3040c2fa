package worker

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/envelope"
	"github.com/durable-browser/durable-browser/internal/redact"
)

// An activity registered on the worker's own interceptors, which calls no
// redactor, returns, heartbeats and fails with a secret: what the server
// would be sent holds none of it, and neither does the failure log, which
// sits outside the gate.
func TestWorkerRedactsEveryActivity(t *testing.T) {
	const secret = "wk-S3cret-Value-0123456789"
	red := redact.New()
	red.Register(secret)
	var logs bytes.Buffer
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.SetWorkerOptions(sdkworker.Options{Interceptors: interceptors(zerolog.New(&logs), red, nil)})
	var beats []string
	env.SetOnActivityHeartbeatListener(func(_ *activity.Info, d converter.EncodedValues) {
		var p contract.RunProgress
		if err := d.Get(&p); err != nil {
			t.Errorf("heartbeat: %v", err)
		}
		beats = append(beats, p.URL)
	})
	env.RegisterActivityWithOptions(func(ctx context.Context) (*contract.SnapshotResult, error) {
		activity.RecordHeartbeat(ctx, contract.RunProgress{URL: "https://a.example/" + secret})
		return &contract.SnapshotResult{OK: true, Page: contract.Page{Title: "hello " + secret}, Observation: contract.Observation{Text: "- text " + secret}}, nil
	}, activity.RegisterOptions{Name: "new.tool"})
	env.RegisterActivityWithOptions(func(ctx context.Context) (*contract.SnapshotResult, error) {
		return nil, contract.Fail(contract.CodeBrowserUnavailable, "the browser said %s", secret).WithDetail("stack " + secret)
	}, activity.RegisterOptions{Name: "new.failing"})

	v, err := env.ExecuteActivity("new.tool")
	if err != nil {
		t.Fatal(err)
	}
	var res contract.SnapshotResult
	if err := v.Get(&res); err != nil {
		t.Fatal(err)
	}
	if res.Title != "hello "+redact.Placeholder || res.Text != "- text "+redact.Placeholder {
		t.Fatalf("result = %+v, want the secret redacted", res)
	}
	if len(beats) != 1 || beats[0] != "https://a.example/"+redact.Placeholder {
		t.Fatalf("heartbeats = %q, want one with the secret redacted", beats)
	}

	_, err = env.ExecuteActivity("new.failing")
	f, ok := envelope.From(err)
	if !ok || f.Code != contract.CodeBrowserUnavailable {
		t.Fatalf("error %v, want the browser_unavailable envelope", err)
	}
	if strings.Contains(f.Message+f.Detail+err.Error(), secret) {
		t.Fatalf("the failure kept the secret: %+v", f)
	}
	if !strings.Contains(logs.String(), "the browser said "+redact.Placeholder) {
		t.Fatalf("the failure log did not log the redacted failure: %s", logs.String())
	}
	if strings.Contains(logs.String(), secret) {
		t.Fatalf("the failure log, outside the gate, logged the secret: %s", logs.String())
	}
}
