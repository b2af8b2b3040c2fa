// Package handoff tells a person that a session needs them: the port a
// workflow's handoff request goes out through. A notice may carry a way to
// reach the browser (a live view or DevTools inspector address); that address
// is a full-control credential, so it travels to the port and nowhere else.
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
	"strconv"
	"time"

	"github.com/rs/zerolog"

	"github.com/durable-browser/durable-browser/internal/oneline"
)

// Notice is what a person is told.
type Notice struct {
	WorkflowID  string    `json:"workflow_id"`
	RequestID   string    `json:"request_id"`
	SessionTag  string    `json:"session_tag"`
	Instruction string    `json:"instruction"`
	Condition   string    `json:"condition,omitempty"`
	ExpiresAt   time.Time `json:"expires_at"`
	// Answer tells how to reply: the CLI commands and the raw signal.
	Answer Answer `json:"answer"`
	// ReachURL is a live view or DevTools address. A credential.
	ReachURL string `json:"reach_url,omitempty"`
}

// Answer lists the ways to answer a handoff.
type Answer struct {
	Done      string `json:"done"`
	Cancel    string `json:"cancel"`
	RawSignal string `json:"raw_signal"`
}

// AnswerFor builds the answer instructions for a request.
func AnswerFor(workflowID, requestID string) Answer {
	return Answer{
		Done:   fmt.Sprintf("durable-browser handoff done %s %s", workflowID, requestID),
		Cancel: fmt.Sprintf("durable-browser handoff cancel %s %s", workflowID, requestID),
		RawSignal: fmt.Sprintf(`temporal workflow signal --workflow-id %s --name handoff --input '{"request_id":%q,"outcome":"done"}'`,
			workflowID, requestID),
	}
}

// Notifier sends a notice to a person.
type Notifier interface {
	Notify(ctx context.Context, n Notice) error
}

// LogNotifier writes notices to a log. The reach address is written to its
// own writer (by default nowhere), never to the structured log.
type LogNotifier struct {
	Logger zerolog.Logger
	// Reach, when set, receives the reach address on a line of its own: for
	// `dev`, the terminal of the person running it.
	Reach io.Writer
}

// Notify logs the notice without its credential.
func (l LogNotifier) Notify(_ context.Context, n Notice) error {
	l.Logger.Warn().
		Str("workflow_id", n.WorkflowID).
		Str("request_id", n.RequestID).
		Str("session_tag", n.SessionTag).
		Str("instruction", n.Instruction).
		Time("expires_at", n.ExpiresAt).
		Str("answer_done", n.Answer.Done).
		Str("answer_cancel", n.Answer.Cancel).
		Bool("browser_reachable", n.ReachURL != "").
		Msg("a person is needed")
	if l.Reach == nil {
		return nil
	}
	// The person at this terminal reads what to do and how to answer. The
	// instruction is a model's words (pages feed it): quoted, so no control
	// sequence of theirs reaches the terminal.
	fmt.Fprintf(l.Reach, "handoff %s of session %s: %s\n", oneline.Safe(n.RequestID), oneline.Safe(n.WorkflowID), strconv.Quote(n.Instruction))
	if n.Answer.Done != "" {
		fmt.Fprintf(l.Reach, "  when done: %s\n  to cancel: %s\n", oneline.Safe(n.Answer.Done), oneline.Safe(n.Answer.Cancel))
	}
	if n.ReachURL != "" {
		fmt.Fprintf(l.Reach, "handoff %s: reach the browser at %s\n", oneline.Safe(n.RequestID), oneline.Safe(n.ReachURL))
	}
	return nil
}

// SignatureHeader carries "t=<unix seconds>,v1=<hex hmac>" over "<t>.<body>".
const SignatureHeader = "X-Durable-Browser-Signature"

// WebhookNotifier POSTs the notice as JSON, signed with HMAC-SHA256.
type WebhookNotifier struct {
	URL    string
	Secret []byte
	Client *http.Client
	Now    func() time.Time
}

// ErrWebhook is returned when the receiver does not accept a notice.
var ErrWebhook = errors.New("handoff webhook refused the notice")

// Notify posts the notice; a non-2xx answer is an error wrapping ErrWebhook.
func (w WebhookNotifier) Notify(ctx context.Context, n Notice) error {
	body, err := json.Marshal(n)
	if err != nil {
		return err
	}
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	ts := strconv.FormatInt(now().Unix(), 10)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("handoff webhook: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(SignatureHeader, "t="+ts+",v1="+Sign(w.Secret, ts, body))
	c := w.Client
	if c == nil {
		c = &http.Client{Timeout: 10 * time.Second}
	}
	resp, err := c.Do(req)
	if err != nil {
		// The URL may hold a token; say only that it failed.
		return fmt.Errorf("handoff webhook: request failed: %w", errors.Unwrap(err))
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%w: status %d", ErrWebhook, resp.StatusCode)
	}
	return nil
}

// Sign returns the hex HMAC-SHA256 of "<ts>.<body>" under secret.
func Sign(secret []byte, ts string, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte("."))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}
