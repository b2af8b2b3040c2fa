package activities

import (
	"context"
	"encoding/json"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/driver"
	"github.com/durable-browser/durable-browser/internal/scrub"
)

// Check answers browser_check: it tests the expectations on the page as it
// is, without acting, and files the verdict with what was found. A check
// that expects nothing is refused here too (whoever built the request): a
// look alone is never a pass.
func (a *Activities) Check(ctx context.Context, req contract.CheckRequest) (*contract.CheckResult, error) {
	if !req.Args.Expects() {
		return nil, contract.Fail(contract.CodeRefused, "browser_check: nothing to check: give at least one expectation (url, expect_text, expect_id, expect_locator, no_console_errors, no_failed_requests)")
	}
	s, done, err := a.beginPage(ctx, req.Session)
	if err != nil {
		return nil, err
	}
	defer done()
	out, err := s.browser.Check(ctx, driver.CheckOptions{
		URL: req.Args.URL, Text: req.Args.ExpectText, ID: req.Args.ExpectID, Locator: req.Args.ExpectLocator,
		NoConsoleErrors: req.Args.NoConsoleErrors, NoFailedRequests: req.Args.NoFailedRequests,
	})
	if err != nil {
		return nil, driverFailure(err)
	}
	res := out.Verdict
	s.stamp(&res.Page)
	res.URL = scrub.URL(res.URL)
	for i := range res.Checks {
		if res.Checks[i].Check == "url" {
			res.Checks[i].Found = scrub.URL(res.Checks[i].Found)
		}
	}
	// The filed verdict also lists every console error and failed request
	// of the document, checked or not.
	body, err := json.Marshal(struct {
		URL            string               `json:"url"`
		Title          string               `json:"title"`
		Passed         bool                 `json:"passed"`
		Failed         []string             `json:"failed,omitempty"`
		Checks         []contract.CheckItem `json:"checks"`
		Warnings       []string             `json:"warnings,omitempty"`
		ConsoleErrors  []string             `json:"console_errors,omitempty"`
		FailedRequests []string             `json:"failed_requests,omitempty"`
	}{res.URL, res.Title, res.Passed, res.Failed, res.Checks, res.Warnings, out.ConsoleErrors, out.FailedRequests})
	if err != nil {
		return nil, contract.Fail(contract.CodeCommandFailed, "encoding the verdict: %v", err)
	}
	cc, err := a.file(ctx, filing{
		tool: contract.ToolCheck, args: req.Args, session: s.ref.Tag, ext: "json", contentType: "application/json",
		body: body, finalURL: res.URL, title: res.Title, extractor: "check",
	})
	if err != nil {
		return nil, evidenceFailure(err)
	}
	res.Evidence = cc
	return res, nil
}
