package contract

// Tool names, as a model sees them.
const (
	ToolSnapshot       = "snapshot"
	ToolRun            = "run"
	ToolScreenshot     = "screenshot"
	ToolRead           = "browser_read"
	ToolDownloads      = "browser_downloads"
	ToolUpload         = "browser_upload"
	ToolCheck          = "browser_check"
	ToolRelease        = "browser_release"
	ToolRelaunch       = "browser_relaunch"
	ToolRequestHandoff = "browser_request_handoff"
	ToolWebFetch       = "web_fetch"
	ToolWebSearch      = "web_search"
	// ToolUseWebsite is listed only when the host grants sites (agents.go).
	ToolUseWebsite = "use_website"
)

// Activity names, stable across releases so any SDK can call them by name.
const (
	ActivitySnapshot   = "browser.snapshot"
	ActivityRun        = "browser.run"
	ActivityScreenshot = "browser.screenshot"
	ActivityRead       = "browser.read"
	ActivityDownloads  = "browser.downloads"
	ActivityUpload     = "browser.upload"
	ActivityCheck      = "browser.check"
	ActivityRelease    = "browser.release"
	ActivityRelaunch   = "browser.relaunch"
	ActivityCreate     = "browser.create"
	ActivityReconcile  = "browser.reconcile"
	ActivityNotify     = "handoff.notify"
	ActivityWebFetch   = "web.fetch"
	ActivityWebSearch  = "web.search"
	ActivityEvidence   = "evidence.get"
	// ActivityAgentResult reads a finished child's result by workflow id,
	// for a use_website request that already ran.
	ActivityAgentResult = "agent.result"
)

// ReplayClass says how a tool call may be repeated after a failure.
type ReplayClass string

const (
	// ClassRead calls have no effect; they are retried with bounded backoff.
	ClassRead ReplayClass = "read"
	// ClassEffect calls change the world; they run at most once.
	ClassEffect ReplayClass = "effect"
	// ClassCustody calls manage a session and are idempotent.
	ClassCustody ReplayClass = "custody"
	// ClassHuman calls wait for a person.
	ClassHuman ReplayClass = "human"
)

// SharedQueue is the task queue every worker polls.
const SharedQueue = "durable-browser"

// CreateQueue is where a new session's browser.create is scheduled. Every
// worker polls it while it takes new sessions, and stops while it is past
// its --max-browsers or --latency-bound, so another worker takes them.
const CreateQueue = "durable-browser-create"
