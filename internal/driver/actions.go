package driver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// Action is one step of a batch, decoded from a JSON object with "op".
//
// Ops and their fields:
//
//	click   id, button ("left"|"right"|"middle"), count (1-3)
//	hover   id
//	fill    id, value
//	type    id, text, delay_ms (0-1000)
//	press   key ("Enter", "Control+A", ...), optional id to focus first
//	select  id, values
//	check   id      uncheck id
//	scroll  id, or dy (and dx) in CSS pixels
//	goto    url (http or https)
//	back, forward, reload
//	wait    exactly one of text, id, url (substring, or glob with *), load (true), ms (1-10000)
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
}

// MaxActions bounds a batch.
const MaxActions = 50

// fields each op accepts besides "op"; required ones are checked in validate.
var opFields = map[string][]string{
	"click":   {"id", "button", "count"},
	"hover":   {"id"},
	"fill":    {"id", "value"},
	"type":    {"id", "text", "delay_ms"},
	"press":   {"key", "id"},
	"select":  {"id", "values"},
	"check":   {"id"},
	"uncheck": {"id"},
	"scroll":  {"id", "dx", "dy"},
	"goto":    {"url"},
	"back":    {},
	"forward": {},
	"reload":  {},
	"wait":    {"text", "id", "url", "load", "ms"},
	// Tab ops end a batch: the ids of another tab come from its own snapshot.
	"switch_tab": {"tab"},
	"close_tab":  {"tab"},
}

func opNames() string {
	names := make([]string, 0, len(opFields))
	for k := range opFields {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// ParseActions decodes and validates a JSON array of actions. Unknown ops and
// fields, missing or malformed values are refused with a *ParseError naming
// the fix. Ids are normalised ("[5]" becomes "5").
func ParseActions(raw json.RawMessage) ([]Action, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, &ParseError{Index: -1, Reason: "expected a JSON array of action objects like [{\"op\":\"click\",\"id\":\"5\"}]"}
	}
	if len(items) == 0 {
		return nil, &ParseError{Index: -1, Reason: "empty batch: give at least one action"}
	}
	if len(items) > MaxActions {
		return nil, &ParseError{Index: -1, Reason: fmt.Sprintf("%d actions; split the batch into runs of at most %d", len(items), MaxActions)}
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
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(item, &keys); err != nil || keys == nil {
		return Action{}, fmt.Errorf("expected an object with \"op\"")
	}
	var a Action
	dec := json.NewDecoder(bytes.NewReader(item))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return Action{}, fmt.Errorf("%s (check field names and types)", cleanJSONErr(err))
	}
	if _, ok := keys["op"]; !ok || a.Op == "" {
		return Action{}, fmt.Errorf("missing \"op\"; one of %s", opNames())
	}
	allowed, ok := opFields[a.Op]
	if !ok {
		return Action{}, fmt.Errorf("unknown op %q; use one of %s", truncate(a.Op, 40), opNames())
	}
	for k := range keys {
		if k == "op" {
			continue
		}
		if !contains(allowed, k) {
			if len(allowed) == 0 {
				return Action{}, fmt.Errorf("op %q takes no fields; remove %q", a.Op, k)
			}
			return Action{}, fmt.Errorf("op %q does not take %q; it takes %s", a.Op, k, strings.Join(allowed, ", "))
		}
	}
	if _, has := keys["id"]; has {
		id, err := NormalizeID(a.ID)
		if err != nil {
			return Action{}, err
		}
		a.ID = id
	}
	return a, validate(&a, keys)
}

func validate(a *Action, keys map[string]json.RawMessage) error {
	needID := func() error {
		if a.ID == "" {
			return fmt.Errorf("op %q needs \"id\" from the latest snapshot, like \"5\" or \"[5]\"", a.Op)
		}
		return nil
	}
	switch a.Op {
	case "click":
		if err := needID(); err != nil {
			return err
		}
		switch a.Button {
		case "", "left", "right", "middle":
		default:
			return fmt.Errorf("button %q: use left, right or middle", truncate(a.Button, 20))
		}
		if _, has := keys["count"]; has && (a.Count < 1 || a.Count > 3) {
			return fmt.Errorf("count %d: use 1, 2 or 3", a.Count)
		}
	case "hover", "check", "uncheck":
		return needID()
	case "fill":
		if err := needID(); err != nil {
			return err
		}
		if _, has := keys["value"]; !has {
			return fmt.Errorf("fill needs \"value\" (use \"\" to clear)")
		}
	case "type":
		if err := needID(); err != nil {
			return err
		}
		if a.Text == "" {
			return fmt.Errorf("type needs a non-empty \"text\"")
		}
		if a.DelayMS < 0 || a.DelayMS > 1000 {
			return fmt.Errorf("delay_ms %d: use 0 to 1000", a.DelayMS)
		}
	case "press":
		if _, err := parseCombo(a.Key); err != nil {
			return err
		}
	case "select":
		if err := needID(); err != nil {
			return err
		}
		if len(a.Values) == 0 {
			return fmt.Errorf("select needs \"values\": a list of option values or labels")
		}
	case "scroll":
		if a.ID == "" && a.DX == 0 && a.DY == 0 {
			return fmt.Errorf("scroll needs \"id\" to scroll into view, or \"dy\" (and \"dx\") in pixels")
		}
		if a.ID != "" && (a.DX != 0 || a.DY != 0) {
			return fmt.Errorf("scroll takes either \"id\" or \"dy\"/\"dx\", not both")
		}
		if abs(a.DX) > 100000 || abs(a.DY) > 100000 {
			return fmt.Errorf("scroll distance too large: keep dx and dy within 100000")
		}
	case "goto":
		u, err := url.Parse(a.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("goto needs an absolute http(s) \"url\"")
		}
	case "switch_tab", "close_tab":
		if a.Op == "switch_tab" && a.Tab == "" {
			return fmt.Errorf("switch_tab needs \"tab\": a tab id such as \"t2\" from tabs_opened")
		}
		if len(a.Tab) > 32 {
			return fmt.Errorf("tab id too long: use an id such as \"t2\"")
		}
	case "wait":
		n := 0
		for _, k := range []string{"text", "id", "url", "load", "ms"} {
			if _, has := keys[k]; has {
				n++
			}
		}
		if n != 1 {
			return fmt.Errorf("wait takes exactly one of text, id, url, load, ms")
		}
		switch {
		case keys["text"] != nil && a.Text == "":
			return fmt.Errorf("wait text must not be empty")
		case keys["url"] != nil && a.URL == "":
			return fmt.Errorf("wait url must not be empty")
		case keys["load"] != nil && !a.Load:
			return fmt.Errorf("wait load must be true")
		case keys["ms"] != nil && (a.MS < 1 || a.MS > 10000):
			return fmt.Errorf("wait ms %d: use 1 to 10000", a.MS)
		case keys["id"] != nil && a.ID == "":
			return needID()
		}
	}
	return nil
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

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
