package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os/user"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	dbclient "github.com/durable-browser/durable-browser/client"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/durable-browser/durable-browser/cmd/internal/cli"
	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/config"
	"github.com/durable-browser/durable-browser/internal/oneline"
)

// opsFlags are the flags every operator verb that talks to Temporal shares.
type opsFlags struct {
	cli.Client
	queryTimeout time.Duration
}

func bindOps(fs *config.Set, o *opsFlags) {
	cli.BindClient(fs, &o.Client, 30*time.Second, "give up after this long", "trace, debug, info, warn or error")
	fs.Duration(&o.queryTimeout, "query-timeout", 5*time.Second, "how long one session's state query may take (a session answers only while a worker polls its queue)")
}

// dial validates the flags and connects; the returned context carries --timeout.
func (o *opsFlags) dial(ctx context.Context, env *cliEnv) (context.Context, context.CancelFunc, client.Client, error) {
	log, err := o.Check(env.Stderr, "e.g. 30s")
	if err != nil {
		return nil, nil, nil, err
	}
	if o.queryTimeout <= 0 {
		return nil, nil, nil, &config.Error{Flag: "query-timeout", Problem: "must be positive", Fix: "e.g. 5s"}
	}
	return o.Dial(ctx, log)
}

// queryState asks one session for its state, bounded by --query-timeout.
func (o *opsFlags) queryState(ctx context.Context, c client.Client, workflowID string) (*contract.SessionState, error) {
	return o.ask(ctx, c, workflowID, dbclient.State)
}

// peopleState queries the state people deciding need (dbclient.BrowserState):
// a session's, or an orchestrator's that opened its browser inline.
func (o *opsFlags) peopleState(ctx context.Context, c client.Client, workflowID string) (*contract.SessionState, error) {
	return o.ask(ctx, c, workflowID, dbclient.BrowserState)
}

// ask runs a state query bounded by --query-timeout.
func (o *opsFlags) ask(ctx context.Context, c client.Client, workflowID string, query func(context.Context, client.Client, string) (*contract.SessionState, error)) (*contract.SessionState, error) {
	qctx, cancel := context.WithTimeout(ctx, o.queryTimeout)
	defer cancel()
	st, err := query(qctx, c, workflowID)
	if err != nil {
		if qctx.Err() != nil && ctx.Err() == nil {
			return nil, fmt.Errorf("session %s did not answer its state query within %s: is a worker running? (raise --query-timeout)", workflowID, o.queryTimeout)
		}
		return nil, fmt.Errorf("querying session %s: %w", workflowID, err)
	}
	return st, nil
}

// noSession reports that no workflow has the id the person gave.
func noSession(err error) bool {
	var nf *serviceerror.NotFound
	return errors.As(err, &nf)
}

// unknownSession is the one error for an answer to a session that does
// not exist: nothing is sent.
func unknownSession(wfID string) error {
	return fmt.Errorf("no session %q: no BrowserSession workflow has that id in this namespace (check --address and --namespace); nothing was sent. List sessions with `durable-browser sessions --all`", wfID)
}

// sessionQuery is the visibility query for BrowserSession workflows.
func sessionQuery(all bool, extra string) string {
	q := fmt.Sprintf("WorkflowType = '%s'", contract.WorkflowBrowserSession)
	if !all {
		q += " AND ExecutionStatus = 'Running'"
	}
	if extra != "" {
		q += " AND " + extra
	}
	return q
}

// listSessions pages through the visibility store, at most limit executions.
func listSessions(ctx context.Context, c client.Client, ns, query string, limit int) ([]*execution, error) {
	var out []*execution
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: ns, Query: query, PageSize: int32(min(limit, 1000)), NextPageToken: token,
		})
		if err != nil {
			return nil, fmt.Errorf("listing BrowserSession workflows (%s): %w", query, err)
		}
		for _, e := range resp.GetExecutions() {
			out = append(out, &execution{
				ID:     e.GetExecution().GetWorkflowId(),
				RunID:  e.GetExecution().GetRunId(),
				Status: e.GetStatus(),
				Start:  e.GetStartTime().AsTime(),
				Attrs:  keywords(e.GetSearchAttributes()),
			})
			if len(out) >= limit {
				return out, nil
			}
		}
		token = resp.GetNextPageToken()
		if len(token) == 0 {
			return out, nil
		}
	}
}

// execution is what the list needs of one execution.
type execution struct {
	ID, RunID string
	Status    enumspb.WorkflowExecutionStatus
	Start     time.Time
	Attrs     map[string]string
}

// keywords decodes the session's Keyword search attributes; others are skipped.
func keywords(sa *commonpb.SearchAttributes) map[string]string {
	out := map[string]string{}
	dc := converter.GetDefaultDataConverter()
	for _, name := range []string{contract.SearchAttrTag, contract.SearchAttrProvider, contract.SearchAttrState} {
		p, ok := sa.GetIndexedFields()[name]
		if !ok {
			continue
		}
		var v string
		if dc.FromPayload(p, &v) == nil {
			out[name] = v
		}
	}
	return out
}

func statusName(s enumspb.WorkflowExecutionStatus) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "WORKFLOW_EXECUTION_STATUS_"))
}

// sessionRow is one line of `durable-browser sessions`: the execution and
// its search attributes and, for a running session that answered, its whole
// state query (every field of contract.SessionState, in --json).
type sessionRow struct {
	WorkflowID string    `json:"workflow_id"`
	RunID      string    `json:"run_id"`
	Status     string    `json:"status"`
	Tag        string    `json:"tag,omitempty"`
	Provider   string    `json:"provider,omitempty"`
	State      string    `json:"state,omitempty"`
	StartedAt  time.Time `json:"started_at"`
	// Ended says why a completed session ended: released, idle,
	// max_lifetime or closed (its result's reason).
	Ended string `json:"ended,omitempty"`
	// QueryError says why the row holds only search attributes.
	QueryError string `json:"query_error,omitempty"`
	// SessionState is the state query's answer; the fields above, from
	// the execution, shadow its own of the same name (they agree, but
	// started_at is the execution's).
	*contract.SessionState
}

const sessionsUsage = `Usage: durable-browser sessions [flags]

Lists BrowserSession workflows (running ones unless --all) and asks each
running one for its state: workflow id, session tag, provider, state (live,
waiting_for_human, held, released) and the page's URL. An ended session shows
why it ended: released (browser_release), idle, max_lifetime or closed.

The same with the Temporal CLI:
  temporal workflow list --query "WorkflowType = 'BrowserSession' AND ExecutionStatus = 'Running'"
  temporal workflow list --query "BrowserState = 'waiting_for_human'"
  temporal workflow query --workflow-id <session-workflow-id> --type state
In the Temporal UI, filter workflows with the same query; the BrowserSessionTag,
BrowserProvider and BrowserState search attributes are shown per workflow.

Flags:
`

func runSessions(ctx context.Context, env *cliEnv, args []string) error {
	fs := cli.Flags("sessions", env, sessionsUsage)
	var (
		o           opsFlags
		all, asJSON bool
		limit       int
		watch       bool
		interval    time.Duration
	)
	bindOps(fs, &o)
	fs.Bool(&all, "all", false, "include sessions that have ended (shown from their search attributes)")
	fs.Bool(&asJSON, "json", false, "print a JSON array instead of a table")
	fs.Int(&limit, "limit", 200, "list at most this many sessions")
	fs.Bool(&watch, "watch", false, "refresh the table in place until Ctrl-C (plain lines, one table a refresh, when stdout is not a terminal)")
	fs.Duration(&interval, "interval", 2*time.Second, "how often --watch refreshes")
	if err := cli.ParseFlagsOnly(fs, args, "sessions"); err != nil {
		return err
	}
	if limit <= 0 {
		return &config.Error{Flag: "limit", Problem: "must be positive"}
	}
	if watch && (asJSON || interval < 100*time.Millisecond) {
		return &config.Error{Flag: "watch", Problem: "takes no --json and an --interval of at least 100ms"}
	}
	ctx, cancel, c, err := o.dial(ctx, env)
	if err != nil {
		return err
	}
	defer cancel()
	defer c.Close()
	if watch {
		return o.watchSessions(ctx, env, c, all, limit, interval)
	}
	rows, err := o.sessionRows(ctx, c, all, limit)
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(env.Stdout, rows)
	}
	return printSessions(env, rows, time.Now())
}

// watchSessions prints the table every interval until ctx ends: in place on
// a terminal, as successive tables headed by the time otherwise.
func (o *opsFlags) watchSessions(ctx context.Context, env *cliEnv, c client.Client, all bool, limit int, interval time.Duration) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		rows, err := o.sessionRows(ctx, c, all, limit)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		now := time.Now()
		if env.StdoutTerminal {
			fmt.Fprint(env.Stdout, "\x1b[H\x1b[2J") // home, clear
		}
		fmt.Fprintf(env.Stdout, "%s  %d session(s)\n", now.UTC().Format(time.RFC3339), len(rows))
		if err := printSessions(env, rows, now); err != nil {
			return err
		}
		if !env.StdoutTerminal {
			fmt.Fprintln(env.Stdout)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// sessionRows lists sessions and asks each running one for its state.
func (o *opsFlags) sessionRows(ctx context.Context, c client.Client, all bool, limit int) ([]sessionRow, error) {
	execs, err := listSessions(ctx, c, o.Temporal.Namespace, sessionQuery(all, ""), limit)
	if err != nil {
		return nil, err
	}
	rows := make([]sessionRow, 0, len(execs))
	for _, e := range execs {
		r := sessionRow{WorkflowID: e.ID, RunID: e.RunID, Status: statusName(e.Status), StartedAt: e.Start,
			Tag: e.Attrs[contract.SearchAttrTag], Provider: e.Attrs[contract.SearchAttrProvider], State: e.Attrs[contract.SearchAttrState]}
		if e.Status == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
			r.Ended = o.endReason(ctx, c, e)
		}
		if e.Status == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			st, err := o.queryState(ctx, c, e.ID)
			if err != nil {
				r.QueryError = err.Error()
			} else {
				r.withState(st)
			}
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// withState adds a running session's answer to its state query to its row.
func (r *sessionRow) withState(st *contract.SessionState) {
	r.Tag, r.Provider, r.State = st.Tag, st.Provider, st.State
	if st.WorkflowID == "" {
		st.WorkflowID = r.WorkflowID
	}
	r.SessionState = st
}

// printSessions writes the table: one row a session, with its pending human
// steps (a handoff, held requests) and its last call and how long ago.
func printSessions(env *cliEnv, rows []sessionRow, now time.Time) error {
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKFLOW ID\tTAG\tPROVIDER\tSTATE\tURL\tHUMAN\tLAST CALL")
	for _, r := range rows {
		state := orDash(r.State)
		if r.Status != "running" {
			state = r.Status
			if why := cmp.Or(r.Ended, r.State); why != "" {
				state += " (" + why + ")"
			}
		}
		if r.QueryError != "" {
			state += " (no answer)"
		}
		url := ""
		if r.SessionState != nil {
			url = r.URL
		}
		// Every cell is made safe: the URL and the last call come from
		// pages and models, the rest from whoever could start a workflow.
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", oneline.Safe(r.WorkflowID), safeCell(r.Tag), safeCell(r.Provider), oneline.Safe(state),
			safeCell(url), oneline.Safe(humanSteps(r)), oneline.Safe(lastCall(r, now)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range rows {
		if r.QueryError != "" {
			fmt.Fprintln(env.Stderr, "warning:", oneline.Safe(r.QueryError))
		}
	}
	return nil
}

// humanSteps says what waits for a person: a handoff, held requests.
func humanSteps(r sessionRow) string {
	if r.SessionState == nil {
		return "-"
	}
	var parts []string
	if r.PendingHandoff != nil {
		parts = append(parts, "handoff "+r.PendingHandoff.RequestID)
	}
	held := 0
	for _, h := range r.Holds {
		if h.Decision == "" {
			held++
		}
	}
	if held > 0 {
		parts = append(parts, fmt.Sprintf("%d held", held))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// lastCall is the last call's summary and its age.
func lastCall(r sessionRow, now time.Time) string {
	if r.SessionState == nil || r.LastCall == "" {
		return "-"
	}
	return r.LastCall + " (" + age(now, r.LastActive) + " ago)"
}

// endReason reads why a completed session ended from its result, bounded
// by --query-timeout; empty when it cannot be read.
func (o *opsFlags) endReason(ctx context.Context, c client.Client, e *execution) string {
	qctx, cancel := context.WithTimeout(ctx, o.queryTimeout)
	defer cancel()
	var res contract.SessionResult
	if err := c.GetWorkflow(qctx, e.ID, e.RunID).Get(qctx, &res); err != nil {
		return ""
	}
	return res.Reason
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// safeCell is a table cell: s made terminal-safe, or "-".
func safeCell(s string) string { return orDash(oneline.Safe(s)) }

// printJSON is every operator verb's --json: cli.PrintJSON (no HTML
// escaping; control and bidi/format characters escaped as \uXXXX).
func printJSON(w io.Writer, v any) error { return cli.PrintJSON(w, v) }

// age renders how long ago t was, to the second.
func age(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return now.Sub(t).Truncate(time.Second).String()
}

// runningStates lists running sessions and their states. With scan it
// queries every running session; otherwise those whose BrowserState search
// attribute is state and those that keep no search attributes (started with
// them off), falling back to a scan when the namespace does not know the
// attribute.
func (o *opsFlags) runningStates(ctx context.Context, env *cliEnv, c client.Client, state string, scan bool, limit int) ([]*contract.SessionState, error) {
	var execs []*execution
	if !scan {
		matching, err := listSessions(ctx, c, o.Temporal.Namespace, sessionQuery(false, fmt.Sprintf("%s = '%s'", contract.SearchAttrState, state)), limit)
		if err != nil {
			fmt.Fprintf(env.Stderr, "warning: %v; querying every running session instead (register the search attributes: docs/operations.md)\n", err)
			scan = true
		}
		execs = matching
	}
	all, err := listSessions(ctx, c, o.Temporal.Namespace, sessionQuery(false, ""), limit)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, e := range execs {
		seen[e.ID] = true
	}
	for _, e := range all {
		// Without --scan, a session that keeps no BrowserState (started
		// with search attributes off) is asked too.
		if !seen[e.ID] && (scan || e.Attrs[contract.SearchAttrState] == "") {
			seen[e.ID] = true
			execs = append(execs, e)
		}
	}
	var out []*contract.SessionState
	for _, e := range execs {
		st, err := o.queryState(ctx, c, e.ID)
		if err != nil {
			fmt.Fprintln(env.Stderr, "warning:", oneline.Safe(err.Error()))
			continue
		}
		if st.WorkflowID == "" {
			st.WorkflowID = e.ID
		}
		out = append(out, st)
	}
	return out, nil
}

// by is who answers: --by, else the login name ($USER, $LOGNAME, else
// the account this process runs as).
func by(env *cliEnv, flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
	if name := cmp.Or(env.Getenv("USER"), env.Getenv("LOGNAME")); name != "" {
		return name
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}

// checkDecisionText refuses, before anything is sent, a --by or --note the
// session would only keep clipped and cleaned (workflows keep at most
// contract.MaxDecisionBy and MaxDecisionNote characters of a decision, with
// control and bidi/format characters replaced): who decides is 1-100
// printable characters, a note up to 500, neither with a control (tab,
// newline, ESC...) or bidi/format character (U+202E...).
func checkDecisionText(flag, value string, minLen, maxLen int) error {
	if problem, rule := decisionTextProblem(value, minLen, maxLen); problem != "" {
		return &config.Error{Flag: flag, Problem: problem, Fix: "use " + rule}
	}
	return nil
}

// decisionTextProblem says what is wrong with value as checkDecisionText
// reads it ("" when nothing), and the rule.
func decisionTextProblem(value string, minLen, maxLen int) (problem, rule string) {
	rule = fmt.Sprintf("%d-%d printable characters, no control or bidi/format characters", minLen, maxLen)
	if minLen == 0 {
		rule = fmt.Sprintf("up to %d printable characters, no control or bidi/format characters", maxLen)
	}
	switch n := utf8.RuneCountInString(value); {
	case n < minLen:
		return "is empty", rule
	case n > maxLen:
		return fmt.Sprintf("is %d characters long", n), rule
	case !oneline.Printable(value):
		bad := "a byte that is not UTF-8"
		for _, r := range value {
			if oneline.Unsafe(r) {
				bad = fmt.Sprintf("the character %U", r)
				break
			}
		}
		return "holds " + bad, rule
	}
	return "", rule
}

// personVerb describes a verb a person answers with (handoff, approvals):
// list what waits, or answer one item.
type personVerb struct {
	name, usage string
	// answers names the answering subcommands, for flag help ("done/cancel").
	answers string
	// state is the BrowserState that lists narrow to.
	state       string
	subcommands string
	noteHelp    string
	byHelp      string
	// keygen adds the flags of the keygen subcommand.
	keygen bool
	// showURL adds handoff list's --show-url and --live-view-dir.
	showURL bool
	// words are the answering subcommands; idName names what they answer.
	words  []string
	idName string
	// list prints what waits in states (list); answer sends one answer.
	list func(env *cliEnv, f *personFlags, states []*contract.SessionState) error
	// st is the session's state, nil when it could not be read.
	answer func(ctx context.Context, env *cliEnv, f *personFlags, a answer, st *contract.SessionState, word, wfID, id string) error
	// signingNeeds is what a signed answer needs of the session's state.
	signingNeeds string
}

// answer is what an answering subcommand sends with: the client, and who
// answers (and their signer).
type answer struct {
	c client.Client
	d *decider
}

// runPerson runs a person verb: list what waits, answer one item, or
// (approvals) make a key.
func runPerson(ctx context.Context, env *cliEnv, args []string, v personVerb) error {
	fs, f, pos, err := parsePerson(env, args, v)
	if err != nil {
		return err
	}
	switch {
	case pos[0] == "list":
		states, err := f.listStates(ctx, env, pos)
		if err != nil {
			return err
		}
		return v.list(env, f, states)
	case slices.Contains(v.words, pos[0]):
		ctx, c, d, stop, err := f.startAnswer(ctx, env, fs, v.name, v.idName, pos)
		if err != nil {
			return err
		}
		defer stop()
		wfID := pos[1]
		// The workflow ignores an answer to an unknown or answered item;
		// the answer checks the state first so the person hears it instead.
		st, err := f.peopleState(ctx, c, wfID)
		if err != nil {
			if noSession(err) {
				return unknownSession(wfID)
			}
			if d.signer != nil {
				return fmt.Errorf("signing needs %s: %w", v.signingNeeds, err)
			}
			fmt.Fprintf(env.Stderr, "warning: %v; sending the signal anyway (the session reads it once a worker runs)\n", err)
		}
		return v.answer(ctx, env, f, answer{c: c, d: d}, st, pos[0], wfID, pos[2])
	default: // keygen: parsePerson admits no other
		if len(pos) != 1 {
			return fmt.Errorf("approvals keygen takes no arguments, got %q", pos[1:])
		}
		return keygen(env, f.name, f.out)
	}
}

// send signals an answer (sig, signed already when it is) to session wfID
// and, when the session checks answers (a signer, or approvers in st, its
// state before), waits for it to take it (taken) or say why not (confirm).
func (f *personFlags) send(ctx context.Context, a answer, wfID string, st *contract.SessionState, signal string, sig any, kind, id string, taken func(*contract.SessionState) bool) error {
	if err := a.c.SignalWorkflow(ctx, wfID, "", signal, sig); err != nil {
		return fmt.Errorf("signalling session %s: %w", wfID, err)
	}
	if st != nil && (a.d.signer != nil || len(st.Approvers) > 0) {
		return f.confirm(ctx, a.c, wfID, kind, id, a.d.by, st, taken)
	}
	return nil
}

// printList prints rows as JSON, or as a table: header, then a line a row
// (columns separated by tabs).
func printList[T any](env *cliEnv, asJSON bool, rows []T, header string, line func(now time.Time, r T) string) error {
	if asJSON {
		return printJSON(env.Stdout, rows)
	}
	now := time.Now()
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		fmt.Fprintln(tw, line(now, r))
	}
	return tw.Flush()
}

// personFlags are the flags every person verb takes.
type personFlags struct {
	opsFlags
	verb         personVerb
	note, by     string
	byGiven      bool
	asJSON, scan bool
	limit        int
	// workflow, for list, is the one workflow to look at.
	workflow string
	// key is the approver's private key file; expiresIn bounds a signed decision.
	key       string
	expiresIn time.Duration
	// name and out are keygen's.
	name, out string
	// showURL and liveViewDir are handoff list's.
	showURL     bool
	liveViewDir string
}

// parsePerson binds and parses a person verb's flags, which may stand before
// or after the positional arguments, and returns those arguments.
func parsePerson(env *cliEnv, args []string, v personVerb) (*config.Set, *personFlags, []string, error) {
	fs := cli.Flags(v.name, env, v.usage)
	f := &personFlags{verb: v}
	bindOps(fs, &f.opsFlags)
	fs.String(&f.note, "note", "", v.answers+": "+v.noteHelp+" (up to 500 printable characters, no control or bidi/format characters)")
	fs.String(&f.by, "by", "", v.answers+": "+v.byHelp+", 1-100 printable characters, no control or bidi/format characters (default $USER, else $LOGNAME, else the account's name; when signing, the key's approver)")
	fs.StringVar(&f.key, "key", "", v.answers+": sign with this approver private key file (from approvals keygen) [$"+approverKeyEnv+"]")
	fs.Duration(&f.expiresIn, "expires-in", contract.DefaultDecisionValidity, v.answers+": a signed decision is valid this long (at most 1h)")
	fs.Bool(&f.asJSON, "json", false, "list: print JSON")
	fs.Bool(&f.scan, "scan", false, "list: query every running session, not only those whose BrowserState says "+v.state+" (for sessions started without search attributes)")
	fs.Int(&f.limit, "limit", 200, "list: look at most at this many sessions")
	fs.StringVar(&f.workflow, "workflow", "", "list: look only at this workflow: a session's id, or the id of an orchestrator's workflow that opened a browser inline (workflows.Open), which list does not find by itself")
	if v.keygen {
		fs.StringVar(&f.name, "name", "", "keygen: the approver's name, which their signed decisions give as by (letters, digits, . _ @ -)")
		fs.StringVar(&f.out, "out", "", "keygen: file the private key is written to (mode 0600; must not exist)")
	}
	if v.showURL {
		fs.Bool(&f.showURL, "show-url", false, "list: also show each handoff's live view address (a full-control credential), read from --live-view-dir on this machine")
		fs.String(&f.liveViewDir, "live-view-dir", config.DefaultLiveViewDir(), "list --show-url: the worker's --live-view-dir")
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return nil, nil, nil, err
	}
	names := append([]string{"list"}, v.words...)
	if v.keygen {
		names = append(names, "keygen")
	}
	if _, err := cli.Subverb(pos, v.name, v.subcommands, fs.Usage, names...); err != nil {
		return nil, nil, nil, err
	}
	f.byGiven = fs.Given("by")
	return fs, f, pos, nil
}

// startAnswer begins an answer subcommand (approvals approve/deny, handoff
// done/cancel): it checks the arguments are <session-workflow-id> <idName>,
// learns who answers (and their signer) and dials the server. The caller
// defers stop.
func (f *personFlags) startAnswer(ctx context.Context, env *cliEnv, fs *config.Set, verb, idName string, pos []string) (context.Context, client.Client, *decider, func(), error) {
	if len(pos) != 3 {
		fs.Usage()
		return nil, nil, nil, nil, fmt.Errorf("want %s %s <session-workflow-id> <%s>, got %d arguments", verb, pos[0], idName, len(pos)-1)
	}
	if err := contract.CheckSessionID(pos[1]); err != nil {
		return nil, nil, nil, nil, err
	}
	if err := checkDecisionText("note", f.note, 0, contract.MaxDecisionNote); err != nil {
		return nil, nil, nil, nil, err
	}
	d, err := f.decider(env)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	ctx, cancel, c, err := f.dial(ctx, env)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	return ctx, c, d, func() { c.Close(); cancel() }, nil
}

// listStates is the state of every running session a person verb's list
// subcommand (pos, which takes no arguments) shows: those in the verb's
// BrowserState.
func (f *personFlags) listStates(ctx context.Context, env *cliEnv, pos []string) ([]*contract.SessionState, error) {
	if len(pos) != 1 {
		return nil, fmt.Errorf("%s list takes no arguments, got %q", f.verb.name, pos[1:])
	}
	if f.workflow != "" {
		if err := contract.CheckSessionID(f.workflow); err != nil {
			return nil, fmt.Errorf("--workflow: %w", err)
		}
		if f.scan {
			return nil, errors.New("--workflow looks at one workflow and --scan at every running session: give one of them")
		}
	}
	ctx, cancel, c, err := f.dial(ctx, env)
	if err != nil {
		return nil, err
	}
	defer cancel()
	defer c.Close()
	if f.workflow != "" {
		st, err := f.peopleState(ctx, c, f.workflow)
		if err != nil {
			if noSession(err) {
				return nil, fmt.Errorf("no workflow %q in this namespace (check --address and --namespace)", f.workflow)
			}
			return nil, fmt.Errorf("%w (a workflow that opened its browser with workflows.Open answers only when it listens for people: Config.SkipHumanHandlers unset)", err)
		}
		return []*contract.SessionState{st}, nil
	}
	return f.runningStates(ctx, env, c, f.verb.state, f.scan, f.limit)
}
