package contract

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// SessionRef names a session and where its calls are scheduled. It travels in
// every browser activity's input; it holds no credential.
type SessionRef struct {
	Tag      string `json:"tag"`
	Provider string `json:"provider"`
	// HostQueue is the task queue of the worker process holding the browser.
	HostQueue string `json:"host_queue"`
	// State is the named state the session keeps (SessionOptions.State),
	// so a release on any worker saves it and gives its lease up.
	State string `json:"state,omitempty"`
}

// SessionOptions describes the browser a session wants.
type SessionOptions struct {
	// Provider is "local" (default), "cdp", "browserbase" or "kernel"
	// (the last three only on workers configured for them).
	Provider string `json:"provider,omitempty"`
	Stealth  bool   `json:"stealth,omitempty"`
	Headed   bool   `json:"headed,omitempty"`
	// Profile is the saved sign-in the session starts from. Setting it grants
	// it to the session (with saving when Save is set).
	Profile *Profile `json:"profile,omitempty"`
	// ProfileGrants are further saved profiles the session may switch to with
	// browser_relaunch (Save: it may also save them). Only the host sets
	// grants; a model's tool arguments never do.
	ProfileGrants []Profile `json:"profile_grants,omitempty"`
	// ActionPolicy is "allow" (default), "ask" or "deny" for requests with side effects.
	ActionPolicy string `json:"action_policy,omitempty"`
	// StartURL is opened right after the browser starts, when set.
	StartURL string `json:"start_url,omitempty"`
	// AllowHosts, when not empty, is the only hosts the session's browser
	// may reach, in every frame: a name ("shop.example"), a wildcard
	// ("*.shop.example", its subdomains) or an address. Every other
	// navigation and request is blocked before it leaves. The worker's own
	// reach rules apply as well.
	AllowHosts []string `json:"allow_hosts,omitempty"`
	// Viewport is the size pages are laid out at, in CSS pixels; nil is
	// DefaultViewport. Responsive pages hide navigation at small sizes, so
	// what a snapshot lists depends on it.
	Viewport *Viewport `json:"viewport,omitempty"`
	// Record records the session's page (docs/recording.md): screencast
	// frames filed in chunks beside its evidence, with a gap wherever a
	// credential was on the page. It makes nothing and is not compared
	// when a create finds the session.
	Record bool `json:"record,omitempty"`
	// State names a saved browser state (cookies, local and session
	// storage) the session starts from and keeps: saved, sealed, to S3
	// after every run and upload and at release, for the next session of
	// any provider on any worker. One session writes a name at a time.
	// Letters, digits, '.', '-', '_' (1-64); the worker's --state-names
	// may restrict it. See docs/states.md.
	State string `json:"state,omitempty"`
	// Restore false keeps a lost host's session as it was before
	// checkpoints: the next call answers session_replaced with a new
	// browser at about:blank. Unset or true, every session is checkpointed
	// after each call that can change it, and a lost host's next browser is
	// made from the last checkpoint (session_restored). See docs/restore.md.
	Restore *bool `json:"restore,omitempty"`
}

// Restores says whether a lost host's session is restored from its
// checkpoint (Restore unset or true).
func (o SessionOptions) Restores() bool { return o.Restore == nil || *o.Restore }

// Viewport is a page's layout size in CSS pixels.
type Viewport struct {
	Width  int `json:"width"`
	Height int `json:"height"`
}

// DefaultViewport is a common desktop size: Chrome's headless default
// (780x437) hides the navigation of responsive pages.
var DefaultViewport = Viewport{Width: 1280, Height: 720}

// Viewport bounds: a phone's width up to a large desktop screen.
const (
	MinViewportSide = 240
	MaxViewportSide = 4096
)

// String writes the viewport as WIDTHxHEIGHT, e.g. "1280x720".
func (v Viewport) String() string { return fmt.Sprintf("%dx%d", v.Width, v.Height) }

// Validate checks both sides are within bounds.
func (v Viewport) Validate() error {
	if v.Width < MinViewportSide || v.Width > MaxViewportSide || v.Height < MinViewportSide || v.Height > MaxViewportSide {
		return fmt.Errorf("viewport %s: each side must be %d to %d CSS pixels, e.g. 1280x720", v, MinViewportSide, MaxViewportSide)
	}
	return nil
}

// ParseViewport reads WIDTHxHEIGHT ("1280x720") and validates it.
func ParseViewport(s string) (Viewport, error) {
	var v Viewport
	w, h, ok := strings.Cut(strings.ToLower(strings.TrimSpace(s)), "x")
	var err1, err2 error
	if ok {
		v.Width, err1 = strconv.Atoi(w)
		v.Height, err2 = strconv.Atoi(h)
	}
	if !ok || err1 != nil || err2 != nil {
		return Viewport{}, fmt.Errorf("viewport %q: write WIDTHxHEIGHT in CSS pixels, e.g. 1280x720", clipName(s))
	}
	return v, v.Validate()
}

// ViewportOrDefault is the viewport the session asks for, DefaultViewport when unset.
func (o SessionOptions) ViewportOrDefault() Viewport {
	if o.Viewport == nil {
		return DefaultViewport
	}
	return *o.Viewport
}

// CreateRequest is browser.create's input. It runs on the shared queue and
// finds-or-creates the browser by tag on the worker that picks it up.
type CreateRequest struct {
	Tag     string         `json:"tag"`
	Options SessionOptions `json:"options"`
	// Grants are the saved profiles the host granted this session; a profile
	// in Options is opened only when it is granted here or by the worker.
	// BrowserSession and workflows.Open fill it from the session's options
	// as the host gave them (Profile and ProfileGrants).
	Grants []Profile `json:"grants,omitempty"`
	// Replaces is the tag of the session this one replaces (a relaunch): the
	// new session may take over a profile that session holds.
	Replaces string `json:"replaces,omitempty"`
	// Restore makes the new browser from the last checkpoint of Replaces
	// (its host was lost): cookies and storage first, then its tabs.
	Restore bool `json:"restore,omitempty"`
}

// CreateResult says where the session lives.
type CreateResult struct {
	Session SessionRef `json:"session"`
	// Found is true when a browser with the tag already existed.
	Found bool   `json:"found"`
	URL   string `json:"url,omitempty"`
	Title string `json:"title,omitempty"`
	// Viewport is the size the session's pages are laid out at, e.g. "1280x720".
	Viewport string `json:"viewport,omitempty"`
	// Restored is what a create with Restore brought back; nil when there
	// was no checkpoint to restore from.
	Restored *Restored `json:"restored,omitempty"`
	// Isolation is how a local session is kept apart from the worker's
	// others: "process" (a browser of its own) or "context" (a browser
	// context of the worker's shared browser; --isolation). Empty for
	// other providers.
	Isolation string `json:"isolation,omitempty"`
}

// Call is the common part of every browser activity's input.
type Call struct {
	Session SessionRef `json:"session"`
	// Policy is the session's action policy ("allow", "ask", "deny").
	Policy string `json:"policy,omitempty"`
}

// SnapshotRequest is browser.snapshot's input.
type SnapshotRequest struct {
	Call
	Args SnapshotArgs `json:"args"`
}

// RunRequest is browser.run's input.
type RunRequest struct {
	Call
	Args RunArgs `json:"args"`
}

// ScreenshotRequest is browser.screenshot's input.
type ScreenshotRequest struct {
	Call
	Args ScreenshotArgs `json:"args"`
}

// ReadRequest is browser.read's input.
type ReadRequest struct {
	Call
	Args ReadArgs `json:"args"`
}

// DownloadsRequest is browser.downloads's input.
type DownloadsRequest struct {
	Call
}

// UploadRequest is browser.upload's input.
type UploadRequest struct {
	Call
	Args UploadArgs `json:"args"`
}

// CheckRequest is browser.check's input.
type CheckRequest struct {
	Call
	Args CheckArgs `json:"args"`
}

// ReleaseRequest is browser.release's input. It is idempotent.
type ReleaseRequest struct {
	Session SessionRef `json:"session"`
}

// ReleaseResult confirms a release.
type ReleaseResult struct {
	OK       bool   `json:"ok"`
	Tag      string `json:"tag"`
	Released bool   `json:"released"`
	// RanS is how long a rented browser ran in all, in seconds, as its
	// provider metered it; Cost prices it when the worker has a price per
	// minute for the provider (--price-per-minute).
	RanS float64 `json:"ran_s,omitempty"`
	Cost float64 `json:"cost,omitempty"`
}

// WebFetchRequest is web.fetch's input.
type WebFetchRequest struct {
	SessionTag string       `json:"session_tag,omitempty"`
	Args       WebFetchArgs `json:"args"`
}

// WebSearchRequest is web.search's input.
type WebSearchRequest struct {
	SessionTag string        `json:"session_tag,omitempty"`
	Args       WebSearchArgs `json:"args"`
}

// RunProgress is what browser.run heartbeats: if its worker is lost, the
// workflow reads it from the timeout to say what may have happened.
type RunProgress struct {
	Completed int           `json:"completed"`
	URL       string        `json:"url,omitempty"`
	Sent      []SentRequest `json:"sent,omitempty"`
	// PageCalls is set by a code cell: its page calls so far.
	PageCalls *PageCalls `json:"page_calls,omitempty"`
}

// Profile names a saved sign-in to start from.
type Profile struct {
	Name string `json:"name"`
	// Save runs on the profile itself so sign-ins persist; otherwise a copy is used.
	Save bool `json:"save,omitempty"`
}

// Granted says whether grants allow opening p: a grant of its name, and
// one that allows saving when p saves.
func Granted(grants []Profile, p Profile) bool {
	for _, g := range grants {
		if g.Name == p.Name && (g.Save || !p.Save) {
			return true
		}
	}
	return false
}

// HostGrants are the profiles a session's options, as the host set them,
// grant: its Profile and its ProfileGrants.
func (o SessionOptions) HostGrants() []Profile {
	var out []Profile
	if o.Profile != nil {
		out = append(out, *o.Profile)
	}
	return append(out, o.ProfileGrants...)
}

// namePattern is what a profile, state or request id name may be.
const namePattern = `^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`

// profileName is compiled on first use: nothing at a program's start.
var profileName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(namePattern) })

// ValidStateName checks a named state's name (SessionOptions.State): 1-64
// letters, digits, '.', '-' or '_', starting with a letter or digit, with
// no "..". The name shows in logs and messages; only its hash names
// objects.
func ValidStateName(name string) error {
	if !profileName().MatchString(name) || strings.Contains(name, "..") {
		why := ""
		if profileName().MatchString(name) {
			why = `it holds ".."; `
		}
		if len(name) > 72 {
			name = name[:64] + "..."
		}
		return fmt.Errorf(`state name %q: %suse 1-64 letters, digits, '.', '-' or '_', starting with a letter or digit, with no ".." (e.g. shop-alice)`, name, why)
	}
	return nil
}

// Validate checks the profile name.
func (p Profile) Validate() error {
	if !profileName().MatchString(p.Name) {
		return fmt.Errorf("profile name %q: use 1-64 letters, digits, '.', '-' or '_', starting with a letter or digit", p.Name)
	}
	return nil
}
