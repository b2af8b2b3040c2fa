package client

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/durable-browser/durable-browser/contract"
)

// Script is a finished session's calls, to run again with no model: ids are
// replaced by locators of the elements they named, found again on the page
// as it is when each step runs.
type Script struct {
	Version int `json:"version"`
	// Source is the workflow id of the session it was made from.
	Source string       `json:"source"`
	Steps  []ScriptStep `json:"steps"`
}

// ScriptStep is one tool call. Class is the tool's replay class, kept: an
// effect step runs at most once, as the session's own call would.
type ScriptStep struct {
	Tool  string               `json:"tool"`
	Args  json.RawMessage      `json:"args"`
	Class contract.ReplayClass `json:"class"`
}

// ScriptVersion is the format Script writes.
const ScriptVersion = 1

// ScriptFromHistory reads a finished session's history and makes its script.
func ScriptFromHistory(ctx context.Context, c client.Client, workflowID string) (*Script, error) {
	it := c.GetWorkflowHistory(ctx, workflowID, "", false, 0)
	var events []*historypb.HistoryEvent
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("reading the history of %s: %w", workflowID, err)
		}
		events = append(events, ev)
	}
	return BuildScript(workflowID, events)
}

// Tools a script leaves out: looking (snapshot), and custody and people,
// which a replay does on its own terms.
var scriptSkips = map[string]bool{
	contract.ToolSnapshot: true, contract.ToolRelease: true, contract.ToolRelaunch: true,
	contract.ToolRequestHandoff: true, contract.ToolUseWebsite: true,
}

// BuildScript makes a script from a BrowserSession's history events: every
// tool call that answered ok, in the order they were answered, except
// snapshots, releases, relaunches, handoffs and use_website. An id in a
// call becomes the locator {role, name} of the element the session's
// snapshots (and runs' observations) showed under that id before the call.
func BuildScript(source string, events []*historypb.HistoryEvent) (*Script, error) {
	dc := converter.GetDefaultDataConverter()
	calls := map[string]contract.ToolCall{}
	elems := map[string]contract.Locator{} // id -> what the latest look showed
	s := &Script{Version: ScriptVersion, Source: source, Steps: []ScriptStep{}}
	for _, ev := range events {
		if a := ev.GetWorkflowExecutionUpdateAcceptedEventAttributes(); a != nil {
			var call contract.ToolCall
			if err := dc.FromPayloads(a.GetAcceptedRequest().GetInput().GetArgs(), &call); err == nil {
				calls[a.GetAcceptedRequest().GetMeta().GetUpdateId()] = call
			}
			continue
		}
		done := ev.GetWorkflowExecutionUpdateCompletedEventAttributes()
		if done == nil || done.GetOutcome().GetSuccess() == nil {
			continue
		}
		call, ok := calls[done.GetMeta().GetUpdateId()]
		if !ok {
			continue
		}
		var answer json.RawMessage
		if err := dc.FromPayloads(done.GetOutcome().GetSuccess(), &answer); err != nil {
			continue
		}
		var head struct {
			OK       bool `json:"ok"`
			Text     string
			Observed *struct{ Text string } `json:"observed"`
			Snapshot *struct{ Text string } `json:"snapshot"`
		}
		_ = json.Unmarshal(answer, &head)
		if head.OK && !scriptSkips[call.Name] {
			args, err := withLocators(call.Name, call.Args, elems)
			if err != nil {
				return nil, fmt.Errorf("step %d (%s): %w", len(s.Steps)+1, call.Name, err)
			}
			class := contract.ClassRead
			if t, ok := contract.Lookup(call.Name); ok {
				class = t.Class
			}
			s.Steps = append(s.Steps, ScriptStep{Tool: call.Name, Args: args, Class: class})
		}
		// What this answer showed names the ids of the calls after it,
		// including the candidates a refused locator listed.
		if !head.OK {
			var f contract.Failure
			if json.Unmarshal(answer, &f) == nil && f.Code == contract.CodeRefused {
				learnCandidates(elems, f.Message)
			}
		}
		if head.OK {
			switch {
			case call.Name == contract.ToolSnapshot:
				learn(elems, head.Text)
			case head.Observed != nil:
				learn(elems, head.Observed.Text)
			case head.Snapshot != nil:
				learn(elems, head.Snapshot.Text)
			}
		}
	}
	return s, nil
}

// elemLine is a snapshot line naming an element: "[12] button "Save" ...",
// maybe indented, maybe a change line ("+ ", "~ ").
var elemLine = regexp.MustCompile(`^\s*(?:[+~] )?\[(\d+)\] ([A-Za-z][\w-]*)(?: ("(?:[^"\\]|\\.)*"))?`)

func learn(elems map[string]contract.Locator, text string) {
	for _, line := range strings.Split(text, "\n") {
		m := elemLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		l := contract.Locator{Role: m[2]}
		if m[3] != "" {
			if name, err := strconv.Unquote(m[3]); err == nil {
				l.Name = name
			} else {
				l.Name = strings.Trim(m[3], `"`)
			}
			// A long name the snapshot cut matches as a part.
			l.Name = strings.TrimSuffix(l.Name, "…")
		}
		elems[m[1]] = l
	}
}

// candidate is one element a refused locator listed: [12] button "Act 1".
var candidate = regexp.MustCompile(`\[(\d+)\] ([A-Za-z][\w-]*)(?: ("(?:[^"\\]|\\.)*"))?`)

func learnCandidates(elems map[string]contract.Locator, msg string) {
	for _, m := range candidate.FindAllStringSubmatch(msg, maxLearned) {
		l := contract.Locator{Role: m[2]}
		if name, err := strconv.Unquote(m[3]); err == nil {
			l.Name = name
		}
		elems[m[1]] = l
	}
}

// maxLearned bounds the candidates read from one message.
const maxLearned = 16

// withLocators rewrites a call's ids as locators and drops observe (no
// model looks at a replay).
func withLocators(tool string, raw json.RawMessage, elems map[string]contract.Locator) (json.RawMessage, error) {
	var args map[string]any
	if err := json.Unmarshal(raw, &args); err != nil || args == nil {
		return raw, nil //nolint:nilerr // no object: nothing to rewrite
	}
	swap := func(m map[string]any, idKey, locKey string) error {
		v, ok := m[idKey].(string)
		if !ok || strings.TrimSpace(v) == "" {
			delete(m, idKey)
			return nil
		}
		id := strings.Trim(strings.TrimSpace(v), "[]")
		l, ok := elems[id]
		if !ok {
			return fmt.Errorf("id [%s] was never shown by a snapshot before the call, so its element is unknown", id)
		}
		delete(m, idKey)
		m[locKey] = l
		return nil
	}
	switch tool {
	case contract.ToolRun:
		delete(args, "observe")
		acts, _ := args["actions"].([]any)
		for i, a := range acts {
			if m, ok := a.(map[string]any); ok {
				if err := swap(m, "id", "locator"); err != nil {
					return nil, fmt.Errorf("action %d: %w", i+1, err)
				}
			}
		}
	case contract.ToolScreenshot, contract.ToolUpload:
		if err := swap(args, "id", "locator"); err != nil {
			return nil, err
		}
	case contract.ToolCheck:
		if err := swap(args, "expect_id", "expect_locator"); err != nil {
			return nil, err
		}
	}
	return json.Marshal(args)
}

// ScriptRun is what replaying a script did.
type ScriptRun struct {
	// WorkflowID is the session the script ran in.
	WorkflowID string `json:"workflow_id"`
	// Completed counts the steps that answered ok.
	Completed int `json:"completed"`
	Total     int `json:"total"`
	// Answers are the steps' answers, in order, the failing one last.
	Answers []json.RawMessage `json:"answers"`
	// Stopped, when set, is the failure that stopped the script at step
	// Stopped.Step (1 is the first). A locator that matched nothing or
	// several is stale_snapshot, with the candidates in its message: the
	// page changed since the script was made, and an agent can take over
	// the session from there.
	Stopped *ScriptStop `json:"stopped,omitempty"`
}

// ScriptStop is the step that stopped a script and why.
type ScriptStop struct {
	Step    int           `json:"step"`
	Tool    string        `json:"tool"`
	Code    contract.Code `json:"code"`
	Message string        `json:"message"`
}

// RunScript runs a script's steps one at a time in the BrowserSession with
// this workflow id (created when missing, with o.Config), with no model:
// each step's locators are resolved on the page as it is then. The first
// failure stops it. The session is left open (release it, or let it idle
// out), so an agent can take over where the script stopped.
func RunScript(ctx context.Context, c client.Client, workflowID string, s *Script, o CallOptions) (*ScriptRun, error) {
	if s == nil || s.Version != ScriptVersion {
		return nil, fmt.Errorf("not a version %d script", ScriptVersion)
	}
	run := &ScriptRun{WorkflowID: workflowID, Total: len(s.Steps), Answers: []json.RawMessage{}}
	for i, st := range s.Steps {
		out, err := Call(ctx, c, workflowID, contract.ToolCall{Name: st.Tool, Args: st.Args}, o)
		if err != nil {
			return run, err
		}
		run.Answers = append(run.Answers, out)
		var f contract.Failure
		var head struct {
			OK bool `json:"ok"`
		}
		if err := json.Unmarshal(out, &head); err != nil {
			return run, fmt.Errorf("step %d answered non-JSON", i+1)
		}
		if head.OK {
			run.Completed++
			continue
		}
		_ = json.Unmarshal(out, &f)
		stop := &ScriptStop{Step: i + 1, Tool: st.Tool, Code: f.Code, Message: f.Message}
		if f.Code == contract.CodeRefused && locatorMissed.MatchString(f.Message) {
			// The page is not as it was: the script's picture of it is stale.
			stop.Code = contract.CodeStaleSnapshot
		}
		run.Stopped = stop
		return run, nil
	}
	return run, nil
}

// locatorMissed is the driver's refusal of a locator that found no element
// or several (see driver.LocatorError).
var locatorMissed = regexp.MustCompile(`locator \{.*\} (matches no visible element|matches \d+ visible elements)`)
