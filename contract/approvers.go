package contract

import (
	"bufio"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Signed decisions. A person's answer to a hold (ApprovalSignal) or a
// handoff (HandoffSignal) is signed with their ed25519 private key over a
// canonical byte string (ApprovalMessage, HandoffMessage). A session that
// knows approvers (a worker configured with --approver-keys, or
// SessionConfig/Config.Approvers) acts only on decisions signed by one of
// them, for the pending hold or request, before their expiry; anything else
// is recorded as rejected and changes nothing. A session without approvers
// accepts unsigned decisions (unsigned mode).

// SignatureDomain starts every signed message, so a signature made for a
// decision can never be taken for one made for anything else, and a future
// format cannot be confused with this one.
const SignatureDomain = "durable-browser decision v1"

// MaxDecisionValidity caps how far past the moment a session reads a signed
// decision its expiry may lie. A decision valid for longer is rejected: a
// signature leaked from history must go stale soon.
const MaxDecisionValidity = time.Hour

// DecisionClockSkew is the allowance on MaxDecisionValidity for a signer's
// clock running ahead of the workflow's.
const DecisionClockSkew = time.Minute

// DefaultDecisionValidity is how long the CLI makes a signed decision valid.
const DefaultDecisionValidity = 5 * time.Minute

// Kinds of decision, as RejectedDecision.Kind and inside signed messages.
const (
	KindApproval = "approval"
	KindHandoff  = "handoff"
)

// Reasons a decision is rejected, as RejectedDecision.Reason.
const (
	RejectUnsigned      = "unsigned"        // no signature, while the session needs one
	RejectUnknownSigner = "unknown_signer"  // `by` names no configured approver
	RejectBadSignature  = "bad_signature"   // the signature does not verify for `by`
	RejectNoExpiry      = "no_expiry"       // expires_at missing
	RejectExpired       = "expired"         // expires_at has passed
	RejectExpiryTooFar  = "expiry_too_far"  // expires_at beyond MaxDecisionValidity
	RejectNotPending    = "not_pending"     // no pending hold or request with that id
	RejectAlreadyDone   = "already_decided" // the hold or request was already answered
	RejectBadVerdict    = "bad_decision"    // decision or outcome not one of the allowed words
)

// RejectedDecision is a decision a session refused to act on. It is kept
// (bounded) in the session state so an operator sees refused attempts.
type RejectedDecision struct {
	// Kind is "approval" or "handoff".
	Kind string `json:"kind"`
	// ID is the hold id or handoff request id the decision named.
	ID string `json:"id"`
	// Decision is the decision or outcome it asked for.
	Decision string    `json:"decision,omitempty"`
	By       string    `json:"by,omitempty"`
	Reason   string    `json:"reason"`
	At       time.Time `json:"at"`
}

// Approver is a person allowed to decide: a name (what `by` says) and an
// ed25519 public key.
type Approver struct {
	Name      string `json:"name"`
	PublicKey []byte `json:"public_key"`
}

// Approvers is the list of people whose signed decisions a session accepts.
// A slice, not a map, so it serialises and replays the same. Empty means
// unsigned mode.
type Approvers []Approver

// Names lists the approvers' names.
func (a Approvers) Names() []string {
	out := make([]string, 0, len(a))
	for _, x := range a {
		out = append(out, x.Name)
	}
	return out
}

// Key returns the public key of the approver named name.
func (a Approvers) Key(name string) (ed25519.PublicKey, bool) {
	for _, x := range a {
		if x.Name == name && len(x.PublicKey) == ed25519.PublicKeySize {
			return ed25519.PublicKey(x.PublicKey), true
		}
	}
	return nil, false
}

// Verify checks that signature (standard base64) is by's signature of msg.
// It answers "" when it is, else the rejection reason.
func (a Approvers) Verify(by string, msg []byte, signature string) string {
	if signature == "" {
		return RejectUnsigned
	}
	key, ok := a.Key(by)
	if !ok {
		return RejectUnknownSigner
	}
	sig, err := base64.StdEncoding.DecodeString(signature)
	if err != nil || len(sig) != ed25519.SignatureSize || !ed25519.Verify(key, msg, sig) {
		return RejectBadSignature
	}
	return ""
}

// CheckExpiry answers "" when a decision expiring at expires may be acted on
// at now, else the rejection reason.
func CheckExpiry(expires, now time.Time) string {
	switch {
	case expires.IsZero():
		return RejectNoExpiry
	case !now.Before(expires):
		return RejectExpired
	case expires.Sub(now) > MaxDecisionValidity+DecisionClockSkew:
		return RejectExpiryTooFar
	}
	return ""
}

// ValidApproverName says whether name can name an approver: 1 to 64
// letters, digits and . _ @ -.
func ValidApproverName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._@-", r)
		if !ok {
			return false
		}
	}
	return true
}

// Line is the approver as a line of an approver keys file: "name base64-key".
func (a Approver) Line() string {
	return a.Name + " " + base64.StdEncoding.EncodeToString(a.PublicKey)
}

// ParseApprovers reads an approver keys file: one "name base64-public-key"
// line per approver; blank lines and lines starting with # are skipped. A
// name given twice, a bad name or a key that is not a 32-byte ed25519
// public key is an error naming the line.
func ParseApprovers(r io.Reader) (Approvers, error) {
	var out Approvers
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("line %d: want \"name base64-public-key\"", n)
		}
		if !ValidApproverName(f[0]) {
			return nil, fmt.Errorf("line %d: %q is not an approver name (1-64 letters, digits, . _ @ -)", n, f[0])
		}
		key, err := base64.StdEncoding.DecodeString(f[1])
		if err != nil || len(key) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("line %d: the key of %s is not a base64 ed25519 public key (32 bytes)", n, f[0])
		}
		if _, dup := out.Key(f[0]); dup {
			return nil, fmt.Errorf("line %d: %s is listed twice", n, f[0])
		}
		out = append(out, Approver{Name: f[0], PublicKey: key})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// ApprovalMessage is the byte string an approver signs to decide hold h:
// the session's workflow id, the hold id and when it was held (hold ids can
// repeat across continue-as-new; the time tells two holds apart), the
// request held (method, scrubbed URL, the worker's digest of the exact
// request, body size and shown body), the decision, who decides, their note
// and the expiry (unix seconds). A signature over one request never decides
// another. A hold recorded before holds named their request (no digest) is
// signed as it was then, without the request.
func ApprovalMessage(workflowID string, h Hold, decision, by, note string, expiresAt time.Time) []byte {
	held := strconv.FormatInt(h.HeldAt.UnixMilli(), 10)
	expires := strconv.FormatInt(expiresAt.Unix(), 10)
	if h.Digest == "" {
		return message(KindApproval, workflowID, h.HoldID, held, decision, by, note, expires)
	}
	return message(kindApprovalOfRequest, workflowID, h.HoldID, held, h.Method, h.URL, h.Digest,
		strconv.Itoa(h.BodySize), h.Body, decision, by, note, expires)
}

// kindApprovalOfRequest starts a signed approval that covers the request.
const kindApprovalOfRequest = "approval of request"

// HandoffMessage is the byte string an approver signs to answer a handoff:
// the session's workflow id, the request id (unique per session), the
// outcome, who answers, their note and the expiry (unix seconds).
func HandoffMessage(workflowID, requestID, outcome, by, note string, expiresAt time.Time) []byte {
	return message(KindHandoff, workflowID, requestID, "", outcome, by, note, strconv.FormatInt(expiresAt.Unix(), 10))
}

// message is the canonical encoding: the domain line, then every field as
// "<byte length>:<bytes>\n", in a fixed order, so no two field lists
// encode alike.
func message(fields ...string) []byte {
	var b strings.Builder
	b.WriteString(SignatureDomain)
	b.WriteByte('\n')
	for _, f := range fields {
		b.WriteString(strconv.Itoa(len(f)))
		b.WriteByte(':')
		b.WriteString(f)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// Sign signs the decision on hold h (as the session's state shows it) in
// session workflowID, setting HoldID, ExpiresAt and Signature. By must name
// the key's approver.
func (s *ApprovalSignal) Sign(key ed25519.PrivateKey, workflowID string, h Hold, expiresAt time.Time) error {
	if len(key) != ed25519.PrivateKeySize {
		return errors.New("not an ed25519 private key")
	}
	s.HoldID = h.HoldID
	s.ExpiresAt = expiresAt.Truncate(time.Second)
	msg := ApprovalMessage(workflowID, h, s.Decision, s.By, s.Note, s.ExpiresAt)
	s.Signature = base64.StdEncoding.EncodeToString(ed25519.Sign(key, msg))
	return nil
}

// Sign signs the answer to the handoff of session workflowID, setting
// ExpiresAt and Signature. By must name the key's approver.
func (s *HandoffSignal) Sign(key ed25519.PrivateKey, workflowID string, expiresAt time.Time) error {
	if len(key) != ed25519.PrivateKeySize {
		return errors.New("not an ed25519 private key")
	}
	s.ExpiresAt = expiresAt.Truncate(time.Second)
	msg := HandoffMessage(workflowID, s.RequestID, s.Outcome, s.By, s.Note, s.ExpiresAt)
	s.Signature = base64.StdEncoding.EncodeToString(ed25519.Sign(key, msg))
	return nil
}
