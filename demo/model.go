package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/demosite"
)

// Model is the model activity. The scripted stand-in reads the latest
// answer as a model would (what page is this, which control does the task
// need next) and asks for the next tool call, so it runs offline and follows
// the page rather than a fixed list of ids: after a failure it looks again.
func Model(_ context.Context, in ModelInput) (*Turn, error) {
	return scripted(in), nil
}

// The shop task: what to search for and buy.
const (
	searchFor = "lamp"
	buy       = "Desk lamp"
)

func scripted(in ModelInput) *Turn {
	call := func(name string, args any) *Turn {
		b, _ := json.Marshal(args)
		return &Turn{Calls: []Call{{ID: fmt.Sprintf("call-%d", in.Turn+1), Name: name, Args: b}}}
	}
	look := func() *Turn { return call(contract.ToolSnapshot, map[string]any{"mode": "full"}) }
	run := func(actions ...map[string]any) *Turn {
		return call(contract.ToolRun, map[string]any{"actions": actions})
	}

	if in.Kind == KindHandoff {
		return handoffScript(in, call, look, run)
	}
	if len(in.Steps) == 0 {
		return run(map[string]any{"op": "goto", "url": in.Site + "/shop/"})
	}
	failures := 0
	for _, s := range in.Steps {
		if !ok(s.Output) {
			failures++
		}
	}
	if failures > keepSteps/2 {
		return &Turn{Text: "I could not finish: too many calls failed in a row. The last answer was: " + string(in.Steps[len(in.Steps)-1].Output)}
	}
	last := in.Steps[len(in.Steps)-1]
	switch {
	case !ok(last.Output):
		// effect_unknown, stale_snapshot, session_replaced, a refusal: look
		// at the page before doing anything else.
		return look()
	case last.Call.Name == contract.ToolRun:
		return look()
	case last.Call.Name == contract.ToolRead:
		var r contract.ReadResult
		_ = json.Unmarshal(last.Output, &r)
		order := regexp.MustCompile(`Order #\d+ confirmed`).FindString(r.Content)
		return &Turn{Text: fmt.Sprintf("%s: %s. Evidence: %s (sha256 %s).", order, buy, r.Evidence.Key, r.Evidence.SHA256)}
	case last.Call.Name != contract.ToolSnapshot:
		return look()
	}
	var snap contract.SnapshotResult
	_ = json.Unmarshal(last.Output, &snap)
	text := snap.Text
	ref := func(role, name string) string { return refOf(text, role, name) }
	switch {
	case strings.Contains(snap.URL, "/shop/order/") && strings.Contains(text, "confirmed"):
		return call(contract.ToolRead, map[string]any{})
	case !strings.HasPrefix(snap.URL, in.Site+"/shop/"):
		// A new browser (session_replaced) starts at about:blank.
		return run(map[string]any{"op": "goto", "url": in.Site + "/shop/"})
	case effectUnknown(in.Steps) && lastOrderLink(text) != "":
		// A call was cut short after it may have placed the order: the
		// account's orders say whether it did. Buying again would make two.
		return run(map[string]any{"op": "click", "id": lastOrderLink(text)},
			map[string]any{"op": "wait", "text": "confirmed"})
	case ref("button", "Place order") != "":
		return run(map[string]any{"op": "click", "id": ref("button", "Place order")},
			map[string]any{"op": "wait", "text": "confirmed"})
	case ref("button", "Sign in") != "" && ref("textbox", "Email") != "":
		return run(
			map[string]any{"op": "fill", "id": ref("textbox", "Email"), "value": demosite.ShopEmail},
			map[string]any{"op": "fill", "id": ref("textbox", "Password"), "value": demosite.ShopPassword},
			map[string]any{"op": "click", "id": ref("button", "Sign in")},
			map[string]any{"op": "wait", "text": "Signed in as"})
	case !strings.Contains(text, "In your cart: 0") && ref("link", "Check out") != "":
		return run(map[string]any{"op": "click", "id": ref("link", "Check out")},
			map[string]any{"op": "wait", "text": "Place order"})
	case ref("button", "Add "+buy+" to cart") != "":
		return run(map[string]any{"op": "click", "id": ref("button", "Add "+buy+" to cart")},
			map[string]any{"op": "wait", "text": "In your cart: 1"})
	case ref("searchbox", "Search") != "":
		return run(
			map[string]any{"op": "fill", "id": ref("searchbox", "Search"), "value": searchFor},
			map[string]any{"op": "click", "id": ref("button", "Search")},
			map[string]any{"op": "wait", "text": "results for"})
	}
	return &Turn{Text: "I do not know what to do on this page: " + snap.URL}
}

// ok reads an answer's "ok".
func ok(out json.RawMessage) bool {
	var head struct {
		OK bool `json:"ok"`
	}
	return json.Unmarshal(out, &head) == nil && head.OK
}

// effectUnknown says a step answered effect_unknown: its effect may or may
// not have happened.
func effectUnknown(steps []Step) bool {
	for _, s := range steps {
		var head struct {
			Code contract.Code `json:"code"`
		}
		if json.Unmarshal(s.Output, &head) == nil && head.Code == contract.CodeEffectUnknown {
			return true
		}
	}
	return false
}

// lastOrderLink finds the id of the last `[id] link "Order #N"` line: the
// newest order the shop lists for the account.
func lastOrderLink(text string) string {
	ids := contract.LineIDs(text, `link "Order #`)
	if len(ids) == 0 {
		return ""
	}
	return ids[len(ids)-1]
}

// refOf finds the id of the snapshot line `[id] role "name"`.
func refOf(text, role, name string) string {
	if ids := contract.LineIDs(text, role+` "`+name+`"`); len(ids) > 0 {
		return ids[0]
	}
	return ""
}

// The person-only step of the demo site.
const humanDone = "Verified by a person"

// handoffScript: open the person-only page, try it, and when it does not
// pass, ask a person and wait; then say how it went.
func handoffScript(in ModelInput, call func(string, any) *Turn, look func() *Turn, run func(...map[string]any) *Turn) *Turn {
	if len(in.Steps) == 0 {
		return run(map[string]any{"op": "goto", "url": in.Site + "/human.html"})
	}
	last := in.Steps[len(in.Steps)-1]
	switch {
	case last.Call.Name == contract.ToolRequestHandoff:
		var h contract.HandoffResult
		if err := json.Unmarshal(last.Output, &h); err != nil || !h.OK {
			return &Turn{Text: "The handoff did not happen: " + string(last.Output)}
		}
		note := ""
		if h.Note != "" {
			note = fmt.Sprintf(" (note: %q)", h.Note)
		}
		return &Turn{Text: fmt.Sprintf("The person answered %s after %.0fs%s; the check is passed: %v.", h.Outcome, h.WaitedS, note, h.ConditionMet)}
	case !ok(last.Output) || last.Call.Name == contract.ToolRun:
		return look()
	}
	var snap contract.SnapshotResult
	_ = json.Unmarshal(last.Output, &snap)
	if strings.Contains(snap.Text, humanDone) {
		return &Turn{Text: "The check is passed."}
	}
	tried := false
	for _, s := range in.Steps {
		tried = tried || s.Call.Name == contract.ToolRun && strings.Contains(string(s.Call.Args), `"click"`)
	}
	if id := refOf(snap.Text, "button", "Press and hold"); id != "" && !tried {
		return run(map[string]any{"op": "click", "id": id})
	}
	return call(contract.ToolRequestHandoff, map[string]any{
		"instruction":          "This page needs a person: press and hold the button until it says verified.",
		"completion_condition": map[string]any{"text": humanDone},
	})
}
