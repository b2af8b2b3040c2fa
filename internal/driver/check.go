package driver

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-rod/rod/lib/proto"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/listed"
)

// CheckOptions are the expectations a Check tests; each set field is one check.
type CheckOptions struct {
	// URL is a pattern the active tab's URL must match (as wait's url: a
	// glob with *, else a substring).
	URL string
	// Text must be in the page's visible text.
	Text string
	// ID is an element of the latest snapshot that must still be visible.
	ID string
	// Locator must match exactly one visible element.
	Locator *contract.Locator
	// NoConsoleErrors and NoFailedRequests: the document the tab shows
	// logged none.
	NoConsoleErrors, NoFailedRequests bool
}

// Checked is what a Check found: the verdict, and the console errors and
// failed requests of the document, checked or not (the filed verdict lists
// them): the first 50 of each, or 49 and a last line saying how many more.
type Checked struct {
	Verdict                       *contract.CheckResult
	ConsoleErrors, FailedRequests []string
}

// excerptJS (js/excerpt.js) finds text in the body's visible text.
var excerptJS = program("excerpt.js")

// Check tests expectations on the active tab without acting on it. An id
// that is stale answers *StaleError (it cannot be judged); every other
// outcome is a CheckItem of the verdict, which passes only when there was
// something to check and every check held; errors the page shows that
// nobody asked about are its warnings.
func (b *Browser) Check(ctx context.Context, o CheckOptions) (*Checked, error) {
	b.opMu.Lock()
	defer b.opMu.Unlock()
	t, err := b.tabNow(ctx)
	if err != nil {
		return nil, err
	}
	page := b.client(ctx, t.sess)
	res := &contract.CheckResult{OK: true, Checks: []contract.CheckItem{}}
	res.URL, res.Title = b.info(ctx)
	if o.URL != "" {
		loc, _ := b.docInfo(ctx, t.sess)
		if loc == "" {
			loc = res.URL
		}
		res.Checks = append(res.Checks, contract.CheckItem{Check: "url", Expected: o.URL, Passed: urlMatches(o.URL, loc), Found: loc})
	}
	if o.Text != "" {
		r, err := proto.RuntimeEvaluate{Expression: invoke(excerptJS, strconv.Quote(o.Text)), ReturnByValue: true}.Call(page)
		if err != nil {
			return nil, fmt.Errorf("driver: reading the page's text: %w", err)
		}
		it := contract.CheckItem{Check: "expect_text", Expected: o.Text}
		if r.ExceptionDetails == nil && !r.Result.Value.Nil() {
			it.Passed, it.Found = true, b.clip(r.Result.Value.Str(), 400)
		}
		res.Checks = append(res.Checks, it)
	}
	if o.ID != "" {
		id := strings.Trim(strings.TrimSpace(o.ID), "[]")
		refs, err := b.lookup(ctx, t, []string{id}, true)
		var se *StaleError
		if errors.As(err, &se) && se.Reason == "is no longer on the page" {
			// It was in the latest snapshot and left since: that is a finding.
			err, refs = nil, nil
		}
		if err != nil {
			return nil, err
		}
		it := contract.CheckItem{Check: "expect_id", Expected: "[" + id + "] visible"}
		if len(refs) == 1 {
			it.Found = refLine(id, refs[0]) + " (not visible)"
			if v, err := b.callOn(ctx, refs[0], visibleJS); err == nil && v.Value.Bool() {
				it.Passed, it.Found = true, refLine(id, refs[0])
			}
		}
		res.Checks = append(res.Checks, it)
	}
	if o.Locator != nil {
		it := contract.CheckItem{Check: "expect_locator", Expected: "one visible element matching " + locatorText(*o.Locator)}
		r, id, err := b.locate(ctx, t, *o.Locator)
		var le *LocatorError
		switch {
		case err == nil:
			it.Passed, it.Found = true, refLine(strconv.Itoa(id), r)
		case errors.As(err, &le) && le.Reason == "":
			it.Found = fmt.Sprintf("%d visible elements match", le.Found)
			if len(le.Candidates) > 0 {
				it.Found += ": " + strings.Join(le.Candidates, ", ")
			}
		default:
			return nil, err
		}
		res.Checks = append(res.Checks, it)
	}
	b.mu.Lock()
	// The lists end with a line saying how many more there were past the
	// bound; the counts are of them all.
	out := &Checked{Verdict: res, ConsoleErrors: listed.Lines(t.docConsole, "console errors"), FailedRequests: listed.Lines(t.docFailed, "failed requests")}
	nConsole, nFailed := t.docConsole.Count(), t.docFailed.Count()
	b.mu.Unlock()
	list := func(name string, got []string, n int) contract.CheckItem {
		it := contract.CheckItem{Check: name, Expected: "none", Passed: n == 0, Found: "none"}
		if n > 0 {
			it.Found = fmt.Sprintf("%d: %s", n, b.clip(strings.Join(got, "; "), 600))
		}
		return it
	}
	if o.NoConsoleErrors {
		res.Checks = append(res.Checks, list("no_console_errors", out.ConsoleErrors, nConsole))
	}
	if o.NoFailedRequests {
		res.Checks = append(res.Checks, list("no_failed_requests", out.FailedRequests, nFailed))
	}
	res.Passed = len(res.Checks) > 0
	asked := map[string]bool{}
	for _, c := range res.Checks {
		asked[c.Check] = true
		if !c.Passed {
			res.Passed = false
			res.Failed = append(res.Failed, c.Check)
		}
	}
	warn := func(name, what string, got []string, n int) {
		if !asked[name] && n > 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%d %s (not checked): %s", n, what, b.clip(strings.Join(got, "; "), 300)))
		}
	}
	warn("no_console_errors", "console errors", out.ConsoleErrors, nConsole)
	warn("no_failed_requests", "failed requests", out.FailedRequests, nFailed)
	if r, err := (proto.RuntimeEvaluate{Expression: `document.readyState`, ReturnByValue: true}).Call(page); err == nil && r.ExceptionDetails == nil && r.Result.Value.Str() != "complete" {
		res.Warnings = append(res.Warnings, "the page had not finished loading; check again after a wait if something is missing")
	}
	return out, nil
}

// refLine writes an element as a snapshot line's head: [5] button "Save".
func refLine(id string, r ref) string {
	s := "[" + id + "] " + r.role
	if r.name != "" {
		s += " " + strconv.Quote(truncate(r.name, 100))
	}
	return s
}
