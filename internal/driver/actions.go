package driver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/durable-browser/durable-browser/internal/redact"

	"github.com/durable-browser/durable-browser/contract"
)

// Action is one step of a batch, decoded from a JSON object with "op". Which
// ops exist and which fields each takes is said once, by the run tool's
// schema in package contract; do dispatches each of those ops.
type Action struct {
	Op      string   `json:"op"`
	ID      string   `json:"id,omitempty"`
	Button  string   `json:"button,omitempty"`
	Count   int      `json:"count,omitempty"`
	Value   string   `json:"value,omitempty"`
	Text    string   `json:"text,omitempty"`
	DelayMS int      `json:"delay_ms,omitempty"`
	Key     string   `json:"key,omitempty"`
	Values  []string `json:"values,omitempty"`
	DX      int      `json:"dx,omitempty"`
	DY      int      `json:"dy,omitempty"`
	URL     string   `json:"url,omitempty"`
	Load    bool     `json:"load,omitempty"`
	MS      int      `json:"ms,omitempty"`
	// Tab is a tab id from a result's tabs_opened, for switch_tab and close_tab.
	Tab string `json:"tab,omitempty"`
	// Locator, instead of ID, finds the element when the action runs.
	Locator *contract.Locator `json:"locator,omitempty"`
	// Secrets are the {{secret:NAME}} values the worker put into Value or
	// Text, with their origins: fill and type refuse an element whose
	// frame's origin is not bound to each, and, once typed, the session
	// keeps them from leaving toward other origins. Never from JSON.
	Secrets []redact.Secret `json:"-"`
}

// ParseActions decodes a batch that validate.Call has accepted: the run
// tool's schema (contract.Definitions) is the one definition of the ops, their
// fields, required fields, enums and ranges, and the driver does not check
// those again (TestSchemaOpsMatchDispatch keeps the schema and do in step).
// What it checks is what a schema cannot say: an id is one a snapshot
// prints, a key combination names real keys, a URL parses with a host,
// scroll takes an id or a distance, and a tab op ends the batch. Failures
// are *ParseError. Ids are normalised ("[5]" becomes "5").
func ParseActions(raw json.RawMessage) ([]Action, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, &ParseError{Index: -1, Reason: "expected a JSON array of action objects like [{\"op\":\"click\",\"id\":\"5\"}]"}
	}
	out := make([]Action, 0, len(items))
	for i, item := range items {
		a, err := parseAction(item)
		if err != nil {
			return nil, &ParseError{Index: i, Reason: err.Error()}
		}
		if (a.Op == "switch_tab" || a.Op == "close_tab") && i != len(items)-1 {
			return nil, &ParseError{Index: i, Reason: a.Op + " must be the last action of a batch; take a snapshot of the tab before acting on it"}
		}
		out = append(out, a)
	}
	return out, nil
}

func parseAction(item json.RawMessage) (Action, error) {
	var a Action
	dec := json.NewDecoder(bytes.NewReader(item))
	// Action has a field for every field the schema offers; an unknown one
	// here means the batch skipped validate.Call.
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return Action{}, fmt.Errorf("%s (check field names and types)", cleanJSONErr(err))
	}
	if a.ID != "" {
		id, err := NormalizeID(a.ID)
		if err != nil {
			return Action{}, err
		}
		a.ID = id
	}
	switch a.Op {
	case "press":
		if _, err := parseCombo(a.Key); err != nil {
			return Action{}, err
		}
	case "scroll":
		el := a.ID != "" || a.Locator != nil
		if !el && a.DX == 0 && a.DY == 0 {
			return Action{}, fmt.Errorf("scroll needs \"id\" or \"locator\" to scroll into view, or a non-zero \"dy\" (and \"dx\") in pixels")
		}
		if el && (a.DX != 0 || a.DY != 0) {
			return Action{}, fmt.Errorf("scroll takes either \"id\" (or \"locator\") or \"dy\"/\"dx\", not both")
		}
	case "goto":
		u, err := url.Parse(a.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return Action{}, fmt.Errorf("goto needs an absolute http(s) \"url\" with a host")
		}
	}
	return a, nil
}

// NormalizeID accepts "5" or "[5]" and returns "5".
func NormalizeID(s string) (string, error) {
	t := strings.TrimSpace(s)
	t = strings.TrimPrefix(t, "[")
	t = strings.TrimSuffix(t, "]")
	n, err := strconv.Atoi(t)
	if err != nil || n < 1 || n > 10_000_000 {
		return "", fmt.Errorf("id %q is not a snapshot id; use a number from the snapshot like \"5\" or \"[5]\"", truncate(s, 20))
	}
	return strconv.Itoa(n), nil
}

func cleanJSONErr(err error) string {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "json: ")
	return truncate(msg, 120)
}

// clip redacts s, then cuts it to n runes: redaction first, so a secret
// straddling the cut is hidden whole instead of leaving its prefix.
func (b *Browser) clip(s string, n int) string {
	if b != nil && b.o.Redact != nil {
		s = b.o.Redact(s)
	}
	return truncate(s, n)
}

// truncate cuts s to n runes. Only for text that holds no secret (the
// model's own arguments, fixed messages); page text goes through clip.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
