package handoff

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
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
	if err := verify(secret, rec.header, rec.body, time.Now(), time.Minute); err != nil {
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
			if err := verify(tc.secret, rec.header, tc.body, tc.now, time.Minute); !errors.Is(err, errBadSignature) {
				t.Fatalf("want errBadSignature, got %v", err)
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

// dev's terminal gets the whole notice: what to do and how to answer, with
// no control sequence from the instruction (a model's words) reaching it.
func TestLogNotifierTellsTheTerminal(t *testing.T) {
	var reach bytes.Buffer
	l := LogNotifier{Logger: zerolog.Nop(), Reach: &reach}
	n := Notice{WorkflowID: "conv-1", RequestID: "h-3", Instruction: "Solve the puzzle\x1b[2J", Answer: AnswerFor("conv-1", "h-3"), ReachURL: "http://127.0.0.1:1/\u202eevil"}
	if err := l.Notify(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	out := reach.String()
	for _, want := range []string{"handoff h-3 of session conv-1", "Solve the puzzle", "durable-browser handoff done conv-1 h-3", "durable-browser handoff cancel conv-1 h-3"} {
		if !strings.Contains(out, want) {
			t.Fatalf("the terminal lacks %q:\n%s", want, out)
		}
	}
	if strings.ContainsAny(out, "\x1b\u202e") {
		t.Fatalf("a control or bidi character reached the terminal: %q", out)
	}
}

var errBadSignature = errors.New("handoff signature does not verify")

// verify is what a webhook's receiver does, as docs/operations.md tells it:
// v1 is the hex HMAC-SHA256 of "<t>.<body>", and an old t is refused.
func verify(secret []byte, header string, body []byte, now time.Time, maxAge time.Duration) error {
	var ts, sig string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sig = v
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || sig == "" {
		return errBadSignature
	}
	if age := now.Sub(time.Unix(sec, 0)); age > maxAge || age < -maxAge {
		return errBadSignature
	}
	m := hmac.New(sha256.New, secret)
	fmt.Fprintf(m, "%s.%s", ts, body)
	if !hmac.Equal([]byte(hex.EncodeToString(m.Sum(nil))), []byte(sig)) {
		return errBadSignature
	}
	return nil
}
