package redactgate

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/envelope"
	"github.com/durable-browser/durable-browser/internal/redact"
)

const secret = "s3cr3t-Value/with+signs=42"

// leaks reports a spelling of the secret in s.
func leaks(s string) string {
	for _, sp := range []string{secret, base64.StdEncoding.EncodeToString([]byte(secret)), strings.ReplaceAll(secret, "/", "%2F")} {
		if strings.Contains(s, sp) {
			return sp
		}
	}
	return ""
}

type result struct {
	URL   string          `json:"url"`
	Items []string        `json:"items"`
	Raw   []byte          `json:"raw"`
	N     int             `json:"n"`
	Inner *result         `json:"inner,omitempty"`
	Tags  map[string]bool `json:"tags"`
}

func env(t *testing.T, fns map[string]any) (*testsuite.TestActivityEnvironment, *[]converter.EncodedValues) {
	t.Helper()
	red := redact.New()
	red.Register(secret)
	var s testsuite.WorkflowTestSuite
	e := s.NewTestActivityEnvironment()
	e.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{New(red)}})
	var beats []converter.EncodedValues
	e.SetOnActivityHeartbeatListener(func(_ *activity.Info, d converter.EncodedValues) { beats = append(beats, d) })
	for name, fn := range fns {
		e.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
	return e, &beats
}

// An activity that returns, heartbeats and fails with a registered value in
// every field it has, calling no redactor itself, hands back none of it.
func TestGateRedactsWhatAnActivityHandsBack(t *testing.T) {
	in := &result{URL: "https://a.example/p/" + secret, Items: []string{"x " + secret, "ok"}, Raw: []byte("raw bytes"),
		N: 7, Inner: &result{URL: "token=" + "abcdefgh12345"}, Tags: map[string]bool{secret: true}}
	e, beats := env(t, map[string]any{
		"result": func(ctx context.Context) (*result, error) {
			activity.RecordHeartbeat(ctx, contract.RunProgress{URL: "https://a.example/?q=" + secret, Sent: []contract.SentRequest{{Method: "POST", Path: "/" + secret}}})
			return in, nil
		},
		"bare": func(ctx context.Context) (*result, error) {
			f := contract.Fail(contract.CodeRefused, "no %s here", secret).WithDetail(strings.Repeat("d", contract.MaxDetail-4) + secret)
			f.LastURL = "https://user:pw@a.example/x?k=" + secret + "#frag"
			f.Sent = []contract.SentRequest{{Method: "POST", Origin: "https://a.example", Path: "/" + secret}}
			return nil, f
		},
		"wrapped": func(ctx context.Context) (*result, error) {
			return nil, envelope.Error(contract.Fail(contract.CodeTimeout, "waited for %q", secret))
		},
		"plain": func(ctx context.Context) (string, error) {
			return "", temporal.NewNonRetryableApplicationError("agent run failed: "+secret, "AgentFailed", errors.New("cause "+secret))
		},
		"gostd": func(ctx context.Context) (string, error) { return "", fmt.Errorf("read %s: boom", secret) },
		"clean": func(ctx context.Context) (string, error) { return "", context.Canceled },
		"nilfailure": func(ctx context.Context) (*result, error) {
			var f *contract.Failure
			return &result{N: 1}, f
		},
	})

	v, err := e.ExecuteActivity("result")
	if err != nil {
		t.Fatal(err)
	}
	var got result
	if err := v.Get(&got); err != nil {
		t.Fatal(err)
	}
	s := fmt.Sprintf("%+v %s %+v", got, got.Raw, *got.Inner)
	if sp := leaks(s); sp != "" {
		t.Fatalf("the result kept %q: %s", sp, s)
	}
	if got.N != 7 || got.Items[1] != "ok" || string(got.Raw) != "raw bytes" || !strings.Contains(got.URL, redact.Placeholder) || got.Inner.URL != "token="+redact.Placeholder {
		t.Fatalf("the result lost what was not secret: %+v", got)
	}
	if in.URL != "https://a.example/p/"+secret {
		t.Fatalf("the gate changed the activity's own value: %q", in.URL)
	}
	if len(*beats) != 1 {
		t.Fatalf("%d heartbeats reached the server, want 1", len(*beats))
	}
	var p contract.RunProgress
	if err := (*beats)[0].Get(&p); err != nil {
		t.Fatal(err)
	}
	if sp := leaks(fmt.Sprintf("%+v", p)); sp != "" || p.Sent[0].Method != "POST" {
		t.Fatalf("the heartbeat kept %q: %+v", sp, p)
	}

	for _, name := range []string{"bare", "wrapped"} {
		_, err := e.ExecuteActivity(name)
		f, ok := envelope.From(err)
		if !ok {
			t.Fatalf("%s: no envelope in %v", name, err)
		}
		if sp := leaks(fmt.Sprintf("%+v %v", *f, err)); sp != "" {
			t.Fatalf("%s: the failure kept %q: %+v", name, sp, *f)
		}
		if name != "bare" {
			continue
		}
		// Cut first, the detail would end with the secret's first 4 bytes.
		if f.Code != contract.CodeRefused || len(f.Detail) > contract.MaxDetail || !strings.HasSuffix(f.Detail, redact.Placeholder[:4]) {
			t.Fatalf("the detail was not redacted whole and then bounded: code %s, %d bytes, ends %q", f.Code, len(f.Detail), f.Detail[len(f.Detail)-20:])
		}
		if f.LastURL != "https://a.example/x?k="+redact.Placeholder || f.Sent[0].Path != "/"+redact.Placeholder {
			t.Fatalf("last URL %q, sent %+v: want them scrubbed and redacted", f.LastURL, f.Sent)
		}
		var app *temporal.ApplicationError
		if !errors.As(err, &app) || app.Type() != string(contract.CodeRefused) || !app.NonRetryable() {
			t.Fatalf("a bare envelope did not become the envelope's error: %v", err)
		}
	}

	for _, name := range []string{"plain", "gostd"} {
		_, err := e.ExecuteActivity(name)
		if err == nil || leaks(err.Error()) != "" || !strings.Contains(err.Error(), redact.Placeholder) {
			t.Fatalf("%s: error %v, want it redacted", name, err)
		}
		var app *temporal.ApplicationError
		if name == "plain" && (!errors.As(err, &app) || app.Type() != "AgentFailed" || !app.NonRetryable()) {
			t.Fatalf("the error lost its type or retry stance: %v", err)
		}
	}
	if _, err := e.ExecuteActivity("clean"); !errors.Is(err, context.Canceled) && !temporal.IsCanceledError(err) && !strings.Contains(fmt.Sprint(err), "canceled") {
		t.Fatalf("an error with nothing to hide changed: %v", err)
	}
	_, err = e.ExecuteActivity("nilfailure")
	if err != nil {
		t.Fatalf("a nil *Failure returned as the error failed the call: %v", err)
	}
}

// A result whose redacted form no longer fits its type (a registered
// all-digit value in a number field, a byte field whose base64 held one) is
// not sent: the call fails closed.
func TestGateFailsClosed(t *testing.T) {
	red := redact.New()
	red.Register("4111111111111111")
	type card struct {
		Number int64 `json:"number"`
	}
	type body struct {
		Body []byte `json:"body"`
	}
	for _, v := range []any{card{Number: 4111111111111111}, &body{Body: []byte("4111111111111111")}} {
		if out, err := Value(red, v); err == nil {
			t.Fatalf("Value(%+v) = %+v, want an error", v, out)
		}
	}
	var s testsuite.WorkflowTestSuite
	e := s.NewTestActivityEnvironment()
	e.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{New(red)}})
	e.RegisterActivityWithOptions(func(context.Context) (card, error) { return card{Number: 4111111111111111}, nil }, activity.RegisterOptions{Name: "card"})
	_, err := e.ExecuteActivity("card")
	f, ok := envelope.From(err)
	if !ok || f.Code != contract.CodeCommandFailed || f.Retryable || strings.Contains(err.Error(), "4111111111111111") {
		t.Fatalf("error %v (%+v), want a non-retryable command_failed without the value", err, f)
	}
}
