package contract

import (
	"fmt"
	"slices"
	"strings"
)

// Names of the session options that make a browser. A caller that asks a
// running session for some of them (ToolCall.Expect) names which.
const (
	OptionProvider     = "provider"
	OptionStealth      = "stealth"
	OptionHeaded       = "headed"
	OptionProfile      = "profile"
	OptionActionPolicy = "action_policy"
	OptionAllowHosts   = "allow_hosts"
	OptionViewport     = "viewport"
	// OptionState names the session's named state. It makes no browser
	// (a found browser is never compared on it), so it is not in
	// MadeOptions; a caller that names it is still refused by a session
	// keeping another state.
	OptionState = "state"
)

// MadeOptions lists every option that makes a browser. StartURL and
// ProfileGrants make nothing and are never compared.
var MadeOptions = []string{OptionProvider, OptionStealth, OptionHeaded, OptionProfile, OptionActionPolicy, OptionAllowHosts, OptionViewport}

// Expected is what a caller expects of the session it calls: the options it
// would create the session with, and which of them it set on purpose. A
// running session made otherwise in one of those refuses the call.
type Expected struct {
	Options SessionOptions `json:"options"`
	// Fields names the options to compare (MadeOptions entries).
	Fields []string `json:"fields"`
}

// MadeWith is the part of o that makes a browser, in one spelling: the
// provider given (resolved by the caller), the default policy written out,
// the allow list lower-cased and sorted, the viewport written out (unset is
// the default, as in a record kept before viewports were).
func (o SessionOptions) MadeWith(provider string) SessionOptions {
	vp := o.ViewportOrDefault()
	m := SessionOptions{Provider: provider, Stealth: o.Stealth, Headed: o.Headed, ActionPolicy: o.ActionPolicy, Viewport: &vp}
	if m.Provider == "" {
		m.Provider = "local"
	}
	if m.ActionPolicy == "" {
		m.ActionPolicy = PolicyAllow
	}
	if o.Profile != nil {
		p := *o.Profile
		m.Profile = &p
	}
	for _, h := range o.AllowHosts {
		h = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), ".")
		if !slices.Contains(m.AllowHosts, h) {
			m.AllowHosts = append(m.AllowHosts, h)
		}
	}
	slices.Sort(m.AllowHosts)
	return m
}

// OptionsDiffer names each of fields (nil: all of MadeOptions) in which
// have differs from want, with both values: "stealth (asked false, the
// <what> has true)".
func OptionsDiffer(want, have SessionOptions, fields []string, what string) []string {
	wantState, haveState := want.State, have.State
	want, have = want.MadeWith(want.Provider), have.MadeWith(have.Provider)
	if fields == nil {
		fields = MadeOptions
	}
	var out []string
	add := func(name string, w, h any) {
		if slices.Contains(fields, name) {
			out = append(out, fmt.Sprintf("%s (asked %v, the %s has %v)", name, w, what, h))
		}
	}
	if want.Provider != have.Provider {
		add(OptionProvider, want.Provider, have.Provider)
	}
	if want.Stealth != have.Stealth {
		add(OptionStealth, want.Stealth, have.Stealth)
	}
	if want.Headed != have.Headed {
		add(OptionHeaded, want.Headed, have.Headed)
	}
	if profileWord(want.Profile) != profileWord(have.Profile) {
		add(OptionProfile, profileWord(want.Profile), profileWord(have.Profile))
	}
	if want.ActionPolicy != have.ActionPolicy {
		add(OptionActionPolicy, want.ActionPolicy, have.ActionPolicy)
	}
	if *want.Viewport != *have.Viewport {
		add(OptionViewport, want.Viewport.String(), have.Viewport.String())
	}
	if !slices.Equal(want.AllowHosts, have.AllowHosts) {
		add(OptionAllowHosts, hostsWord(want.AllowHosts), hostsWord(have.AllowHosts))
	}
	if slices.Contains(fields, OptionState) && wantState != haveState {
		add(OptionState, stateWord(wantState), stateWord(haveState))
	}
	return out
}

func profileWord(p *Profile) string {
	switch {
	case p == nil:
		return "none"
	case p.Save:
		return p.Name + " (saving)"
	}
	return p.Name
}

func stateWord(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func hostsWord(h []string) string {
	if len(h) == 0 {
		return "any"
	}
	return "[" + strings.Join(h, " ") + "]"
}
