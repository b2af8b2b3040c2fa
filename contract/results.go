package contract

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Page is where a call left the browser.
type Page struct {
	// URL is scrubbed: no query values, fragment or userinfo.
	URL   string `json:"url"`
	Title string `json:"title"`
	// SessionS is how long the session's rented browser has run, in
	// seconds (its metered time); absent for browsers on the worker.
	SessionS int64 `json:"session_s,omitempty"`
	// PersonDrove is set on the first result after a person drove the
	// browser in the live view: the page may have changed and earlier
	// element ids were dropped.
	PersonDrove string `json:"person_drove,omitempty"`
}

// PageOf is the page itself. A result that embeds a Page answers it, so
// the page a result left the browser on is found without naming its type.
func (p *Page) PageOf() *Page { return p }

// PersonDroveNote is Page.PersonDrove's text.
const PersonDroveNote = "a person drove this browser in the live view since your last call: the page may have changed, and ids from earlier snapshots were dropped; take a snapshot before acting"

// SnapshotResult is a snapshot of the active tab.
type SnapshotResult struct {
	OK bool `json:"ok"`
	Page
	Observation
	// Viewport is the size the page is laid out at, e.g. "1280x720".
	Viewport string `json:"viewport,omitempty"`
}

// Size is what a result costs the model to read. Every answer a session
// gives (result or failure envelope) carries it as "size".
type Size struct {
	// Chars counts the characters (Unicode code points) of the answer's
	// JSON, without its size field.
	Chars int `json:"chars"`
	// Tokens estimates the tokens of the answer: one per four characters,
	// rounded up (a rough rule for English and JSON; a model's own
	// tokenizer may count 20-30% either way). A model fed ForModel of the
	// answer reads fewer, so this is an upper bound of what it reads.
	Tokens int `json:"tokens"`
}

// SizeOf measures a result's JSON.
func SizeOf(raw []byte) Size {
	n := utf8.RuneCount(raw)
	return Size{Chars: n, Tokens: (n + 3) / 4}
}

// EncodeAnswer encodes an answer as sessions give them: JSON without HTML
// escaping ("->" and fences would cost "\u003e" each), its size added as
// the last field (WithSize).
func EncodeAnswer(v any) (json.RawMessage, Size, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, Size{}, err
	}
	out, sz := WithSize(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	return out, sz, nil
}

// WithSize adds the size of a JSON object to it, as its last field. The
// size counts the object as it was, without the field itself. Anything but
// an object is returned as it is.
func WithSize(raw json.RawMessage) (json.RawMessage, Size) {
	sz := SizeOf(raw)
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) < 2 || trimmed[0] != '{' || trimmed[len(trimmed)-1] != '}' {
		return raw, sz
	}
	field := `"size":{"chars":` + strconv.Itoa(sz.Chars) + `,"tokens":` + strconv.Itoa(sz.Tokens) + `}}`
	body := trimmed[:len(trimmed)-1]
	out := make([]byte, 0, len(trimmed)+len(field)+1)
	out = append(out, body...)
	if len(bytes.TrimSpace(body)) > 1 {
		out = append(out, ',')
	}
	return append(out, field...), sz
}

// ToolUsage sums the answers of one tool in a session.
type ToolUsage struct {
	Calls  int `json:"calls"`
	Chars  int `json:"chars"`
	Tokens int `json:"tokens"`
}

// Changes says how a snapshot compares with an earlier one.
type Changes struct {
	// Since is the epoch compared against; absent for a run's own changes.
	Since int `json:"since,omitempty"`
	// Full: the text is the whole page, not its changes, for Reason (the
	// page navigated, the earlier snapshot is not kept).
	Full   bool   `json:"full,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Added, Removed and Changed count the lines shown with "+ ", "- " and
	// "~ " (absent: none).
	Added   int `json:"added,omitempty"`
	Removed int `json:"removed,omitempty"`
	Changed int `json:"changed,omitempty"`
	// Title: the page's title changed too (the result's title is the new one).
	Title bool `json:"title,omitempty"`
	// SamePage, on a run's changes: the run started on the page of the
	// latest snapshot or observation (same tab, document and URL) and ended
	// there, so the result's url is the one the caller last looked at.
	SamePage bool `json:"same_page,omitempty"`
}

// Tab is one open tab.
type Tab struct {
	ID     string `json:"id"`
	URL    string `json:"url"`
	Title  string `json:"title"`
	Active bool   `json:"active,omitempty"`
}

// Dialog is a dialog that appeared during a call and how it was answered.
type Dialog struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	Answer  string `json:"answer"`
}

// ActionFailure says which action of a batch failed and why.
type ActionFailure struct {
	Index  int    `json:"index"`
	Op     string `json:"op"`
	Reason string `json:"reason"`
}

// HeldRequest is a side-effecting request that waited for a person.
type HeldRequest struct {
	HoldID string `json:"hold_id"`
	Method string `json:"method"`
	Origin string `json:"origin"`
	Path   string `json:"path"`
	// Decision: approved, denied, expired (nobody decided in time), or
	// blocked (refused unasked: too many holds wait already, or the
	// decision read back named another request).
	Decision string `json:"decision"`
	By       string `json:"by,omitempty"`
}

// RunResult reports a batch that ran.
type RunResult struct {
	OK bool `json:"ok"`
	Page
	Completed      int            `json:"completed"`
	Total          int            `json:"total"`
	Failed         *ActionFailure `json:"failed,omitempty"`
	TabsOpened     []Tab          `json:"tabs_opened,omitempty"`
	Dialogs        []Dialog       `json:"dialogs,omitempty"`
	ConsoleErrors  []string       `json:"console_errors,omitempty"`
	FailedRequests []string       `json:"failed_requests,omitempty"`
	Sent           []SentRequest  `json:"sent,omitempty"`
	Held           []HeldRequest  `json:"held,omitempty"`
	// Blocked lists requests the worker's reach guard (or the session's
	// allow_hosts) stopped before they left the browser.
	Blocked []BlockedRequest `json:"blocked,omitempty"`
	// Downloads names the files whose download began during the run (a
	// goto or a click whose answer is a file to save, not a page):
	// browser_downloads lists and files them once they are saved.
	Downloads []string `json:"downloads,omitempty"`
	// NotListed counts what happened past the 50 items each of the lists
	// above keeps: a list is whole only when this does not name it.
	NotListed *NotListed `json:"not_listed,omitempty"`
	// Observed is the snapshot the batch left, when the call asked to
	// observe: the changes it made, or the whole page saying why.
	Observed *Observation `json:"observed,omitempty"`
	// Loading says an action navigated and the answer did not wait for the
	// new page's load event: its document was parsed, and what it still
	// fetched (images, late scripts) may be missing from Observed. A wait
	// with load: true waits for it.
	Loading bool `json:"loading,omitempty"`
	// A code cell's output (its emitted values as an array, or its return
	// value), page calls and console lines (bounded). Absent for a batch.
	Output    json.RawMessage `json:"output,omitempty"`
	PageCalls *PageCalls      `json:"page_calls,omitempty"`
	Console   []string        `json:"console,omitempty"`
}

// NotListed counts the items of a run's lists that were not kept, one
// count a list.
type NotListed struct {
	Dialogs        int `json:"dialogs,omitempty"`
	ConsoleErrors  int `json:"console_errors,omitempty"`
	FailedRequests int `json:"failed_requests,omitempty"`
	Sent           int `json:"sent,omitempty"`
	Held           int `json:"held,omitempty"`
	Blocked        int `json:"blocked,omitempty"`
	Downloads      int `json:"downloads,omitempty"`
	TabsOpened     int `json:"tabs_opened,omitempty"`
}

// OrNil is n, or nil when it counts nothing, for an answer that omits it.
func (n NotListed) OrNil() *NotListed {
	if n == (NotListed{}) {
		return nil
	}
	return &n
}

// PageCalls counts a code cell's page calls: made (attempted within the
// limit), completed and failed.
type PageCalls struct {
	Made      int `json:"made"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
}

// Observation is a snapshot's page as text: a snapshot result's, and the
// one a run left (without what the run result already says: ok, url,
// title).
type Observation struct {
	// Text is the compact tree, one element a line with bracketed ids.
	Text        string `json:"text"`
	Epoch       int    `json:"epoch"`
	Elements    int    `json:"elements"`
	Interactive int    `json:"interactive"`
	Truncated   bool   `json:"truncated,omitempty"`
	// Cut says what was left out and how to see it.
	Cut string `json:"cut,omitempty"`
	// NextOffset, when set, is the offset that shows the next page.
	NextOffset int `json:"next_offset,omitempty"`
	// Changes is set for a snapshot since an earlier one (or a run's
	// observation): Text then holds only the changed lines, unless Full.
	Changes *Changes `json:"changes,omitempty"`
}

// BlockedRequest is one request stopped before it left the browser, and the
// rule that stopped it: metadata, service, loopback, private, special,
// invalid, unresolved, allow_list, secret (it carried a typed secret
// toward an origin the secret does not belong to; Secret names it), or
// certificate (a local browser's egress proxy found the site's TLS
// certificate did not verify).
type BlockedRequest struct {
	Method string `json:"method"`
	Origin string `json:"origin"`
	Rule   string `json:"rule"`
	// Secret is the secret's name, never its value. Its key is not
	// "secret": results are redacted as JSON, where a "secret" key's value
	// is taken for a credential and hidden.
	Secret string `json:"secret_name,omitempty"`
}

// ClaimCheck is what a result carries instead of a large body: where it is,
// its hash, and an inline copy only when that fits the budget.
type ClaimCheck struct {
	Key         string `json:"key"`
	ReceiptKey  string `json:"receipt_key"`
	SHA256      string `json:"sha256"`
	Size        int64  `json:"size"`
	ContentType string `json:"content_type"`
	// Inline is the body itself when it fits the inline budget.
	Inline string `json:"inline,omitempty"`
	// InlineEncoding is "" for text, "base64" for an inlined image.
	InlineEncoding string `json:"inline_encoding,omitempty"`
}

// Receipt records one read as filed. It is stored as JSON beside the body.
type Receipt struct {
	Tool string `json:"tool"`
	// Args are the call's arguments, redacted when filed (evidence.Filer).
	Args         json.RawMessage `json:"args,omitempty"`
	Status       string          `json:"status"` // "ok" or a failure code
	RequestedURL string          `json:"requested_url,omitempty"`
	FinalURL     string          `json:"final_url,omitempty"`
	Title        string          `json:"title,omitempty"`
	HTTPStatus   int             `json:"http_status,omitempty"`
	ContentType  string          `json:"content_type"`
	SHA256       string          `json:"sha256"` // of the body as filed
	Size         int64           `json:"size"`
	Extractor    string          `json:"extractor,omitempty"`
	// Cut, when set, says the body is the first part of what was read,
	// cut at a cap, and how large the whole was.
	Cut        string    `json:"cut,omitempty"`
	SessionTag string    `json:"session_tag,omitempty"`
	WorkflowID string    `json:"workflow_id,omitempty"`
	RunID      string    `json:"run_id,omitempty"`
	ActivityID string    `json:"activity_id,omitempty"`
	Time       time.Time `json:"time"`
	BodyKey    string    `json:"body_key"`
	// Recording, for a session being recorded, is where the moment the
	// read was taken falls in its recording, so the receipt links to its
	// second of video (docs/recording.md).
	Recording *RecordingMark `json:"recording,omitempty"`
}

// RecordingMark is a moment of a session's recording: the recording's id
// and the milliseconds since it started.
type RecordingMark struct {
	Recording string `json:"recording"`
	OffsetMS  int64  `json:"offset_ms"`
}

// ScreenshotResult is a filed screenshot; the image rides inline only when small.
type ScreenshotResult struct {
	OK bool `json:"ok"`
	Page
	Evidence ClaimCheck `json:"evidence"`
	Type     string     `json:"type"`
	Width    int        `json:"width"`
	Height   int        `json:"height"`
	Region   Rect       `json:"region"`
	DPR      float64    `json:"dpr"`
	// Cut, when set, says the image shows only part of the region asked
	// (its top, its left, or its top left): shrinking all of it would have
	// made its text too small to read.
	Cut *ScreenshotCut `json:"cut,omitempty"`
}

// ScreenshotCut says what a screenshot left out and how to see it.
type ScreenshotCut struct {
	// Asked is the region asked for, in CSS pixels; the result's region is
	// its top-left part.
	Asked Rect `json:"asked"`
	// NextClip is the clip that shows the part right below this one; when
	// only the width was cut, the part right of it.
	NextClip Rect `json:"next_clip"`
	// RightClip, set when the width was cut, is the clip that shows the
	// part right of this one.
	RightClip *Rect  `json:"right_clip,omitempty"`
	Note      string `json:"note"`
}

// Rect is a region in CSS pixels.
type Rect struct {
	X      float64 `json:"x"`
	Y      float64 `json:"y"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
}

// ReadResult is a filed read of the page.
type ReadResult struct {
	OK bool `json:"ok"`
	Page
	What string `json:"what"`
	// Status is the HTTP status the document was served with; absent when
	// not known (a page the browser made without a response of its own).
	Status    int    `json:"status,omitempty"`
	Content   string `json:"content"`
	Extractor string `json:"extractor,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
	// FullLength is the length in characters of all that was read (the
	// text, the document's HTML), not of content or of what was filed;
	// for markdown of a page whose HTML was over the read cap, of the
	// markdown of the part converted (Note says so).
	FullLength int `json:"full_length"`
	// FiledCut, set only when the evidence is not all that was read, is
	// the cap in bytes (8 MiB) it was cut at: a text or HTML over it is
	// filed from its first part, and markdown is converted from its HTML's
	// first part. Note says what was kept.
	FiledCut int    `json:"filed_cut,omitempty"`
	Note     string `json:"note,omitempty"`
	// Evidence is what was filed: whole unless FiledCut is set.
	Evidence ClaimCheck `json:"evidence"`
	// Injection is set when the page judge found the page writing
	// instructions to AI readers.
	Injection *InjectionFlag `json:"injection,omitempty"`
}

// CheckResult is browser_check's verdict and the evidence for it. Passed
// is true only when every expectation held; a check that expects nothing is
// refused, never passed.
type CheckResult struct {
	OK bool `json:"ok"`
	Page
	Passed bool `json:"passed"`
	// Failed names the checks that did not hold, in the order of Checks.
	Failed []string `json:"failed,omitempty"`
	// Checks is every expectation with what was found.
	Checks []CheckItem `json:"checks"`
	// Warnings are what the page shows amiss that was not asked about
	// (console errors, failed requests, a page still loading).
	Warnings []string `json:"warnings,omitempty"`
	// Evidence is the verdict as filed (JSON).
	Evidence ClaimCheck `json:"evidence"`
}

// CheckItem is one expectation of a check and what was found.
type CheckItem struct {
	// Check is url, expect_text, expect_id, expect_locator,
	// no_console_errors or no_failed_requests.
	Check    string `json:"check"`
	Passed   bool   `json:"passed"`
	Expected string `json:"expected"`
	// Found is the evidence: the URL, the text around the match, the
	// element's line, the candidates, or the errors; absent when there was
	// nothing to show (the text is not on the page, the element is gone).
	Found string `json:"found,omitempty"`
}

// Download is one finished download, filed. Size and SHA256 are those of
// the body as filed (Evidence's): a text file is redacted before it is
// filed, and Redacted says redaction changed it. A binary file is filed as
// captured unless it holds a secret typed in the session: then nothing is
// filed, Evidence and SHA256 are absent and Withheld says why.
type Download struct {
	Name     string     `json:"name"`
	Size     int64      `json:"size"`
	SHA256   string     `json:"sha256,omitempty"`
	Evidence ClaimCheck `json:"evidence,omitzero"`
	Redacted bool       `json:"redacted,omitempty"`
	Withheld string     `json:"withheld,omitempty"`
	// NotSaved says why a download the page began was cancelled, not
	// saved (too many in the session, too large): it has no size, digest
	// or evidence.
	NotSaved string `json:"not_saved,omitempty"`
}

// DownloadsResult lists the session's downloads.
type DownloadsResult struct {
	OK        bool       `json:"ok"`
	Downloads []Download `json:"downloads"`
}

// UploadResult confirms an upload.
type UploadResult struct {
	OK bool `json:"ok"`
	Page
	Name string `json:"name"`
	// Bytes is the file's size. It is not named size: every answer ends
	// with a size of its own (WithSize), and one key must not mean two
	// things.
	Bytes int64 `json:"bytes"`
}

// UnmarshalJSON also reads results recorded before the file's size was
// named bytes, when it was "size": a number (an answer of then carried a
// second "size", the answer's own object, after it; that one is not the
// file's and is skipped).
func (r *UploadResult) UnmarshalJSON(b []byte) error {
	type plain UploadResult
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*r = UploadResult(p)
	if r.Bytes == 0 {
		if n, ok := numberMember(b, "size"); ok {
			r.Bytes = n
		}
	}
	return nil
}

// numberMember is the first member of the JSON object b named key (as
// encoding/json matches names: case-insensitively) whose value is an
// integer.
func numberMember(b []byte, key string) (int64, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0, false
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return 0, false
		}
		name, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return 0, false
		}
		var n int64
		if strings.EqualFold(name, key) && json.Unmarshal(v, &n) == nil {
			return n, true
		}
	}
	return 0, false
}

// WebFetchResult is a fetched public page.
type WebFetchResult struct {
	OK          bool       `json:"ok"`
	URL         string     `json:"url"`
	FinalURL    string     `json:"final_url"`
	Status      int        `json:"status"`
	ContentType string     `json:"content_type"`
	Title       string     `json:"title,omitempty"`
	Content     string     `json:"content,omitempty"`
	Truncated   bool       `json:"truncated,omitempty"`
	IsPDF       bool       `json:"is_pdf,omitempty"`
	Evidence    ClaimCheck `json:"evidence,omitzero"` // absent when nothing was filed (a PDF read as markdown, an empty page)
	// Injection is set when the page judge found the page writing
	// instructions to AI readers.
	Injection *InjectionFlag `json:"injection,omitempty"`
}

// SearchHit is one web search result.
type SearchHit struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet"`
	// Withheld says why the snippet (and title) were left out: the page
	// judge found the hit writing instructions to AI readers.
	Withheld string `json:"withheld,omitempty"`
}

// WebSearchResult is a list of hits and the source that answered.
type WebSearchResult struct {
	OK       bool        `json:"ok"`
	Via      string      `json:"via"`
	Hits     []SearchHit `json:"hits"`
	Evidence ClaimCheck  `json:"evidence"`
}
