package handoff

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

func TestWebhookSignatureVerifies(t *testing.T) {
	secret := []byte("webhook-signing-key")
	got := make(chan struct {
		header string
		body   []byte
	}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- struct {
			header string
			body   []byte
		}{r.Header.Get(SignatureHeader), b}
	}))
	defer srv.Close()
	n := Notice{WorkflowID: "wf", RequestID: "h-1", Instruction: "solve the puzzle", Answer: AnswerFor("wf", "h-1")}
	if err := (WebhookNotifier{URL: srv.URL, Secret: secret}).Notify(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	rec := <-got
	if err := Verify(secret, rec.header, rec.body, time.Now(), time.Minute); err != nil {
		t.Fatalf("signature should verify: %v", err)
	}
	var back Notice
	if err := json.Unmarshal(rec.body, &back); err != nil || back.RequestID != "h-1" {
		t.Fatalf("body: %v %+v", err, back)
	}
	tests := []struct {
		name   string
		secret []byte
		body   []byte
		now    time.Time
	}{
		{"wrong key", []byte("other"), rec.body, time.Now()},
		{"tampered body", secret, append([]byte(nil), append(rec.body, ' ')...), time.Now()},
		{"too old", secret, rec.body, time.Now().Add(time.Hour)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := Verify(tc.secret, rec.header, tc.body, tc.now, time.Minute); !errors.Is(err, ErrBadSignature) {
				t.Fatalf("want ErrBadSignature, got %v", err)
			}
		})
	}
}

func TestWebhookRefusal(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }))
	defer srv.Close()
	err := (WebhookNotifier{URL: srv.URL, Secret: []byte("k")}).Notify(context.Background(), Notice{})
	if !errors.Is(err, ErrWebhook) {
		t.Fatalf("want ErrWebhook, got %v", err)
	}
}

func TestLogNotifierKeepsReachOutOfLog(t *testing.T) {
	var logBuf, reach bytes.Buffer
	l := LogNotifier{Logger: zerolog.New(&logBuf), Reach: &reach}
	n := Notice{RequestID: "h-2", ReachURL: "http://127.0.0.1:39999/devtools/inspector.html?ws=secret"}
	if err := l.Notify(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logBuf.String(), "39999") {
		t.Fatalf("reach address leaked into the log: %s", logBuf.String())
	}
	if !strings.Contains(reach.String(), "39999") {
		t.Fatalf("reach writer should get the address")
	}
}

func FuzzVerify(f *testing.F) {
	f.Add("t=1,v1=abc", []byte("{}"))
	f.Add("", []byte(nil))
	f.Add("t=,v1=", []byte("x"))
	f.Fuzz(func(t *testing.T, header string, body []byte) {
		_ = Verify([]byte("k"), header, body, time.Unix(1, 0), time.Minute)
	})
}
