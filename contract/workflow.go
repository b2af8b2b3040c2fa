package contract

import (
	"encoding/json"
	"strings"
	"time"
)

// Names a BrowserSession workflow answers to. They are stable: callers in any
// SDK, the CLI and the Temporal UI use them.
const (
	// WorkflowBrowserSession is the session custody workflow's type name.
	WorkflowBrowserSession = "BrowserSession"
	// WorkflowEvidence fetches one filed body through the workers, for
	// clients outside workflow code that have no S3 access of their own
	// (the MCP server showing a screenshot): input GetEvidenceRequest,
	// result GetEvidenceResult, a failure as the envelope.
	WorkflowEvidence = "EvidenceGet"
	// UpdateTool serves one tool call: input ToolCall, result json.RawMessage.
	UpdateTool = "tool"
	// QueryState returns SessionState.
	QueryState = "state"
	// QueryHold takes a hold id and returns HoldDecision; browser.run polls it.
	QueryHold = "hold"
	// QueryBrowserState returns the SessionState of a browser a workflow
	// opened inline (workflows.Open), as much of it as people deciding
	// need: its tag, page, state, pending handoff, holds, approvers and
	// rejected decisions. A BrowserSession answers it too. It has its own
	// name so it does not take the place of an orchestrator's own "state"
	// query.
	QueryBrowserState = "browser_state"
	// SignalClose asks the session to release its browser and end.
	SignalClose = "close"
	// SignalHandoff answers a handoff: HandoffSignal.
	SignalHandoff = "handoff"
	// SignalHold tells the workflow a run is holding a request: HoldSignal.
	SignalHold = "hold"
	// SignalApproval decides a hold: ApprovalSignal.
	SignalApproval = "approval"
)

// Search attribute names a BrowserSession upserts when SessionConfig.SearchAttributes is set.
const (
	SearchAttrTag      = "BrowserSessionTag"
	SearchAttrProvider = "BrowserProvider"
	SearchAttrState    = "BrowserState"
)

// Session states, as the state query and the BrowserState search attribute show them.
const (
	StateNew             = "new"
	StateLive            = "live"
	StateWaitingForHuman = "waiting_for_human"
	StateHeld            = "held"
	StateReleased        = "released"
)

// Handoff outcomes.
const (
	OutcomeDone      = "done"
	OutcomeCancelled = "cancelled"
	OutcomeExpired   = "expired"
)

// Approval decisions.
const (
	DecisionApprove = "approve"
	DecisionDeny    = "deny"
	// DecisionExpired marks a hold whose run ended undecided (it was refused);
	// it is set by the workflow, never accepted from a signal.
	DecisionExpired = "expired"
	// DecisionCancelled marks a hold whose session was released or ended
	// while it waited: the worker refuses the request at once. Set by the
	// workflow, never accepted from a signal.
	DecisionCancelled = "cancelled"
)

// ToolCall is the UpdateTool input: a tool name and its raw JSON arguments.
type ToolCall struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
	// Expect, when set, names session options the caller asked for: a
	// running session made otherwise refuses the call instead of ignoring
	// them (they only apply when a session starts).
	Expect *Expected `json:"expect,omitempty"`
	// Join, when set, is who the caller would start the session with: a
	// running session started with other approvers or granted sites
	// refuses the call, so whoever starts a session id first cannot choose
	// them for everyone who joins it.
	Join *Joined `json:"join,omitempty"`
}

// Joined is what a caller joining a session requires of it.
type Joined struct {
	Approvers Approvers   `json:"approvers,omitempty"`
	Sites     []SiteGrant `json:"sites,omitempty"`
}

// updateIDMark joins a caller's update id and the call's hash in the id
// Temporal sees (UpdateIDFor).
const updateIDMark = "~call-"

// UpdateIDFor is the Temporal update id of a call the caller named id: the
// id and the first 16 hex digits of the call's hash. Temporal answers a
// repeated update id from its record without running anything, so the same
// id with other arguments must reach the session as another update for the
// session to refuse it as a conflict. Empty id: empty (Temporal picks one).
func UpdateIDFor(id string, call ToolCall) string {
	if id == "" {
		return ""
	}
	return id + updateIDMark + CallHash(call.Name, call.Args)[:16]
}

// CallerUpdateID is the caller's id inside a Temporal update id made by
// UpdateIDFor, or the id itself when it was not made that way (a caller
// sending its Update directly).
func CallerUpdateID(updateID string) string {
	i := strings.LastIndex(updateID, updateIDMark)
	if i < 0 || len(updateID)-i-len(updateIDMark) != 16 {
		return updateID
	}
	return updateID[:i]
}

// HandoffSignal answers a pending handoff.
type HandoffSignal struct {
	RequestID string `json:"request_id"`
	// Outcome is "done" or "cancelled".
	Outcome string `json:"outcome"`
	Note    string `json:"note,omitempty"`
	By      string `json:"by,omitempty"`
	// ExpiresAt and Signature make a signed answer (see HandoffMessage):
	// a session with approvers acts only on one signed by the approver By
	// names, before ExpiresAt.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	Signature string    `json:"signature,omitempty"`
}

// HoldSignal is sent by browser.run when it holds a side-effecting request
// under the "ask" policy. Its HoldID is a random nonce the worker keeps to
// itself until it sends this signal, so nobody can announce a hold under
// that id first; and the worker releases the request only when the decision
// it reads back names the same method, URL and digest (HoldDecision).
type HoldSignal struct {
	HoldSubject
	// ExpiresAt is when the worker stops waiting and refuses the request;
	// the session names the wait with it in the UI's timeline.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
}

// HoldSubject is what a hold is about: its id, the request held and the
// activity holding it. The hold signal and the session's record of the
// hold (Hold) both begin with it.
type HoldSubject struct {
	HoldID string `json:"hold_id"`
	Method string `json:"method"`
	Origin string `json:"origin"`
	Path   string `json:"path"`
	RequestFacts
	ActivityID string `json:"activity_id,omitempty"`
}

// RequestFacts say which request a hold is, for the approver to read and
// sign (ApprovalMessage) and for the worker to compare before it releases
// the request.
type RequestFacts struct {
	// URL is the full request URL, scrubbed: query values, userinfo and the
	// fragment removed, registered secrets redacted.
	URL string `json:"url,omitempty"`
	// Digest is the worker's keyed digest (HMAC-SHA256, hex) of the exact
	// request: method, raw URL and body. It binds a signature to that one
	// request; being keyed by a secret of the worker process, it tells
	// nobody anything about a secret in the body or the query.
	Digest string `json:"digest,omitempty"`
	// BodySize is the body's length in bytes.
	BodySize int `json:"body_size,omitempty"`
	// Body is the body as sent, when it is small (MaxShownBody), text, and
	// holds no registered secret or credential shape; else empty.
	Body string `json:"body,omitempty"`
}

// MaxShownBody bounds the body a hold shows its approver.
const MaxShownBody = 512

// Same says whether r and o name the same request (method aside).
func (r RequestFacts) Same(o RequestFacts) bool {
	return r.URL == o.URL && r.Digest == o.Digest && r.BodySize == o.BodySize && r.Body == o.Body
}

// ApprovalSignal is a person's decision on a hold.
type ApprovalSignal struct {
	HoldID string `json:"hold_id"`
	// Decision is "approve" or "deny".
	Decision string `json:"decision"`
	By       string `json:"by,omitempty"`
	Note     string `json:"note,omitempty"`
	// ExpiresAt and Signature make a signed decision (see ApprovalMessage):
	// a session with approvers acts only on one signed by the approver By
	// names, before ExpiresAt.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	Signature string    `json:"signature,omitempty"`
}

// Bounds, in characters, of what a person's decision (ApprovalSignal,
// HandoffSignal) carries besides its verdict: By, who decided, and Note,
// theirs. The CLI refuses a longer one, an empty By, and either holding a
// control or bidi/format character; a session keeps at most this much of a
// decision sent any other way (a raw Temporal signal), with such characters
// replaced, and repeats only that in its state and answers.
const (
	MaxDecisionBy   = 100
	MaxDecisionNote = 500
)

// HoldDecision is the QueryHold answer. An empty Decision means not yet decided
// (or an unknown hold id).
type HoldDecision struct {
	Decision string `json:"decision"`
	By       string `json:"by,omitempty"`
	// Method and RequestFacts are the request the session recorded for the
	// hold id (and the approver signed): the worker releases its request
	// only when they are its own.
	Method string `json:"method,omitempty"`
	RequestFacts
}

// Hold is a request a run is holding for a person.
type Hold struct {
	HoldSubject
	HeldAt time.Time `json:"held_at"`
	// ExpiresAt is when the worker refuses the request unless someone
	// decided (zero from workers that did not say).
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	Decision  string    `json:"decision,omitempty"`
	By        string    `json:"by,omitempty"`
	Note      string    `json:"note,omitempty"`
}

// PendingHandoff is a handoff waiting for a person.
type PendingHandoff struct {
	RequestID   string    `json:"request_id"`
	Instruction string    `json:"instruction"`
	Condition   Condition `json:"condition"`
	RequestedAt time.Time `json:"requested_at"`
	ExpiresAt   time.Time `json:"expires_at"`
	// Answer is set once a person has signalled.
	Answer *HandoffSignal `json:"answer,omitempty"`
}

// HandoffResult is browser_request_handoff's result.
type HandoffResult struct {
	OK        bool   `json:"ok"`
	RequestID string `json:"request_id"`
	// Outcome is "done", "cancelled" or "expired".
	Outcome string `json:"outcome"`
	// ConditionMet says whether the completion condition holds on the page now.
	ConditionMet bool    `json:"condition_met"`
	WaitedS      float64 `json:"waited_s"`
	By           string  `json:"by,omitempty"`
	Note         string  `json:"note,omitempty"`
	// Snapshot is the page after the handoff; SnapshotFailure says why there is none.
	Snapshot        *SnapshotResult `json:"snapshot,omitempty"`
	SnapshotFailure *Failure        `json:"snapshot_failure,omitempty"`
}

// RelaunchResult is browser_relaunch's result: the new session, open at about:blank.
type RelaunchResult struct {
	OK       bool       `json:"ok"`
	Session  SessionRef `json:"session"`
	Previous string     `json:"previous_tag"`
	URL      string     `json:"url,omitempty"`
	Title    string     `json:"title,omitempty"`
}

// SessionState is the QueryState answer.
type SessionState struct {
	WorkflowID   string     `json:"workflow_id"`
	Tag          string     `json:"tag,omitempty"`
	Provider     string     `json:"provider,omitempty"`
	HostQueue    string     `json:"host_queue,omitempty"`
	URL          string     `json:"url,omitempty"`
	Title        string     `json:"title,omitempty"`
	State        string     `json:"state"`
	IdleDeadline *time.Time `json:"idle_deadline,omitempty"`
	StartedAt    time.Time  `json:"started_at"`
	Calls        int        `json:"calls"`
	// LastCall summarises the last call served (Summary, then its failure
	// code if it failed), and LastActive is when the session last finished one.
	LastCall       string          `json:"last_call,omitempty"`
	LastActive     time.Time       `json:"last_active,omitzero"`
	PendingHandoff *PendingHandoff `json:"pending_handoff,omitempty"`
	Holds          []Hold          `json:"holds,omitempty"`
	// Approvers names the people whose signed decisions the session
	// accepts; empty means it accepts unsigned ones (unsigned mode).
	Approvers []string `json:"approvers,omitempty"`
	// Rejected lists the latest decisions the session refused to act on.
	Rejected []RejectedDecision `json:"rejected,omitempty"`
	// Usage sums the size of every answer the session gave, per tool
	// (failures included), and Total over all tools: what the model has
	// read, so an orchestrator can hold a budget.
	Usage map[string]ToolUsage `json:"usage,omitempty"`
	Total ToolUsage            `json:"total"`
}

// SessionResult is how a BrowserSession ended.
type SessionResult struct {
	Tag string `json:"tag,omitempty"`
	// Seq is the session's number in its workflow id (the tag's -<n>), so a
	// new session started under the id after this one takes the next.
	Seq    int    `json:"seq,omitempty"`
	Reason string `json:"reason"`
	Calls  int    `json:"calls"`
	// Answered keeps the session's last effect calls by update id, so a
	// caller who lost an answer and resends after the session ended gets it
	// from here instead of running the call again.
	Answered []Answered `json:"answered,omitempty"`
}

// Answered is one effect call a session answered, by its update id.
// Temporal deduplicates an update id only within one run; a session keeps
// this ledger across continue-as-new and in its result, so a resent id is
// answered from the record, never run twice.
type Answered struct {
	UpdateID string `json:"update_id"`
	Tool     string `json:"tool"`
	// Hash is CallHash(Tool, args): a resend with other arguments is a conflict.
	Hash   string          `json:"hash"`
	Answer json.RawMessage `json:"answer"`
}

// Ledger bounds: the last MaxAnswered effect calls, each answer kept up to
// MaxAnsweredBytes (a longer one is kept as a refusal saying the call ran).
const (
	MaxAnswered      = 64
	MaxAnsweredBytes = 16 << 10
)

// Action policies for side-effecting requests.
const (
	PolicyAllow = "allow"
	PolicyAsk   = "ask"
	PolicyDeny  = "deny"
)

// MaxEvidenceResult keeps get results well under Temporal's payload limits.
const MaxEvidenceResult = 384 << 10

// GetEvidenceRequest is get's input.
type GetEvidenceRequest struct {
	Key string `json:"key"`
}

// GetEvidenceResult carries a verified body and its receipt.
type GetEvidenceResult struct {
	OK      bool     `json:"ok"`
	Body    []byte   `json:"body"`
	Receipt *Receipt `json:"receipt,omitempty"`
}
