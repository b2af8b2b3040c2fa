package activities

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/providers"
)

// finder is what a provider that can look a tag up without adopting its
// browser offers (local.Provider and cdp.Provider do).
type finder interface {
	Find(ctx context.Context, tag string) (*providers.Session, error)
}

// madeWith is the part of a session's options that makes its browser, in
// one spelling: the provider resolved, the default policy written out, the
// allow list lower-cased and sorted, the viewport written out (unset is
// the default, as in a record kept before viewports were). The start URL
// and the profile grants make nothing and are left out.
func madeWith(provider string, o contract.SessionOptions) contract.SessionOptions {
	vp := o.ViewportOrDefault()
	m := contract.SessionOptions{Provider: provider, Stealth: o.Stealth, Headed: o.Headed, ActionPolicy: o.ActionPolicy, Viewport: &vp}
	if m.ActionPolicy == "" {
		m.ActionPolicy = contract.PolicyAllow
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

// optionsDiffer names each option in which the browser found (have) was
// made otherwise than the create asks (want), with both values.
func optionsDiffer(want, have contract.SessionOptions) []string {
	have = madeWith(have.Provider, have)
	var out []string
	add := func(name string, w, h any) {
		out = append(out, fmt.Sprintf("%s (asked %v, the browser has %v)", name, w, h))
	}
	if want.Provider != have.Provider {
		add("provider", want.Provider, have.Provider)
	}
	if want.Stealth != have.Stealth {
		add("stealth", want.Stealth, have.Stealth)
	}
	if want.Headed != have.Headed {
		add("headed", want.Headed, have.Headed)
	}
	if profileWord(want.Profile) != profileWord(have.Profile) {
		add("profile", profileWord(want.Profile), profileWord(have.Profile))
	}
	if want.ActionPolicy != have.ActionPolicy {
		add("action_policy", want.ActionPolicy, have.ActionPolicy)
	}
	if *want.Viewport != *have.Viewport {
		add("viewport", want.Viewport.String(), have.Viewport.String())
	}
	if !slices.Equal(want.AllowHosts, have.AllowHosts) {
		add("allow_hosts", hostsWord(want.AllowHosts), hostsWord(have.AllowHosts))
	}
	return out
}

func profileWord(p *contract.Profile) string {
	switch {
	case p == nil:
		return "none"
	case p.Save:
		return p.Name + " (saving)"
	}
	return p.Name
}

func hostsWord(h []string) string {
	if len(h) == 0 {
		return "any"
	}
	return "[" + strings.Join(h, " ") + "]"
}

// refuseFound is the failure for a create that found its tag's browser made
// with other options. The found browser is left as it is: it is the tag's,
// and whoever made it may still be using it.
func refuseFound(tag string, diff []string) *contract.Failure {
	return contract.Fail(contract.CodeRefused,
		"session %s already has a browser, made with other options: %s. Release that session first (browser_release, or close it), or open this one under another session id",
		tag, strings.Join(diff, "; "))
}

// checkFound refuses a found browser whose options differ from want. A
// browser whose provider kept no options (made before they were kept) is
// taken as it is.
func checkFound(tag string, want contract.SessionOptions, made *contract.SessionOptions) *contract.Failure {
	if made == nil {
		return nil
	}
	if diff := optionsDiffer(want, *made); len(diff) > 0 {
		return refuseFound(tag, diff)
	}
	return nil
}
