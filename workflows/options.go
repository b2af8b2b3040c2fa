package workflows

import (
	"time"

	"github.com/durable-browser/durable-browser/contract"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Timeouts bound the activities a Browser schedules (contract.Timeouts).
type Timeouts = contract.Timeouts

// Default timeouts.
const (
	DefaultScheduleToStart       = 10 * time.Second
	DefaultSharedScheduleToStart = 30 * time.Second
	DefaultReadTimeout           = 60 * time.Second
	DefaultRunTimeout            = 5 * time.Minute
	DefaultCustodyTimeout        = 2 * time.Minute
	DefaultHeartbeat             = 10 * time.Second
)

// withDefaults fills the zero fields of t with the defaults.
func withDefaults(t Timeouts) Timeouts {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&t.ScheduleToStart, DefaultScheduleToStart)
	def(&t.SharedScheduleToStart, DefaultSharedScheduleToStart)
	def(&t.Read, DefaultReadTimeout)
	def(&t.Run, DefaultRunTimeout)
	def(&t.Custody, DefaultCustodyTimeout)
	def(&t.Heartbeat, DefaultHeartbeat)
	return t
}

// ReadRetryPolicy retries a read a bounded number of times. Failures are
// ApplicationErrors whose type is the failure code and which are marked
// non-retryable per code, so a non-retryable code stops the retries.
func ReadRetryPolicy() *temporal.RetryPolicy {
	return &temporal.RetryPolicy{
		InitialInterval:    500 * time.Millisecond,
		BackoffCoefficient: 2,
		MaximumInterval:    5 * time.Second,
		MaximumAttempts:    3,
	}
}

// nonRetryableCodes never earn a retry whatever the activity said: they are
// facts about the call or the session, not passing trouble.
var nonRetryableCodes = []string{
	string(contract.CodeRefused), string(contract.CodeStaleSnapshot),
	string(contract.CodeSessionEnded), string(contract.CodeSessionReplaced),
	string(contract.CodeEffectUnknown), string(contract.CodeCodeError),
	string(contract.CodeNotContent), string(contract.CodeBlocked),
	string(contract.CodeAuth), string(contract.CodeWaitingForHuman),
}

// ActivityOptions turns a replay class into activity options for a call
// scheduled on queue. Calls on a host queue (hosted) get the
// schedule-to-start bound that detects a lost worker; calls on the shared
// queue get the longer bound that detects no worker running at all.
func ActivityOptions(class contract.ReplayClass, queue string, hosted bool, t Timeouts) workflow.ActivityOptions {
	t = withDefaults(t)
	o := workflow.ActivityOptions{TaskQueue: queue, HeartbeatTimeout: t.Heartbeat, ScheduleToStartTimeout: t.SharedScheduleToStart}
	if hosted {
		o.ScheduleToStartTimeout = t.ScheduleToStart
	}
	switch class {
	case contract.ClassEffect:
		// Effects run at most once: a second attempt could repeat a form submit.
		o.StartToCloseTimeout = t.Run
		o.RetryPolicy = &temporal.RetryPolicy{MaximumAttempts: 1}
	case contract.ClassCustody, contract.ClassHuman:
		// Custody is idempotent by tag, so retrying is safe.
		o.StartToCloseTimeout = t.Custody
		o.RetryPolicy = &temporal.RetryPolicy{
			InitialInterval:        time.Second,
			BackoffCoefficient:     2,
			MaximumInterval:        10 * time.Second,
			MaximumAttempts:        4,
			NonRetryableErrorTypes: nonRetryableCodes,
		}
	default: // read
		o.StartToCloseTimeout = t.Read
		rp := ReadRetryPolicy()
		rp.NonRetryableErrorTypes = nonRetryableCodes
		o.RetryPolicy = rp
	}
	return o
}

// summarized sets the line the Temporal UI shows for an activity (user
// metadata: the server records it, replay does not compare it).
func summarized(o workflow.ActivityOptions, summary string) workflow.ActivityOptions {
	o.Summary = summary
	return o
}

// openSummary is a create's line: which browser, and why a new one.
func openSummary(opts contract.SessionOptions, replaces string) string {
	s := "open browser"
	if opts.Provider != "" {
		s += " (" + opts.Provider + ")"
	}
	if replaces != "" {
		s += " replacing " + replaces
	}
	return s
}

// summarize sets the summary for the activities run until the returned
// function restores the one before.
func (b *Browser) summarize(s string) func() {
	prev := b.summary
	b.summary = s
	return func() { b.summary = prev }
}
