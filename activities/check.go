package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

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
		URL: req.Args.URL, Text: req.Args.ExpectText, ID: req.Args.ExpectID, Locator: driverLocator(req.Args.ExpectLocator),
		NoConsoleErrors: req.Args.NoConsoleErrors, NoFailedRequests: req.Args.NoFailedRequests,
	})
	if err != nil {
		return nil, driverFailure(err)
	}
	res := verdict(out)
	s.stamp(&res.Page)
	res.URL = scrub.URL(out.URL)
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
		body: a.o.Redactor.Bytes(body), finalURL: res.URL, title: res.Title, extractor: "check",
	})
	if err != nil {
		return nil, evidenceFailure(err)
	}
	res.Evidence = cc
	return res, nil
}

// verdict turns what the driver found into the contract's verdict: passed
// only when there was something to check and every check held; errors the
// page shows that nobody asked about are warnings.
func verdict(out *driver.CheckResult) *contract.CheckResult {
	res := &contract.CheckResult{OK: true, Page: contract.Page{Title: out.Title}, Passed: len(out.Checks) > 0, Checks: []contract.CheckItem{}}
	asked := map[string]bool{}
	for _, c := range out.Checks {
		asked[c.Name] = true
		res.Checks = append(res.Checks, contract.CheckItem{Check: c.Name, Passed: c.Passed, Expected: c.Expected, Found: c.Found})
		if !c.Passed {
			res.Passed = false
			res.Failed = append(res.Failed, c.Name)
		}
	}
	warn := func(name, what string, got []string) {
		if !asked[name] && len(got) > 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%d %s (not checked): %s", len(got), what, clipText(strings.Join(got, "; "), 300)))
		}
	}
	warn("no_console_errors", "console errors", out.ConsoleErrors)
	warn("no_failed_requests", "failed requests", out.FailedRequests)
	if out.Loading {
		res.Warnings = append(res.Warnings, "the page had not finished loading; check again after a wait if something is missing")
	}
	return res
}

// clipText bounds s to n bytes on a rune boundary.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
