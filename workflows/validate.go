package workflows

import (
	"encoding/json"

	"go.temporal.io/sdk/workflow"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/contract/validate"
)

// Change ids for workflow.GetVersion. Each names one change of command order;
// see docs/architecture.md, "Changing workflow code". Never reuse or remove one.
const (
	// changeRecordedValidation: a call's validation verdict is recorded as a
	// side effect, so a later build with a stricter or looser schema replays
	// the verdict the call was given instead of recomputing it.
	changeRecordedValidation = "recorded-validation"
	// changeInjectiveTags: session tags map workflow ids injectively
	// (tags.Encode); before, look-alike ids ("a:x/1", "a-x-1") shared one.
	changeInjectiveTags = "injective-tags"
	// changeReleaseOnCancel: a cancelled BrowserSession, and Browser.Close
	// called with a cancelled context, release the browser in a disconnected
	// context instead of returning without releasing it.
	changeReleaseOnCancel = "release-on-cancel"
	// changeSignedDecisions: a Browser reads its approvers once per run as a
	// side effect (when it starts listening for people); with approvers,
	// only signed approval and handoff decisions are acted on. Histories
	// from before the change accept unsigned decisions, as they did.
	changeSignedDecisions = "signed-decisions"
	// changeRemoteReattach: when the worker holding a session whose browser
	// runs elsewhere (any provider but local) is lost, the next call has
	// another worker take the browser over by its tag and runs there,
	// instead of releasing it and opening a new one (session_replaced); a
	// release whose worker is lost releases such a browser from any worker.
	changeRemoteReattach = "remote-reattach"
	// changePageJudge: after a browser_read of the content, a web_fetch or
	// a web_search, the page judge (page.judge) is asked about the page;
	// histories from before the change schedule no judge.
	changePageJudge = "page-judge"
	// changeUseWebsite: use_website starts the host's agent workflow for a
	// granted site as a child workflow (and reads a finished one's result
	// with agent.result).
	changeUseWebsite = "use-website"
	// changeFenceWords: a new session's fence code is six words (66 bits,
	// about six tokens) instead of 11 base64url characters (64 bits, about
	// nine tokens), as every answer with page text carries it twice.
	// Sessions from before the change keep the code they had.
	changeFenceWords = "fence-words"
	// changeSessionBoundHandoffs: a session draws a nonce (a side effect)
	// at its first handoff and derives every handoff request id from it,
	// so a signed answer from an earlier session under the same workflow id
	// never matches a request of this one.
	changeSessionBoundHandoffs = "session-bound-handoffs"
	// changeRestore: a session whose host is lost (a lost or stopped
	// worker, a crashed browser) is made again from its last checkpoint
	// (browser.create with Restore) and answers session_restored; a call
	// that finds its browser gone under a live worker (session_ended from
	// the host) restores in the same call instead of answering
	// session_ended. Histories from before answer session_replaced.
	changeRestore = "restore"
	// changeCreateQueue: a session's browser.create is scheduled on the
	// create queue, which a worker past its bounds stops polling (so
	// another worker takes the new session), instead of the shared queue.
	// A takeover of a remote session's browser stays on the shared queue.
	changeCreateQueue = "create-queue"
	// changeNamedHolds: a hold reported by a run starts a timer whose
	// summary names it in the UI's timeline ("waiting for approval: POST
	// …"); it is cancelled when someone decides or the run ends.
	changeNamedHolds = "named-holds"
	// changeJudgeEmpty: a web_fetch that brought back no text (an empty
	// body, a 404 or 403 with nothing in it) is judged too, so it answers
	// not_content with its kind instead of ok with nothing. Histories from
	// before judged only fetches with text.
	changeJudgeEmpty = "judge-empty"
	// changeReleaseCancelsHolds: a browser_release (or the session's end)
	// that finds holds waiting for a person decides them cancelled, so the
	// held run refuses its requests and answers at once instead of holding
	// the release until the holds expire (minutes).
	changeReleaseCancelsHolds = "release-cancels-holds"
)

// validateFn is validate.Call; tests swap it to prove a recorded verdict
// wins on replay.
var validateFn = validate.Call

// validateCall checks a model's call inside workflow code. Sessions that
// started before the change (no marker in history) keep validating in the
// workflow as they did; every other call records its verdict once.
func validateCall(ctx workflow.Context, name string, raw json.RawMessage) (any, *contract.Failure) {
	if workflow.GetVersion(ctx, changeRecordedValidation, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return validateFn(name, raw)
	}
	var verdict *contract.Failure
	err := workflow.SideEffect(ctx, func(workflow.Context) any {
		_, f := validateFn(name, raw)
		return f
	}).Get(&verdict)
	if err != nil {
		return nil, contract.Fail(contract.CodeRefused, "%s: the recorded validation could not be read (%v); this is a bug in durable-browser, report it", name, err)
	}
	if verdict != nil && verdict.Code != "" {
		return nil, verdict
	}
	args, err := contract.Decode(name, raw)
	if err != nil {
		return nil, contract.Fail(contract.CodeRefused, "%v; this is a bug in durable-browser, report it", err)
	}
	return args, nil
}
