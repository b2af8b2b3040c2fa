package contract

import (
	"encoding/json"
	"net/url"
	"path"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxSummary bounds a call's summary in runes: the Temporal UI shows it on
// one line of the timeline.
const MaxSummary = 120

// Summary is the one line an operator reads for a tool call in the Temporal
// UI and CLI (an activity's user metadata): what the call does, built from its
// arguments only. It never holds a typed value (fill, type, select and the
// like show the element, not the text), a query string or fragment, page
// text, or a secret reference's value: what it shows of a URL is its host and
// path. args is the typed argument value (SnapshotArgs, RunArgs, ...) or a
// pointer to one; an unknown tool or type gives the tool's name.
func Summary(tool string, args any) string {
	s := summary(tool, args)
	if s == "" {
		s = tool
	}
	return cutRunes(oneLine(s), MaxSummary)
}

func summary(tool string, args any) string {
	switch a := valueOf(args).(type) {
	case SnapshotArgs:
		s := "snapshot " + orText(a.Mode, "full")
		if a.Scope != "" {
			s += " of " + idText(a.Scope)
		}
		if a.Since > 0 {
			s += " since epoch " + strconv.Itoa(a.Since)
		}
		if a.Offset > 0 {
			s += " from " + strconv.Itoa(a.Offset)
		}
		return s
	case RunArgs:
		if a.Code != "" {
			return "code cell (" + plural(strings.Count(strings.TrimRight(a.Code, "\n"), "\n")+1, "line") + ")"
		}
		return actionsSummary(a.Actions)
	case ScreenshotArgs:
		s := "screenshot"
		switch {
		case a.FullPage:
			s += " full page"
		case a.ID != "":
			s += " of " + idText(a.ID)
		case a.Locator != nil:
			s += " of " + locatorText(a.Locator)
		case a.Selector != "":
			s += " of a selector"
		case a.Clip != nil:
			s += " of a region"
		}
		if a.Type == "jpeg" {
			s += " (jpeg)"
		}
		return s
	case ReadArgs:
		return "read " + orText(a.What, "markdown")
	case DownloadsArgs:
		return "list downloads"
	case UploadArgs:
		// The file's base name: a path in the upload directory the host
		// chose, not page text.
		s := "upload " + quote(path.Base(strings.ReplaceAll(a.Path, "\\", "/")))
		if t := target(a.ID, a.Locator); t != "" {
			s += " into " + t
		}
		return s
	case CheckArgs:
		var parts []string
		if a.URL != "" {
			parts = append(parts, "url "+patternText(a.URL))
		}
		if a.ExpectText != "" {
			parts = append(parts, "text")
		}
		if t := target(a.ExpectID, a.ExpectLocator); t != "" {
			parts = append(parts, t+" visible")
		}
		if a.NoConsoleErrors {
			parts = append(parts, "no console errors")
		}
		if a.NoFailedRequests {
			parts = append(parts, "no failed requests")
		}
		return "check " + strings.Join(parts, ", ")
	case ReleaseArgs:
		return "release"
	case RelaunchArgs:
		var parts []string
		if a.Profile != nil {
			parts = append(parts, "profile "+quote(a.Profile.Name))
		}
		if a.Stealth != nil {
			parts = append(parts, "stealth "+strconv.FormatBool(*a.Stealth))
		}
		if a.Headed != nil {
			parts = append(parts, "headed "+strconv.FormatBool(*a.Headed))
		}
		if len(parts) == 0 {
			return "relaunch"
		}
		return "relaunch with " + strings.Join(parts, ", ")
	case HandoffArgs:
		return "ask a person: " + quote(a.Instruction)
	case WebFetchArgs:
		return "fetch " + hostPath(a.URL)
	case WebSearchArgs:
		// The query is the model's words, often page text: its size only.
		return "web search (" + plural(len(strings.Fields(a.Query)), "word") + ")"
	case UseWebsiteArgs:
		return "use website " + quote(a.Site)
	}
	return tool
}

// actionsSummary names a batch's actions, as many as fit, then how many
// more: `fill [10] · click "Create account" (+2)`.
func actionsSummary(raw json.RawMessage) string {
	var acts []struct {
		Op      string   `json:"op"`
		ID      string   `json:"id"`
		URL     string   `json:"url"`
		Key     string   `json:"key"`
		Tab     string   `json:"tab"`
		MS      int      `json:"ms"`
		Locator *Locator `json:"locator"`
	}
	if json.Unmarshal(raw, &acts) != nil || len(acts) == 0 {
		return "run"
	}
	const sep = " · "
	var b strings.Builder
	for i, a := range acts {
		s := a.Op
		switch a.Op {
		case "goto":
			s += " " + hostPath(a.URL)
		case "press":
			// A key name, never text; bounded like any other part.
			s += " " + cutRunes(a.Key, 20)
			if t := target(a.ID, a.Locator); t != "" {
				s += " on " + t
			}
		case "switch_tab", "close_tab":
			if a.Tab != "" {
				s += " " + cutRunes(a.Tab, 16)
			}
		case "wait":
			if a.MS > 0 {
				s += " " + strconv.Itoa(a.MS) + "ms"
			} else if t := target(a.ID, a.Locator); t != "" {
				s += " for " + t
			}
		default:
			if t := target(a.ID, a.Locator); t != "" {
				s += " " + t
			}
		}
		rest := ""
		if n := len(acts) - i - 1; n > 0 {
			rest = " (+" + strconv.Itoa(n) + ")"
		}
		if i > 0 && utf8.RuneCountInString(b.String())+len(sep)+utf8.RuneCountInString(s)+len(rest) > MaxSummary {
			return b.String() + " (+" + strconv.Itoa(len(acts)-i) + ")"
		}
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(s)
	}
	return b.String()
}

// target names an element: its id from the latest snapshot, or what the
// locator looks for (the model's words for the element, never a value).
func target(id string, l *Locator) string {
	if id != "" {
		return idText(id)
	}
	return locatorText(l)
}

func idText(id string) string {
	id = strings.Trim(id, "[] ")
	return "[" + cutRunes(id, 12) + "]"
}

func locatorText(l *Locator) string {
	if l == nil {
		return ""
	}
	switch {
	case l.Role != "" && l.Name != "":
		return l.Role + " " + quote(l.Name)
	case l.Role != "":
		return l.Role
	case l.Label != "":
		return "label " + quote(l.Label)
	case l.Text != "":
		return quote(l.Text)
	case l.Placeholder != "":
		return "placeholder " + quote(l.Placeholder)
	case l.TestID != "":
		return "testid " + quote(l.TestID)
	}
	return ""
}

// hostPath shows where a URL goes: host and path, no scheme, user
// information, query or fragment (values there can be credentials).
func hostPath(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		if err == nil && u.Scheme != "" && u.Opaque != "" {
			return u.Scheme + ":"
		}
		return "a url"
	}
	s := u.Host + u.EscapedPath()
	if u.RawQuery != "" || u.ForceQuery {
		s += "?…"
	}
	return cutRunes(s, 60)
}

// patternText shows a URL pattern up to its query or fragment.
func patternText(p string) string {
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i] + "?…"
	}
	// User information is a credential, pattern or not.
	if i := strings.Index(p, "://"); i >= 0 {
		rest := p[i+3:]
		if at := strings.LastIndex(rest[:strings.IndexByte(rest+"/", '/')], "@"); at >= 0 {
			p = p[:i+3] + rest[at+1:]
		}
	}
	return cutRunes(oneLine(p), 60)
}

func quote(s string) string { return `"` + cutRunes(oneLine(s), 40) + `"` }

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// oneLine folds control characters (newlines included) to spaces.
func oneLine(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }), " ")
}

// cutRunes keeps at most n runes of s, ending with "…" when it cut.
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// valueOf turns a pointer to an argument value into the value (nil for a
// nil pointer), so summaries read both forms.
func valueOf(args any) any {
	v := reflect.ValueOf(args)
	if v.Kind() != reflect.Pointer {
		return args
	}
	if v.IsNil() {
		return nil
	}
	return v.Elem().Interface()
}
