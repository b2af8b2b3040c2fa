package contract

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Sub-agents: use_website (ToolUseWebsite) hands a task on a site to the
// host's own agent for that site, run as a child workflow with a browser
// session of its own. It is listed (UseWebsiteTool, DefinitionsFor) only
// when the host grants sites; Definitions() never lists it.

// SiteGrant names a site a session may hand tasks on, and the host's agent
// workflow that does them. Only the host sets grants.
type SiteGrant struct {
	// Site is the name the model uses, e.g. "shop.example".
	Site string `json:"site"`
	// Workflow is the agent workflow's type; it takes an AgentTask and
	// returns any JSON report.
	Workflow string `json:"workflow"`
	// TaskQueue is where that workflow is served; empty: the session's own.
	TaskQueue string `json:"task_queue,omitempty"`
}

// Validate checks a grant.
func (g SiteGrant) Validate() error {
	if strings.TrimSpace(g.Site) == "" || len(g.Site) > 253 || strings.TrimSpace(g.Workflow) == "" {
		return fmt.Errorf("site grant %q: name a site (at most 253 characters) and the agent workflow that serves it", clipName(g.Site))
	}
	return nil
}

// UseWebsiteArgs are use_website's arguments.
type UseWebsiteArgs struct {
	Site string `json:"site"`
	Task string `json:"task"`
	// RequestID names the request: asked again, a finished request answers
	// its result without running again; a failed one runs again.
	RequestID string `json:"request_id"`
}

// AgentTask is what an agent workflow is started with.
type AgentTask struct {
	Site      string `json:"site"`
	Task      string `json:"task"`
	RequestID string `json:"request_id"`
	// Parent is the workflow id of the session that asked.
	Parent string `json:"parent"`
}

// UseWebsiteResult is the agent's report.
type UseWebsiteResult struct {
	OK        bool   `json:"ok"`
	Site      string `json:"site"`
	RequestID string `json:"request_id"`
	// WorkflowID is the agent's workflow, derived from the request id.
	WorkflowID string `json:"workflow_id"`
	// Reused: the request had already finished; its result is given again.
	Reused bool `json:"reused,omitempty"`
	// Report is what the agent workflow returned.
	Report json.RawMessage `json:"report"`
}

// AgentResultRequest is agent.result's input.
type AgentResultRequest struct {
	WorkflowID string `json:"workflow_id"`
}

const maxTaskChars = 4000

// UseWebsiteTool is use_website as a model sees it, for the granted sites.
func UseWebsiteTool(sites []string) Tool {
	enum := make([]any, len(sites))
	for i, s := range sites {
		enum[i] = s
	}
	schema := schemaObject(schemaMap{
		"site": schemaMap{"type": "string", "enum": enum, "description": "One of the sites you may hand tasks on."},
		"task": schemaString("What to do there and what to report, in plain words.", 1, maxTaskChars),
		"request_id": schemaWith(schemaString("A name for this request (letters, digits, '.', '-', '_'). Asking again with the same "+
			"request_id gives the finished result without doing it again; after a failure it runs again.", 1, 64), "pattern", namePattern),
	}, "site", "task", "request_id")
	b, _ := json.Marshal(schema)
	return Tool{
		Name: ToolUseWebsite,
		Description: "Hand a task on one of the granted sites to an agent that knows the site; it works in a browser of its " +
			"own and returns its report. Use it for a whole task on that site instead of acting step by step. Give the " +
			"same request_id to ask for the same request's result again.",
		Schema: b, Class: ClassEffect, Activity: "child workflow",
	}
}

// DefinitionsFor is Definitions() plus use_website when sites are granted.
func DefinitionsFor(grants []SiteGrant) []Tool {
	defs := Definitions()
	if len(grants) == 0 {
		return defs
	}
	return append(defs, UseWebsiteTool(GrantedSites(grants)))
}

// GrantedSites lists the grants' site names, sorted, once each.
func GrantedSites(grants []SiteGrant) []string {
	var out []string
	for _, g := range grants {
		if !slices.Contains(out, g.Site) {
			out = append(out, g.Site)
		}
	}
	slices.Sort(out)
	return out
}

// Grant returns the grant for a site.
func Grant(grants []SiteGrant, site string) (SiteGrant, bool) {
	for _, g := range grants {
		if g.Site == site {
			return g, true
		}
	}
	return SiteGrant{}, false
}
