package contract

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The argument types below are what a model sends for each tool, and what
// the activities receive inside a request that also carries the session.
// Zero values mean "not given"; activities apply the documented defaults.

// SnapshotArgs are snapshot's arguments.
type SnapshotArgs struct {
	// Mode is "full" (default) or "interactive" (actionable elements only).
	Mode string `json:"mode,omitempty"`
	// Scope is an id from the latest snapshot, such as "[12]", to show one subtree.
	Scope string `json:"scope,omitempty"`
	// Offset continues a snapshot that was cut at its size bound.
	Offset int `json:"offset,omitempty"`
	// Since, an earlier snapshot's epoch, asks only for what changed.
	Since int `json:"since,omitempty"`
	// Budget bounds the answer in tokens; a page over it is answered with
	// an outline of its regions. 0 means the default (about 4,000).
	Budget int `json:"budget,omitempty"`
	// Find asks only for the elements whose name or text holds it (any
	// case), or matches it when written /regex/.
	Find string `json:"find,omitempty"`
	// Role asks only for the elements of this role, e.g. "button".
	Role string `json:"role,omitempty"`
}

// RunArgs are run's arguments: exactly one of Actions or Code.
type RunArgs struct {
	// Actions is the batch, a JSON array of action objects. The run
	// activity checks it with Validate before the driver decodes it: the
	// schema is the one definition of which ops exist and what they take.
	Actions json.RawMessage `json:"actions,omitempty"`
	// Observe asks for the changes the batch made to the page, as a
	// snapshot in the result (and the latest snapshot, whose ids act), in
	// full mode or only the actionable elements.
	Observe Observe `json:"observe,omitempty"`
	// Code is JavaScript for a code cell (see docs/tools.md).
	Code string `json:"code,omitempty"`
	// TimeoutS is a code cell's deadline in seconds (default
	// DefaultCodeTimeoutS, at most MaxCodeTimeoutS).
	TimeoutS int `json:"timeout_s,omitempty"`
}

// Observe is run's observe argument: "" (none), ObserveFull or
// ObserveInteractive. JSON true means ObserveFull and false none, as before
// the modes existed.
type Observe string

const (
	ObserveFull        Observe = "full"
	ObserveInteractive Observe = "interactive"
)

// MarshalJSON writes full mode as true, as workers that predate the modes
// read it.
func (o Observe) MarshalJSON() ([]byte, error) {
	switch o {
	case "":
		return []byte("false"), nil
	case ObserveFull:
		return []byte("true"), nil
	}
	return json.Marshal(string(o))
}

// UnmarshalJSON takes true, false, "full" or "interactive".
func (o *Observe) UnmarshalJSON(b []byte) error {
	switch string(bytes.TrimSpace(b)) {
	case "true":
		*o = ObserveFull
		return nil
	case "false", "null":
		*o = ""
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("observe: give true, \"full\" or \"interactive\"")
	}
	switch Observe(s) {
	case ObserveFull, ObserveInteractive:
		*o = Observe(s)
		return nil
	}
	return fmt.Errorf("observe: %q is not a mode; give true, \"full\" or \"interactive\"", clipName(s))
}

// Check says what the schema cannot: one of actions or code, timeout_s
// only with code and observe only with actions.
func (a RunArgs) Check() *Failure {
	switch {
	case len(a.Actions) > 0 && a.Code != "":
		return Fail(CodeRefused, "run: give either actions (a batch) or code (a code cell), not both")
	case len(a.Actions) == 0 && a.Code == "":
		return Fail(CodeRefused, "run: give actions (a batch of actions) or code (JavaScript for a code cell)")
	case a.TimeoutS != 0 && a.Code == "":
		return Fail(CodeRefused, "run.timeout_s: only a code cell takes timeout_s; leave it out of a batch")
	case a.Observe != "" && a.Code != "":
		return Fail(CodeRefused, "run.observe: a code cell observes with page.snapshot() and returns what it needs; leave observe out")
	}
	return nil
}

// Clip is a region in CSS pixels from the page's top-left corner.
type Clip struct {
	X      float64 `json:"x"`
	Y      float64 `json:"y"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
}

// ScreenshotArgs are screenshot's arguments. With none set it captures the viewport.
type ScreenshotArgs struct {
	FullPage bool     `json:"full_page,omitempty"`
	Clip     *Clip    `json:"clip,omitempty"`
	ID       string   `json:"id,omitempty"`
	Locator  *Locator `json:"locator,omitempty"`
	Selector string   `json:"selector,omitempty"`
	// Type is "png" (default) or "jpeg".
	Type string `json:"type,omitempty"`
	// Quality is the JPEG quality, 1-100; only with Type "jpeg".
	Quality int `json:"quality,omitempty"`
}

// ScreenshotQualityNeedsJPEG is why a quality given for a PNG is refused:
// PNG is lossless, and a quality silently dropped would mislead.
const ScreenshotQualityNeedsJPEG = `quality applies to jpeg only; drop quality or set type "jpeg"`

// Check holds what the schema leaves to prose: a quality needs type "jpeg".
func (a ScreenshotArgs) Check() *Failure {
	if a.Quality != 0 && a.Type != "jpeg" {
		return Fail(CodeRefused, "screenshot.quality: %s. Fix the arguments and call screenshot again.", ScreenshotQualityNeedsJPEG)
	}
	return nil
}

// ReadArgs are browser_read's arguments.
type ReadArgs struct {
	// What is "markdown" (default), "text", "html", "url" or "title".
	What string `json:"what,omitempty"`
}

// DownloadsArgs are browser_downloads's arguments (none).
type DownloadsArgs struct{}

// Locator finds one element on the page as it is when the action runs,
// by what a person sees instead of an id. Exactly one form is set: Role
// (with an optional Name), Label, Text, Placeholder or TestID.
type Locator struct {
	Role        string `json:"role,omitempty"`
	Name        string `json:"name,omitempty"`
	Label       string `json:"label,omitempty"`
	Text        string `json:"text,omitempty"`
	Placeholder string `json:"placeholder,omitempty"`
	TestID      string `json:"testid,omitempty"`
}

// UploadArgs are browser_upload's arguments.
type UploadArgs struct {
	// ID is the file input's id from the latest snapshot; or Locator.
	ID      string   `json:"id,omitempty"`
	Locator *Locator `json:"locator,omitempty"`
	// Path is a file the worker can read.
	Path string `json:"path"`
}

// CheckArgs are browser_check's arguments: each field set is one
// expectation, and at least one must be set (Validate refuses a check that
// expects nothing, since a look alone proves nothing).
type CheckArgs struct {
	// URL is a pattern the page's URL must match (* matches anything; without *, a part of the URL).
	URL string `json:"url,omitempty"`
	// ExpectText must be in the page's visible text.
	ExpectText string `json:"expect_text,omitempty"`
	// ExpectID is an element of the latest snapshot that must be visible; or ExpectLocator.
	ExpectID      string   `json:"expect_id,omitempty"`
	ExpectLocator *Locator `json:"expect_locator,omitempty"`
	// NoConsoleErrors and NoFailedRequests: the document the page shows
	// logged none since it loaded.
	NoConsoleErrors  bool `json:"no_console_errors,omitempty"`
	NoFailedRequests bool `json:"no_failed_requests,omitempty"`
}

// Expects says whether the check expects anything at all.
func (a CheckArgs) Expects() bool {
	return a.URL != "" || a.ExpectText != "" || a.ExpectID != "" || a.ExpectLocator != nil || a.NoConsoleErrors || a.NoFailedRequests
}

// ReleaseArgs are browser_release's arguments (none).
type ReleaseArgs struct{}

// RelaunchArgs are browser_relaunch's arguments; nil keeps the session's setting.
type RelaunchArgs struct {
	Stealth *bool    `json:"stealth,omitempty"`
	Profile *Profile `json:"profile,omitempty"`
	Headed  *bool    `json:"headed,omitempty"`
}

// Condition is a check on the page that says a handoff is done: text present,
// a URL pattern, or an element by role (and optional name).
type Condition struct {
	Text string `json:"text,omitempty"`
	URL  string `json:"url,omitempty"`
	Role string `json:"role,omitempty"`
	Name string `json:"name,omitempty"`
}

// HandoffArgs are browser_request_handoff's arguments.
type HandoffArgs struct {
	Instruction         string    `json:"instruction"`
	CompletionCondition Condition `json:"completion_condition"`
	// ExpiresInS is how long to wait for the person; 0 means the default (15 minutes).
	ExpiresInS int `json:"expires_in_s,omitempty"`
}

// WebFetchArgs are web_fetch's arguments.
type WebFetchArgs struct {
	URL string `json:"url"`
	// Format is "markdown" (default) or "raw".
	Format string `json:"format,omitempty"`
}

// WebSearchArgs are web_search's arguments.
type WebSearchArgs struct {
	Query string `json:"query"`
	// N is the number of hits wanted, 1-25; 0 means the default (10).
	N int `json:"n,omitempty"`
}

// Defaults the activities apply when an argument is left out.
const (
	DefaultSearchN        = 10
	DefaultHandoffExpiryS = 15 * 60
	MaxHandoffExpiryS     = 24 * 60 * 60
	MaxActions            = 50
	// A code cell's source (bytes; the schema bounds characters) and deadline.
	MaxCodeBytes        = 64 << 10
	DefaultCodeTimeoutS = 120
	MaxCodeTimeoutS     = 300
)

// newArgs returns a pointer to a fresh, typed argument value for a tool.
func newArgs(name string) (any, bool) {
	d, ok := specFor(name)
	if !ok {
		return nil, false
	}
	return d.args.new(), true
}

// derefArgs returns the value behind a pointer newArgs made.
func derefArgs(name string, p any) any {
	if d, ok := specFor(name); ok {
		return d.args.deref(p)
	}
	return p
}

// MaxArgsBytes bounds a call's raw arguments; the largest legitimate call (a
// full batch of long fills, escaped) is well inside it.
const MaxArgsBytes = 256 << 10

// ToolNames lists every tool name in Definitions() order.
func ToolNames() []string {
	defs := Definitions()
	out := make([]string, len(defs))
	for i, d := range defs {
		out[i] = d.Name
	}
	return out
}

// clipName keeps a model-made tool name short in a message.
func clipName(s string) string {
	const limit = 64
	if len(s) > limit {
		return s[:limit] + "..."
	}
	return s
}

// decodeJSON reads exactly one JSON value, numbers kept as json.Number.
func decodeJSON(raw []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("extra data after the JSON value")
	}
	return v, nil
}

// CallHash identifies a call for the "identical call" guards: the SHA-256 (hex)
// of the tool name and the arguments in canonical form (object keys sorted,
// no insignificant whitespace, empty arguments as {}). Arguments that are not
// JSON are hashed as given, trimmed of surrounding whitespace.
func CallHash(name string, raw json.RawMessage) string {
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte{0})
	h.Write(CanonicalArgs(raw))
	return hex.EncodeToString(h.Sum(nil))
}

// CanonicalArgs returns raw in canonical JSON form (see CallHash).
func CanonicalArgs(raw json.RawMessage) []byte {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return []byte("{}")
	}
	v, err := decodeJSON(trimmed)
	if err != nil {
		return trimmed
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	// encoding/json writes map keys sorted and json.Number literally.
	if err := enc.Encode(v); err != nil {
		return trimmed
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
