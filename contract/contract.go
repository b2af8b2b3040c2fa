package contract

import (
	"encoding/json"
	"sync"
)

// Tool is one tool as a model sees it, in a neutral form that renders to any
// model API's tool list (see OpenAITools and AnthropicTools).
type Tool struct {
	Name string `json:"name"`
	// Description is written for a model: what the tool is for, then how it works.
	Description string `json:"description"`
	// Schema is the input's JSON Schema (draft 2020-12). It is the
	// contract: Validate checks calls against exactly this.
	Schema json.RawMessage `json:"schema"`
	// Class says how a call may be repeated after a failure.
	Class ReplayClass `json:"class"`
	// Activity is the stable activity name that serves the tool. For the
	// human class it is the notify activity the workflow step calls.
	Activity string `json:"activity"`
}

// Shared limits, named so the schemas and their descriptions agree.
const (
	maxIDChars       = 34
	maxURLChars      = 2048
	maxSelectorChars = 1000
	maxTextChars     = 10000
	maxPathChars     = 4096
	maxOffset        = 10_000_000
	minBudget        = 500
	maxBudget        = 30_000
	maxFindChars     = 200
	maxWaitMS        = 10000
	maxScrollPx      = 100000
	maxClipPx        = 100000
	maxInstruction   = 2000
	maxConditionText = 500
	maxQueryChars    = 200
	maxKeyChars      = 64
	maxSelectValues  = 50
)

// idPattern accepts an id as a snapshot prints it, with or without brackets.
const idPattern = `^\[?[A-Za-z0-9_.:-]{1,32}\]?$`

// httpURLPattern is the start of an absolute http(s) URL.
const httpURLPattern = `^[Hh][Tt][Tt][Pp][Ss]?://`

// optionalIDPattern also accepts a blank id, which screenshot treats as not given.
const optionalIDPattern = `^(\s*|\[?[A-Za-z0-9_.:-]{1,32}\]?)$`

func idProp(desc string) schemaMap {
	return schemaWith(schemaString(desc, 1, maxIDChars), "pattern", idPattern)
}

// LocatorOps are the run ops that act on one element, given by id or by
// locator (exactly one of them); press and scroll take at most one.
var LocatorOps = []string{"click", "hover", "fill", "type", "select", "check", "uncheck"}

// locatorSchema is where an element may be named by what a person sees
// instead of an id: one form per object.
func locatorSchema() schemaMap {
	str := func(desc string) schemaMap { return schemaString(desc, 1, maxConditionText) }
	return schemaMap{
		"description": "Find the element on the page as it is now, instead of an id: {role, name?}, {label}, {text}, " +
			"{placeholder} or {testid}. Names and text match whole (case and spacing ignored), else as a part; exactly one " +
			"visible element must match, else the action is refused with the candidates and their ids.",
		"oneOf": []any{
			schemaObject(schemaMap{
				"role": schemaString(`Role as the snapshot prints it, e.g. "button", "link", "textbox", "checkbox".`, 1, 64),
				"name": str("Its name as the snapshot prints it."),
			}, "role"),
			schemaObject(schemaMap{"label": str("The label of a form field.")}, "label"),
			schemaObject(schemaMap{"text": str("The element's text or name.")}, "text"),
			schemaObject(schemaMap{"placeholder": str("A field's placeholder text.")}, "placeholder"),
			schemaObject(schemaMap{"testid": str("The element's data-testid attribute, exactly.")}, "testid"),
		},
	}
}

// actionSchemas describes each run action: its op and its fields, one
// closed object per op so a mistake is reported against the op meant.
func actionSchemas() []any {
	op := func(name string) schemaMap { return schemaMap{"type": "string", "const": name} }
	id := idProp(`Element id from the latest snapshot, e.g. "5" or "[5]". Give id or locator.`)
	loc := locatorSchema()
	action := func(name string, props schemaMap, required ...string) schemaMap {
		props["op"] = op(name)
		return schemaObject(props, append([]string{"op"}, required...)...)
	}
	scroll := action("scroll", schemaMap{
		"id":      idProp("Scroll this element into view."),
		"locator": schemaWith(locatorSchema(), "description", "Scroll the one element this finds into view (instead of id)."),
		"dx":      schemaInteger("Scroll the page right by this many CSS pixels (negative: left).", -maxScrollPx, maxScrollPx),
		"dy":      schemaInteger("Scroll the page down by this many CSS pixels (negative: up).", -maxScrollPx, maxScrollPx),
	})
	scroll["minProperties"] = 2
	wait := action("wait", schemaMap{
		"text":    schemaString("Wait until this text is on the page.", 1, maxConditionText),
		"id":      idProp("Wait until this element is visible."),
		"locator": schemaWith(locatorSchema(), "description", "Wait until exactly one visible element matches this."),
		"url":     schemaString("Wait until the URL matches this pattern (* matches anything).", 1, maxURLChars),
		"load":    schemaWith(schemaBool("Wait for the page's load event (only true)."), "const", true),
		"ms":      schemaInteger("Wait this many milliseconds.", 1, maxWaitMS),
	})
	wait["minProperties"], wait["maxProperties"] = 2, 2
	return []any{
		action("click", schemaMap{
			"id":      id,
			"locator": loc,
			"button":  schemaEnum("Mouse button; default left.", "left", "right", "middle"),
			"count":   schemaInteger("Clicks; 2 for a double click.", 1, 3),
		}),
		action("hover", schemaMap{"id": id, "locator": loc}),
		action("fill", schemaMap{
			"id":      id,
			"locator": loc,
			"value":   schemaString("Replaces the field's value. May name a secret as {{secret:NAME}}.", 0, maxTextChars),
		}, "value"),
		action("type", schemaMap{
			"id":       id,
			"locator":  loc,
			"text":     schemaString("Typed key by key after the current value. May name a secret as {{secret:NAME}}.", 1, maxTextChars),
			"delay_ms": schemaInteger("Pause between keys.", 0, 1000),
		}, "text"),
		action("press", schemaMap{
			"key":     schemaString(`A key or combination, e.g. "Enter", "Escape", "Control+A".`, 1, maxKeyChars),
			"id":      idProp("Focus this element from the latest snapshot before pressing; default the focused element."),
			"locator": schemaWith(locatorSchema(), "description", "Focus the one element this finds before pressing (instead of id)."),
		}, "key"),
		action("select", schemaMap{
			"id":      id,
			"locator": loc,
			"values":  schemaWith(schemaMap{"type": "array", "items": schemaString("", 1, 1000)}, "minItems", 1, "maxItems", maxSelectValues, "description", "Option labels or values to select."),
		}, "values"),
		action("check", schemaMap{"id": id, "locator": loc}),
		action("uncheck", schemaMap{"id": id, "locator": loc}),
		scroll,
		action("goto", schemaMap{"url": schemaWith(schemaString("Absolute http(s) URL.", 1, maxURLChars), "pattern", httpURLPattern)}, "url"),
		action("back", schemaMap{}),
		action("forward", schemaMap{}),
		action("reload", schemaMap{}),
		wait,
		action("switch_tab", schemaMap{"tab": schemaString(`Tab id from a result's tabs_opened, e.g. "t2". Ends the batch.`, 1, 32)}, "tab"),
		action("close_tab", schemaMap{"tab": schemaString("Tab id to close; default the active tab. Ends the batch.", 1, 32)}),
	}
}

// codeDescription tells a model what a code cell has and may do.
const codeDescription = "JavaScript run as the body of an async function (instead of actions). page has: goto(url), " +
	"snapshot({mode}) giving {text, url, title} with the same ids as the snapshot tool, click(id), fill(id, value), " +
	"type(id, text), press(key) or press(id, key), select(id, values), check(id), uncheck(id), scroll(id or {dy}) " +
	"(click, fill, type, select, check and uncheck also take a locator such as {role, name} in place of id), " +
	"wait(ms, text or {url|id|load}), text(id), attr(id, name), url(), title(), screenshot() giving an evidence claim " +
	"check, and eval(fn, ...args), which runs fn in the page with JSON arguments and result. Await page calls; they " +
	"run one at a time. Ids must be in the latest snapshot: after a click changes the page, call page.snapshot() " +
	"again. A failed call throws an Error whose code (such as stale_snapshot) you can catch. emit(value) adds to the " +
	"output; without emit the return value is the output; console.log lines come back too. {{secret:NAME}} works in " +
	"fill and type. Limits: 25 page calls, 64 KiB of code and of output JSON, timeout_s; no require, import, fetch " +
	"or timers. An uncaught error answers code_error with the stack."

// The code property's examples: paging a table, extracting rows as JSON.
const (
	codeExamplePaging = `for (;;) {
  const s = await page.snapshot();
  for (const m of s.text.matchAll(/row "([^"]+)"/g)) emit(m[1]);
  const next = s.text.match(/\[(\d+)\] link "Next"/);
  if (!next) break;
  await page.click(next[1]);
}`
	codeExampleRows = `return await page.eval(() =>
  [...document.querySelectorAll("tbody tr")].map(r => [...r.cells].map(c => c.innerText)))`
)

// registry is the one place a tool is declared: its name, activity,
// replay class, queue, argument type, schema, description, how its activity
// is called and how its answer is rendered for a model. Everything else
// (Validate, Decode, Definitions, the workflows' dispatch, the worker's
// registration test, the MCP server, the CLI) reads it from here. Built once.
var registry = sync.OnceValue(func() []toolSpec {
	return []toolSpec{
		{
			name: ToolSnapshot, activity: ActivitySnapshot, class: ClassRead, queue: QueueHost,
			args: argsOf[SnapshotArgs](), result: resultOf[SnapshotResult](),
			request:  func(c Call, a any) any { return SnapshotRequest{Call: c, Args: argValue[SnapshotArgs](a)} },
			model:    func(o *object, _ json.RawMessage, _ string) { dropCounts(o) },
			pageText: "text",
			desc: "See the page as a list of elements, to decide what to do next. Each element you can act on has an id like [5] " +
				"for run, screenshot and browser_upload. An id stays with its element while the page shows the same document; " +
				"after the page navigates, take a new snapshot. " +
				`mode "interactive" lists only actionable elements. A page over the budget (about 4,000 tokens) is answered with an ` +
				"outline: headings and landmarks, how many actionable elements of which roles each holds and the first few; read one " +
				"with scope (a heading's id reads its section), or get only the elements matching find (name or text) and role. " +
				"Not evidence: cite with browser_read or screenshot.",
			schema: schemaObject(schemaMap{
				"mode":   schemaEnum("full (default) or interactive.", "full", "interactive"),
				"scope":  idProp(`Show only this element's subtree, e.g. "[12]".`),
				"offset": schemaInteger("Page through a cut snapshot: pass the previous result's next_offset (1 is the first line).", 0, maxOffset),
				"since": schemaInteger("An earlier snapshot's epoch: show only the lines added (+), removed (-) and changed (~) since, "+
					"or the whole page saying why when it navigated.", 1, maxOffset),
				"budget": schemaInteger("The most tokens the answer may take (default about 4,000); a page over it is answered with an outline.", minBudget, maxBudget),
				"find": schemaString("Only the elements whose name or text holds this (any case), or matches it written as /regex/, "+
					"each with its id under the heading or landmark it is in.", 1, maxFindChars),
				"role": schemaString(`Only elements of this role as the snapshot prints it, e.g. "button", "link", "textbox".`, 1, 64),
			}),
		},
		{
			name: ToolRun, activity: ActivityRun, class: ClassEffect, queue: QueueHost,
			args: argsOf[RunArgs](), result: resultOf[RunResult](),
			request:  func(c Call, a any) any { return RunRequest{Call: c, Args: argValue[RunArgs](a)} },
			model:    modelRun,
			pageText: "observed.text",
			desc: "Act on the page. Give actions: a batch (click, fill, type, press, select, check, scroll, navigate, wait, switch " +
				"or close tabs), each naming its element by an id from the latest snapshot or by a locator ({role, name}, {label}, " +
				"{text}, {placeholder}, {testid}) found on the page as it is when the action runs; a stale id refuses the whole " +
				"batch and nothing happens, else actions run in order and stop at the first failure, saying how many completed. " +
				"Or give code: JavaScript with a page object, for loops, branches and extraction in one call instead of many. " +
				"The result gives the URL and title afterwards. A run is never retried: on effect_unknown, look at the page " +
				"before repeating it.",
			schema: schemaObject(schemaMap{
				"actions": schemaMap{
					"type": "array", "minItems": 1, "maxItems": MaxActions,
					"description": "Actions in order, each an object with op, e.g. [{\"op\":\"fill\",\"id\":\"2\",\"value\":\"a@b.c\"},{\"op\":\"click\",\"id\":\"5\"}].",
					"items":       schemaMap{"oneOf": actionSchemas()},
				},
				"observe": schemaMap{
					"description": "Also return what the actions changed on the page (a snapshot's changes, whose ids act next), " +
						"so acting and looking is one call: true or \"full\" in full mode, \"interactive\" for only the actionable " +
						"elements (the least to read after a navigation). Not with code.",
					"oneOf": []any{schemaBool(""), schemaEnum("", string(ObserveFull), string(ObserveInteractive))},
				},
				"code":      schemaWith(schemaString(codeDescription, 1, MaxCodeBytes), "examples", []any{codeExamplePaging, codeExampleRows}),
				"timeout_s": schemaInteger("A code cell's deadline in seconds; default 120.", 1, MaxCodeTimeoutS),
			}),
		},
		{
			name: ToolScreenshot, activity: ActivityScreenshot, class: ClassRead, queue: QueueHost,
			args: argsOf[ScreenshotArgs](), result: resultOf[ScreenshotResult](),
			request: func(c Call, a any) any { return ScreenshotRequest{Call: c, Args: argValue[ScreenshotArgs](a)} },
			desc: "Capture how the page looks, filed as evidence: to check a layout, read a chart, or show a result. " +
				"The viewport by default; or the full page, a clip in CSS pixels, an element by id from the latest snapshot (or a locator), " +
				"or one element by CSS selector. PNG by default, jpeg with quality for smaller files. At most 2,000 px on the " +
				"long edge; a large image comes back by reference.",
			schema: schemaObject(schemaMap{
				"full_page": schemaBool("Capture the whole scrollable page."),
				"clip": schemaWith(schemaObject(schemaMap{
					"x":      schemaNumber("", 0, maxClipPx),
					"y":      schemaNumber("", 0, maxClipPx),
					"width":  schemaNumber("", 0, maxClipPx),
					"height": schemaNumber("", 0, maxClipPx),
				}, "x", "y", "width", "height"), "description", "A region in CSS pixels from the page's top-left corner."),
				"id":       schemaWith(schemaString("Capture this element from the latest snapshot.", 0, maxIDChars), "pattern", optionalIDPattern),
				"locator":  schemaWith(locatorSchema(), "description", "Capture the one element this finds on the page (instead of id)."),
				"selector": schemaString("Capture the one element this CSS selector matches.", 0, maxSelectorChars),
				"type":     schemaEnum("png (default) or jpeg.", "png", "jpeg"),
				"quality":  schemaInteger("JPEG quality; only with type jpeg.", 1, 100),
			}),
		},
		{
			name: ToolRead, activity: ActivityRead, class: ClassRead, queue: QueueHost,
			pageText: "content",
			args:     argsOf[ReadArgs](), result: resultOf[ReadResult](),
			request: func(c Call, a any) any { return ReadRequest{Call: c, Args: argValue[ReadArgs](a)} },
			desc: "Read the page's content to quote, summarise or cite it, filed as evidence. markdown (default) gives the main " +
				"content; text, html, url and title are also available. Long content is cut and the result says so.",
			schema: schemaObject(schemaMap{
				"what": schemaEnum("markdown (default), text, html, url or title.", "markdown", "text", "html", "url", "title"),
			}),
		},
		{
			name: ToolCheck, activity: ActivityCheck, class: ClassRead, queue: QueueHost,
			args: argsOf[CheckArgs](), result: resultOf[CheckResult](),
			request: func(c Call, a any) any { return CheckRequest{Call: c, Args: argValue[CheckArgs](a)} },
			desc: "Check that the page is as expected, to confirm a step worked before moving on: the URL matches a pattern, " +
				"text is visible, an element is visible (by id or locator), no console errors, no failed requests. Give at " +
				"least one expectation. The verdict says passed only when every expectation holds, lists the failed checks " +
				"with what was found instead, and warns of errors nobody asked about; it is filed as evidence. Acts on nothing.",
			schema: schemaObject(schemaMap{
				"url":                schemaString("The page's URL must match this pattern (* matches anything; without *, a part of the URL).", 1, maxURLChars),
				"expect_text":        schemaString("This text must be in the page's visible text (exact, case-sensitive).", 1, maxConditionText),
				"expect_id":          idProp("This element from the latest snapshot must be visible. Give expect_id or expect_locator."),
				"expect_locator":     schemaWith(locatorSchema(), "description", "Exactly one visible element must match this, e.g. {\"role\":\"heading\",\"name\":\"Order placed\"}."),
				"no_console_errors":  schemaBool("The page logged no console errors or uncaught exceptions since it loaded."),
				"no_failed_requests": schemaBool("No request of the page failed or answered 4xx/5xx since it loaded."),
			}),
		},
		{
			name: ToolDownloads, activity: ActivityDownloads, class: ClassRead, queue: QueueHost,
			args: argsOf[DownloadsArgs](), result: resultOf[DownloadsResult](),
			request: func(c Call, _ any) any { return DownloadsRequest{Call: c} },
			desc: "List the files this browser has downloaded, with name, size and SHA-256, each filed as evidence. " +
				"Use it after a run that started a download.",
			schema: schemaObject(schemaMap{}),
		},
		{
			name: ToolUpload, activity: ActivityUpload, class: ClassEffect, queue: QueueHost,
			args: argsOf[UploadArgs](), result: resultOf[UploadResult](),
			request: func(c Call, a any) any { return UploadRequest{Call: c, Args: argValue[UploadArgs](a)} },
			desc: "Choose a file in a file input, as a person picking it would. id is the input's id from the latest snapshot " +
				"(or a locator finds it); " +
				"path is a file on the worker. Nothing is submitted: submit with run afterwards. Never retried.",
			schema: schemaObject(schemaMap{
				"id":      idProp("The file input's id from the latest snapshot. Give id or locator."),
				"locator": schemaWith(locatorSchema(), "description", "Find the file input instead of an id, e.g. {\"label\":\"Resume\"}."),
				"path":    schemaString("Path of the file to choose.", 1, maxPathChars),
			}, "path"),
		},
		{
			name: ToolRelease, activity: ActivityRelease, class: ClassCustody, queue: QueueHost,
			args: argsOf[ReleaseArgs](), result: resultOf[ReleaseResult](),
			desc:   "Close this browser when the task is done. Safe to repeat. A later browser call starts a fresh browser.",
			schema: schemaObject(schemaMap{}),
		},
		{
			name: ToolRelaunch, activity: ActivityRelaunch, class: ClassCustody, queue: QueueHost,
			args: argsOf[RelaunchArgs](), result: resultOf[RelaunchResult](),
			desc: "Replace this browser with a fresh one: with stealth against bot checks, a saved sign-in profile, or a visible " +
				"window. The old browser is closed and earlier ids no longer apply; take a snapshot next.",
			schema: schemaObject(schemaMap{
				"stealth": schemaBool("Mask automation signals."),
				"profile": schemaWith(schemaObject(schemaMap{
					"name": schemaWith(schemaString("Profile name: letters, digits, '.', '-', '_'.", 1, 64), "pattern", `^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`),
					"save": schemaBool("Keep sign-ins made in this session in the profile."),
				}, "name"), "description", "A saved sign-in to start from."),
				"headed": schemaBool("Show a browser window (where the worker has a display)."),
			}),
		},
		{
			name: ToolRequestHandoff, activity: ActivityNotify, class: ClassHuman, queue: QueueHost,
			args: argsOf[HandoffArgs](), result: resultOf[HandoffResult](),
			desc: "Ask a person to do a step only a person can do (a CAPTCHA, a sign-in with a second factor, an approval) and " +
				"wait until they finish, cancel, or the request expires. Say exactly what to do in instruction, and how to tell " +
				"it is done in completion_condition: text on the page, a URL pattern, or an element by role and name. " +
				"Meanwhile other browser calls answer waiting_for_human. The result gives the outcome, whether the condition " +
				"holds, and a fresh snapshot.",
			schema: schemaObject(schemaMap{
				"instruction": schemaString("What the person should do, in one or two sentences.", 1, maxInstruction),
				"completion_condition": schemaMap{
					"description": "How to tell the step is done: {text}, {url} or {role, name?}.",
					"oneOf": []any{
						schemaObject(schemaMap{"text": schemaString("Text that will be on the page.", 1, maxConditionText)}, "text"),
						schemaObject(schemaMap{"url": schemaString("URL pattern the page will match (* matches anything).", 1, maxURLChars)}, "url"),
						schemaObject(schemaMap{
							"role": schemaString(`Element role, e.g. "button", "heading".`, 1, 64),
							"name": schemaString("Element name.", 1, maxConditionText),
						}, "role"),
					},
				},
				"expires_in_s": schemaInteger("Seconds to wait; default 900.", 1, MaxHandoffExpiryS),
			}, "instruction", "completion_condition"),
		},
		{
			name: ToolWebFetch, activity: ActivityWebFetch, class: ClassRead, queue: QueueShared,
			pageText: "content",
			args:     argsOf[WebFetchArgs](), result: resultOf[WebFetchResult](),
			request: func(c Call, a any) any {
				return WebFetchRequest{SessionTag: c.Session.Tag, Args: argValue[WebFetchArgs](a)}
			},
			desc: "Read a public web page without the browser: quicker for articles, documentation and plain APIs that need no " +
				"sign-in or script. Gives markdown (default), or with format raw the bytes by reference; filed as evidence. " +
				"Only absolute http(s) URLs of public hosts.",
			schema: schemaObject(schemaMap{
				"url":    schemaWith(schemaString("Absolute http(s) URL.", 1, maxURLChars), "pattern", httpURLPattern),
				"format": schemaEnum("markdown (default) or raw.", "markdown", "raw"),
			}, "url"),
		},
		{
			name: ToolWebSearch, activity: ActivityWebSearch, class: ClassRead, queue: QueueShared,
			args: argsOf[WebSearchArgs](), result: resultOf[WebSearchResult](),
			request: func(c Call, a any) any {
				return WebSearchRequest{SessionTag: c.Session.Tag, Args: argValue[WebSearchArgs](a)}
			},
			desc: "Find pages on the web about a question. Gives up to n hits (default 10), each with title, URL and a short " +
				"snippet. Then read a hit with web_fetch or the browser.",
			schema: schemaObject(schemaMap{
				"query": schemaString("What to search for.", 1, maxQueryChars),
				"n":     schemaInteger("Number of hits; default 10.", 1, 25),
			}, "query"),
		},
	}
})

// definitions renders the registry as a model sees it; Definitions hands out copies.
var definitions = sync.OnceValue(func() []Tool {
	specs := registry()
	out := make([]Tool, 0, len(specs))
	for _, d := range specs {
		out = append(out, d.tool())
	}
	return out
})

// Definitions returns every tool, in a stable order. The result is a copy the
// caller may change.
func Definitions() []Tool {
	src := definitions()
	out := make([]Tool, len(src))
	for i, t := range src {
		t.Schema = append(json.RawMessage(nil), t.Schema...)
		out[i] = t
	}
	return out
}

// Lookup returns the tool with the given name (a copy the caller may
// change).
func Lookup(name string) (Tool, bool) {
	return toolOf(name)
}
