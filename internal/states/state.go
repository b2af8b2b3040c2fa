// Package states keeps a session's browser state (cookies, and the local and
// session storage of the origins it visited) as a named state in S3: sealed
// with AES-256-GCM under a key the host configures, under an object key
// derived from a hash of the name, one object per version; a lease object
// lets one session at a time write a name. See docs/states.md.
package states

import (
	"cmp"
	"slices"
)

// State is a browser's sign-in state. Its JSON (encoding/json sorts map
// keys) is canonical once Normalize has run, so equal states seal equal
// plaintexts and a repeated save is recognised.
type State struct {
	// Name is the state's name, kept inside the sealed payload so a
	// version copied under another name's key is refused on open.
	Name    string   `json:"name"`
	Cookies []Cookie `json:"cookies,omitempty"`
	Origins []Origin `json:"origins,omitempty"`
	// Tabs are where a checkpoint's tabs were (a named state keeps none:
	// it is a sign-in, not a place).
	Tabs []Tab `json:"tabs,omitempty"`
	// Secrets names (never values) the secrets typed in the session, so a
	// restore arms the guard against them before any tab loads.
	Secrets []string `json:"secrets,omitempty"`
}

// Tab is one tab of a checkpoint: where it was and how it got there.
type Tab struct {
	URL     string  `json:"url"`
	Title   string  `json:"title,omitempty"`
	ScrollX float64 `json:"scroll_x,omitempty"`
	ScrollY float64 `json:"scroll_y,omitempty"`
	Active  bool    `json:"active,omitempty"`
	// Method is the HTTP method of the request that loaded the tab's
	// document ("" when none was seen): only a GET is loaded again.
	Method string `json:"method,omitempty"`
}

// Cookie is one cookie as the browser holds it.
type Cookie struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Domain string `json:"domain"`
	Path   string `json:"path"`
	// Expires is seconds since the epoch; 0 is a session cookie.
	Expires  float64 `json:"expires,omitempty"`
	HTTPOnly bool    `json:"http_only,omitempty"`
	Secure   bool    `json:"secure,omitempty"`
	SameSite string  `json:"same_site,omitempty"`
}

// Origin is the web storage of one origin ("https://shop.example").
type Origin struct {
	Origin  string            `json:"origin"`
	Local   map[string]string `json:"local,omitempty"`
	Session map[string]string `json:"session,omitempty"`
}

// Limits on what one state holds, so a hostile page cannot grow the object
// (and every later session's start) without bound.
const (
	MaxCookies = 3000
	MaxOrigins = 200
	MaxTabs    = 50
	// MaxBytes bounds the sealed plaintext.
	MaxBytes = 4 << 20
)

// Normalize sorts cookies and origins and drops empty origins, so two
// captures of the same browser compare equal.
func (s *State) Normalize() {
	slices.SortFunc(s.Cookies, func(a, b Cookie) int {
		return cmp.Or(cmp.Compare(a.Domain, b.Domain), cmp.Compare(a.Path, b.Path), cmp.Compare(a.Name, b.Name))
	})
	s.Cookies = slices.CompactFunc(s.Cookies, func(a, b Cookie) bool {
		return a.Domain == b.Domain && a.Path == b.Path && a.Name == b.Name
	})
	s.Origins = slices.DeleteFunc(s.Origins, func(o Origin) bool { return len(o.Local) == 0 && len(o.Session) == 0 })
	slices.SortFunc(s.Origins, func(a, b Origin) int { return cmp.Compare(a.Origin, b.Origin) })
	s.Origins = slices.CompactFunc(s.Origins, func(a, b Origin) bool { return a.Origin == b.Origin })
	if len(s.Cookies) > MaxCookies {
		s.Cookies = s.Cookies[:MaxCookies]
	}
	if len(s.Origins) > MaxOrigins {
		s.Origins = s.Origins[:MaxOrigins]
	}
	if len(s.Tabs) > MaxTabs {
		s.Tabs = s.Tabs[:MaxTabs]
	}
	slices.Sort(s.Secrets)
	s.Secrets = slices.Compact(s.Secrets)
}

// Merge returns the state to save after a capture: the browser's cookies
// (the jar holds every origin's), and the storage of the origins captured
// now over what prev kept for the others. Storage can only be read from a
// page showing its origin, so an origin visited earlier keeps the storage it
// had when a page last showed it.
func Merge(prev *State, now State) State {
	out := State{Name: now.Name, Cookies: now.Cookies, Tabs: now.Tabs, Secrets: now.Secrets}
	seen := map[string]bool{}
	for _, o := range now.Origins {
		seen[o.Origin] = true
		out.Origins = append(out.Origins, o)
	}
	if prev != nil {
		for _, o := range prev.Origins {
			if !seen[o.Origin] {
				out.Origins = append(out.Origins, o)
			}
		}
	}
	out.Normalize()
	return out
}
