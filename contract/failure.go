package contract

import (
	"fmt"
	"unicode/utf8"
)

// Code names what went wrong, so a model (or its orchestrator) can decide what
// to do next. Codes are derived from typed facts, never from message text.
type Code string

// The sixteen failure codes. See docs/failures.md.
const (
	CodeBrowserUnavailable Code = "browser_unavailable"
	CodeAuth               Code = "auth"
	CodeTimeout            Code = "timeout"
	CodeAborted            Code = "aborted"
	CodeRefused            Code = "refused"
	CodeStaleSnapshot      Code = "stale_snapshot"
	CodeSessionEnded       Code = "session_ended"
	CodeSessionReplaced    Code = "session_replaced"
	CodeSessionRestored    Code = "session_restored"
	CodeEffectUnknown      Code = "effect_unknown"
	CodeCodeError          Code = "code_error"
	CodeCommandFailed      Code = "command_failed"
	CodeNotContent         Code = "not_content"
	CodeBlocked            Code = "blocked"
	CodeRateLimited        Code = "rate_limited"
	CodeWaitingForHuman    Code = "waiting_for_human"
)

// AllCodes lists every code once, in documentation order.
var AllCodes = []Code{
	CodeBrowserUnavailable, CodeAuth, CodeTimeout, CodeAborted, CodeRefused,
	CodeStaleSnapshot, CodeSessionEnded, CodeSessionReplaced, CodeSessionRestored, CodeEffectUnknown,
	CodeCodeError, CodeCommandFailed, CodeNotContent, CodeBlocked, CodeRateLimited,
	CodeWaitingForHuman,
}

// Effect says whether a failed call may have changed the world.
type Effect string

const (
	EffectNone             Effect = "none"
	EffectPossiblyEffected Effect = "possibly_effected"
)

// ReasonPersonDriving: a person drives the session's browser in the live
// view (input within the last 3 s, or Take over), so the call was refused
// before it acted. Retryable: wait, then take a snapshot.
const ReasonPersonDriving = "person_driving"

// MaxDetail bounds Failure.Detail.
const MaxDetail = 2000

// SentRequest is one side-effecting request a run let leave the browser.
// Bodies are never recorded.
type SentRequest struct {
	Method string `json:"method"`
	Origin string `json:"origin"`
	Path   string `json:"path"`
}

// Failure is the one failure envelope every tool answers with.
type Failure struct {
	OK        bool   `json:"ok"`
	Code      Code   `json:"code"`
	Retryable bool   `json:"retryable"`
	Effect    Effect `json:"effect"`
	// Message names the way out.
	Message string `json:"message"`
	// Reason narrows the code where a caller acts on the difference:
	// ReasonPersonDriving on refused.
	Reason string `json:"reason,omitempty"`
	// Detail is redacted and at most MaxDetail characters.
	Detail string `json:"detail,omitempty"`
	// LastURL is the page's last known (scrubbed) URL, for effect_unknown.
	LastURL string `json:"last_url,omitempty"`
	// Sent lists side-effecting requests known to have left the browser.
	Sent []SentRequest `json:"sent,omitempty"`
	// Held lists the requests a run held for a person or refused by policy,
	// with each decision, when a run failed because of one.
	Held []HeldRequest `json:"held,omitempty"`
	// NotListed counts what Sent, Held and a run's other lists left out
	// past their 50 items.
	NotListed *NotListed `json:"not_listed,omitempty"`
	// Completed says how many actions of a batch ran before it stopped.
	Completed *int `json:"completed,omitempty"`
	// PageCalls counts a code cell's page calls before it stopped.
	PageCalls *PageCalls `json:"page_calls,omitempty"`
	// Restored says what a session_restored brought back and what not.
	Restored *Restored `json:"restored,omitempty"`
}

// Restored is what a new browser was made from: the last checkpoint of the
// session whose host was lost (docs/restore.md).
type Restored struct {
	// From is the tag of the lost session; the new one's is in the message.
	From string `json:"from"`
	// Tabs are the new browser's tabs, in the lost one's order.
	Tabs []RestoredTab `json:"tabs"`
	// Cookies and Origins count the cookies and the origins' web storage
	// put back before any tab loaded.
	Cookies int `json:"cookies"`
	Origins int `json:"origins"`
	// NotRestored names what never comes back (form fields typed but not
	// submitted, IndexedDB, an open dialog, a page reached by POST).
	NotRestored []string `json:"not_restored"`
}

// RestoredTab is one tab of a restored browser.
type RestoredTab struct {
	// URL is where the tab is now: the lost tab's URL, loaded again by
	// GET, or about:blank (Reason says why; Was is the lost tab's URL).
	URL    string `json:"url"`
	Title  string `json:"title,omitempty"`
	Active bool   `json:"active,omitempty"`
	Reason string `json:"reason,omitempty"`
	Was    string `json:"was,omitempty"`
}

func (f *Failure) Error() string { return fmt.Sprintf("%s: %s", f.Code, f.Message) }

// defaultRetryable is each code's retry stance when the caller does not say.
var defaultRetryable = map[Code]bool{
	CodeBrowserUnavailable: true,
	CodeTimeout:            true,
	CodeRateLimited:        true,
	CodeWaitingForHuman:    true,
}

// OperatorMustAct says a failure with code c is for an operator to look
// into: no browser could be had or evidence could not be filed
// (browser_unavailable), a provider refused credentials (auth), or a worker
// was lost mid-effect (effect_unknown). Every other code answers the call a
// model made (a stale id, a refused argument, a page that timed out), which
// the model acts on and no one need be alerted to.
func (c Code) OperatorMustAct() bool {
	switch c {
	case CodeBrowserUnavailable, CodeAuth, CodeEffectUnknown:
		return true
	}
	return false
}

// Fail builds a failure with the code's default retry stance and no effect.
func Fail(code Code, msg string, args ...any) *Failure {
	if len(args) > 0 {
		msg = fmt.Sprintf(msg, args...)
	}
	return &Failure{Code: code, Retryable: defaultRetryable[code], Effect: EffectNone, Message: msg}
}

// WithDetail sets the detail as given, whole. Whoever sends the failure (for
// an activity, the worker's redaction gate) redacts it and then bounds it
// with BoundDetail: cutting first could leave
// a secret's prefix that redaction would no longer recognise.
func (f *Failure) WithDetail(d string) *Failure {
	f.Detail = d
	return f
}

// BoundDetail cuts Detail to MaxDetail bytes, at a character boundary. Call
// it after redaction.
func (f *Failure) BoundDetail() *Failure {
	if len(f.Detail) > MaxDetail {
		d := f.Detail[:MaxDetail]
		for len(d) > 0 && !utf8.ValidString(d) {
			d = d[:len(d)-1]
		}
		f.Detail = d
	}
	return f
}

// Effected marks the failure as possibly having changed the world.
func (f *Failure) Effected() *Failure {
	f.Effect = EffectPossiblyEffected
	return f
}
