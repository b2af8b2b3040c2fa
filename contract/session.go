package contract

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// What a caller starts a BrowserSession with lives here, beside its result
// (SessionResult), so a client that only starts and calls sessions (the
// durable-browser CLI, package client) links neither the workflow code nor
// what it needs: the schema validator, the fence words. Package workflows
// names these types too (workflows.SessionConfig is this SessionConfig).

// SessionConfig is BrowserSession's input.
type SessionConfig struct {
	Session SessionOptions `json:"session"`
	// IdleTimeout releases the browser after this long with no call in
	// flight (default 3 minutes). It never fires mid-call.
	IdleTimeout time.Duration `json:"idle_timeout,omitempty"`
	// MaxLifetime releases the browser this long after the session started
	// (default 30 minutes), once the call in flight has finished.
	MaxLifetime time.Duration `json:"max_lifetime,omitempty"`
	// SearchAttributes upserts BrowserSessionTag, BrowserProvider and
	// BrowserState; they must be registered on the namespace.
	SearchAttributes bool     `json:"search_attributes,omitempty"`
	Timeouts         Timeouts `json:"timeouts,omitempty"`
	// ContinueAsNewAfter continues the session as new after this many calls
	// in one run, besides when Temporal suggests it (0: only then). It bounds
	// history; tests use it to cross a continue-as-new on purpose.
	ContinueAsNewAfter int `json:"continue_as_new_after,omitempty"`
	// Carry is set by the workflow itself when it continues as new: the
	// state it hands to its next run (workflows.Carried, as JSON; its shape
	// is the workflow's own business).
	Carry json.RawMessage `json:"carry,omitempty"`
	// Previous is the session that last ran under this workflow id and has
	// ended, when this one was started after it on purpose (client.CallOptions.New):
	// this session's tag takes the next number.
	Previous *Previous `json:"previous,omitempty"`
	// Approvers, when set, narrow the worker's approvers (--approver-keys)
	// for this session: only those listed with the same name and key stay.
	// They never replace or extend the worker's list; one naming none of
	// them leaves nobody who may decide (every hold is refused). On a worker
	// without approvers they are the session's list.
	Approvers Approvers `json:"approvers,omitempty"`
	// Sites are the sites the host grants use_website on; see workflows.Config.Sites.
	Sites []SiteGrant `json:"sites,omitempty"`
}

// Previous names the session a new one follows under the same workflow id.
type Previous struct {
	Tag    string `json:"tag"`
	Seq    int    `json:"seq"`
	Reason string `json:"reason,omitempty"`
}

// Timeouts bound the activities a session schedules. Zero fields take the
// defaults (workflows.Default*).
type Timeouts struct {
	// ScheduleToStart bounds how long a call on a session's host queue may wait
	// for its worker. Past it the worker is taken to be gone (default 10s).
	ScheduleToStart time.Duration `json:"schedule_to_start,omitempty"`
	// SharedScheduleToStart bounds how long a call on the shared queue
	// (browser.create, web.fetch, web.search, evidence.get, release by tag)
	// may wait for any worker. Past it no worker is taken to be running, and
	// the call answers browser_unavailable instead of waiting forever (default 30s).
	SharedScheduleToStart time.Duration `json:"shared_schedule_to_start,omitempty"`
	// Read bounds one attempt of a read call (default 60s).
	Read time.Duration `json:"read,omitempty"`
	// Run bounds one run or upload (default 5m).
	Run time.Duration `json:"run,omitempty"`
	// Custody bounds one attempt of create, release, reconcile or notify (default 2m).
	Custody time.Duration `json:"custody,omitempty"`
	// Heartbeat is how long a started activity may go silent before its
	// worker is taken to be lost (default 10s).
	Heartbeat time.Duration `json:"heartbeat,omitempty"`
}

// Reasons a session ends, as SessionResult.Reason.
const (
	EndReleased    = "released"
	EndIdle        = "idle"
	EndMaxLifetime = "max_lifetime"
	EndClosed      = "closed"
)

// SessionEnded is the session_ended answer to a call sent to a
// BrowserSession that has ended (or is ending) for reason (End*).
func SessionEnded(tag, reason string) *Failure {
	why := map[string]string{
		EndReleased:    "released by browser_release",
		EndIdle:        "released after its idle window with no calls",
		EndMaxLifetime: "released at its maximum lifetime",
		EndClosed:      "closed: the conversation ended",
	}[reason]
	if why == "" {
		why = reason
	}
	name := "this browser session"
	if tag != "" {
		name = "browser session " + tag
	}
	return Fail(CodeSessionEnded,
		"%s has ended (%s): its pages, sign-ins and snapshot ids are gone. Nothing was run. To go on, start a new session on purpose: `durable-browser call --new` (client.CallOptions{New: true}) opens a new browser under the next tag, at about:blank; or use another session id", name, why)
}

// StartSummary is the static summary and details a BrowserSession is
// started with (the UI shows them above its timeline): who opened it, the
// provider and the options that matter. caller names who opened the
// session (a workflow id, "durable-browser call", the MCP server), when
// known. Nothing here is a credential: profile and state names, allowed
// hosts and the action policy are the host's settings.
func StartSummary(cfg SessionConfig, caller string) (summary, details string) {
	o := cfg.Session
	provider := o.Provider
	if provider == "" {
		provider = "local"
	}
	summary = "browser session (" + provider + ")"
	if caller != "" {
		summary += " opened by " + fieldsCut(caller, 60)
	}
	var d []string
	d = append(d, "**provider** "+provider)
	if o.ActionPolicy != "" {
		d = append(d, "**action policy** "+o.ActionPolicy)
	}
	if o.Profile != nil {
		p := "**profile** " + o.Profile.Name
		if o.Profile.Save {
			p += " (saved)"
		}
		d = append(d, p)
	}
	if o.State != "" {
		d = append(d, "**state** "+o.State)
	}
	if len(o.AllowHosts) > 0 {
		d = append(d, "**allowed hosts** "+fieldsCut(strings.Join(o.AllowHosts, ", "), 200))
	}
	if o.Stealth {
		d = append(d, "stealth")
	}
	if o.Headed {
		d = append(d, "headed")
	}
	if o.Record {
		d = append(d, "recorded")
	}
	if n := len(cfg.Sites); n > 0 {
		d = append(d, "**sites granted** "+strconv.Itoa(n))
	}
	return fieldsCut(summary, MaxSummary), strings.Join(d, " · ")
}

// fieldsCut folds every run of white space to one space and keeps at most
// n runes.
func fieldsCut(s string, n int) string {
	return cutRunes(strings.Join(strings.Fields(s), " "), n)
}

// MaxSessionIDLen is the longest session (workflow) id: Temporal's default
// limit on a workflow id.
const MaxSessionIDLen = 1000

// ErrSessionID is the refusal of a session id Temporal cannot carry or a
// person could not tell apart (CheckSessionID); errors.Is finds it.
var ErrSessionID = errors.New("bad session id")

// CheckSessionID refuses a session (workflow) id before any request: an
// empty one, one with spaces at either end (it would list as blank or be
// mistaken for another), and one with characters outside printable ASCII,
// which the SDK refuses with a message about a gRPC header instead.
func CheckSessionID(id string) error {
	const fix = "use 1-%d printable ASCII characters (letters, digits, - _ . : / and the like), e.g. conv-42"
	switch {
	case id == "":
		return fmt.Errorf("%w: it is empty; "+fix, ErrSessionID, MaxSessionIDLen)
	case len(id) > MaxSessionIDLen:
		return fmt.Errorf("%w: it is %d bytes long; "+fix, ErrSessionID, len(id), MaxSessionIDLen)
	case strings.TrimSpace(id) != id:
		return fmt.Errorf("%w %q: it starts or ends with a space; "+fix, ErrSessionID, id, MaxSessionIDLen)
	}
	for _, r := range id {
		if r < 0x20 || r > 0x7e {
			return fmt.Errorf("%w %q: %q is not printable ASCII; "+fix, ErrSessionID, clipName(id), r, MaxSessionIDLen)
		}
	}
	return nil
}
