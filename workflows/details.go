package workflows

import (
	"strconv"
	"strings"
	"time"

	"github.com/durable-browser/durable-browser/contract"
	"go.temporal.io/sdk/workflow"
)

// Details renders what the Temporal UI shows as a session's current details
// (markdown): its state, page, host, pending human steps with the commands
// that answer them, counts of calls and failures, and the last evidence key.
// URLs lose their query values (scrubbed by the worker before they reached
// the state) and fragments; a live-view or DevTools address is never part of
// the state, so never shown. now dates the ages of holds.
func Details(st contract.SessionState, last LastCall, now time.Time) string {
	var b strings.Builder
	line := func(parts ...string) {
		b.WriteString(strings.Join(parts, " · "))
		b.WriteString("\n\n")
	}
	head := []string{"**" + orDash(st.State) + "**"}
	if st.Provider != "" {
		head = append(head, "provider "+st.Provider)
	}
	if st.HostQueue != "" {
		head = append(head, "host `"+st.HostQueue+"`")
	}
	if st.Tag != "" {
		head = append(head, "tag `"+st.Tag+"`")
	}
	line(head...)
	if st.URL != "" {
		page := "page " + shownURL(st.URL)
		if st.Title != "" {
			page += " — " + oneLineCut(st.Title, 80)
		}
		line(page)
	}
	calls := "calls " + strconv.Itoa(st.Calls)
	if last.Failures > 0 {
		calls += " (" + strconv.Itoa(last.Failures) + " failed)"
	}
	parts := []string{calls}
	if last.Summary != "" {
		l := "last: " + last.Summary
		if last.Code != "" {
			l += " → " + last.Code
		}
		parts = append(parts, l)
	}
	line(parts...)
	if last.Evidence != "" {
		line("last evidence `" + last.Evidence + "`")
	}
	wf := st.WorkflowID
	if p := st.PendingHandoff; p != nil {
		line("**waiting for a person**: "+oneLineCut(p.Instruction, 200)+" (expires "+p.ExpiresAt.UTC().Format("15:04 MST")+")",
			"answer: `durable-browser handoff done "+wf+" "+p.RequestID+"` or `handoff cancel`")
	}
	for _, h := range st.Holds {
		if h.Decision != "" {
			continue
		}
		held := "held " + now.Sub(h.HeldAt).Round(time.Second).String()
		if !h.ExpiresAt.IsZero() {
			held += ", expires " + h.ExpiresAt.UTC().Format("15:04 MST")
		}
		line("**held for approval**: "+h.Method+" "+h.Origin+oneLineCut(h.Path, 80)+" ("+held+")",
			"`durable-browser approvals approve "+wf+" "+h.HoldID+"` or `approvals deny`")
	}
	return strings.TrimSpace(b.String())
}

// LastCall is what the details say of the calls served: the last one's
// summary and failure code, failures counted, and the last evidence filed.
type LastCall struct {
	Summary  string `json:"summary,omitempty"`
	Code     string `json:"code,omitempty"`
	Failures int    `json:"failures,omitempty"`
	Evidence string `json:"evidence,omitempty"`
}

// note records a served call in the Browser's state.
func (l *LastCall) note(summary string, res any, f *contract.Failure) {
	l.Summary, l.Code = summary, ""
	if f != nil {
		l.Code = string(f.Code)
		l.Failures++
		return
	}
	if k := evidenceOf(res); k != "" {
		l.Evidence = k
	}
}

// evidenceOf is the key of the evidence a result filed, if any.
func evidenceOf(res any) string {
	switch r := res.(type) {
	case *contract.ScreenshotResult:
		return r.Evidence.Key
	case *contract.ReadResult:
		return r.Evidence.Key
	case *contract.CheckResult:
		return r.Evidence.Key
	case *contract.WebFetchResult:
		return r.Evidence.Key
	case *contract.WebSearchResult:
		return r.Evidence.Key
	case *contract.DownloadsResult:
		if n := len(r.Downloads); n > 0 {
			return r.Downloads[n-1].Evidence.Key
		}
	}
	return ""
}

// shownURL is a page URL without its query and fragment (the worker has
// already replaced query values; the details leave them out altogether).
func shownURL(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	return oneLineCut(u, 120)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func oneLineCut(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// setDetails updates the session's current details when they changed.
func (s *session) setDetails(ctx workflow.Context) {
	d := Details(s.state(ctx), s.b.st.Last, workflow.Now(ctx))
	if d != s.lastDetails {
		workflow.SetCurrentDetails(ctx, d)
		s.lastDetails = d
	}
}
