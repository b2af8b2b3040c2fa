// Package sessionflags holds the flags that describe the session a client
// verb creates when none runs under its workflow id (`call`, `mcp`).
package sessionflags

import (
	"fmt"
	"strings"
	"time"

	"github.com/durable-browser/durable-browser/cmd/internal/cli"
	"github.com/durable-browser/durable-browser/contract"
	"github.com/durable-browser/durable-browser/internal/config"
	"github.com/durable-browser/durable-browser/internal/netguard"
)

// Flags describe the session a verb creates when none runs under its
// workflow id, and the Temporal client it sends through.
type Flags struct {
	cli.Client
	provider, profile, grants, policy, allowHosts, viewport, state string
	stealth, headed, saveProfile, sa, record                       bool
	idle, life                                                     time.Duration
}

// Bind adds the flags to fs: the client's (cli.BindClient: --timeout's
// default and help, --log-level's help), then the session's.
func Bind(fs *config.Set, f *Flags, timeout time.Duration, timeoutHelp, logHelp string) {
	cli.BindClient(fs, &f.Client, timeout, timeoutHelp, logHelp)
	fs.String(&f.provider, "provider", "local", "where the browser comes from when the session is created: local, cdp, browserbase or kernel")
	fs.Bool(&f.stealth, "stealth", false, "apply stealth to every page of a new session")
	fs.Bool(&f.headed, "headed", false, "show the new session's browser window")
	fs.String(&f.profile, "profile", "", "saved sign-in profile a new session starts from")
	fs.Bool(&f.saveProfile, "save-profile", false, "run on the profile itself so sign-ins persist")
	fs.String(&f.grants, "grant-profile", "", "further saved profiles a new session may relaunch into: name1,name2:save (:save lets it save)")
	fs.String(&f.state, "state", "", "named state (sign-ins: cookies, local and session storage) a new session starts from and keeps, on workers with DURABLE_BROWSER_STATE_KEY (docs/states.md)")
	fs.String(&f.policy, "policy", "allow", "action policy for requests with side effects: allow, ask or deny")
	fs.String(&f.allowHosts, "allow-hosts", "", "comma-separated hosts a new session's browser may reach (names, *.domain, addresses); every other host is blocked")
	fs.String(&f.viewport, "viewport", "", "a new session's page size in CSS pixels, WIDTHxHEIGHT (default 1280x720)")
	fs.Bool(&f.record, "record", false, "record a new session's page (frames filed beside its evidence, credentials left out; see docs/recording.md)")
	fs.Duration(&f.idle, "idle-timeout", 3*time.Minute, "a new session's idle window")
	fs.Duration(&f.life, "max-lifetime", 30*time.Minute, "a new session's maximum lifetime")
	fs.Bool(&f.sa, "search-attributes", true, "a new session upserts BrowserSessionTag, BrowserProvider and BrowserState (see docs/operations.md)")
}

// Config checks the flags and returns the new session's configuration.
func (f *Flags) Config() (contract.SessionConfig, error) {
	if f.idle <= 0 {
		return contract.SessionConfig{}, &config.Error{Flag: "idle-timeout", Problem: fmt.Sprintf("%s is not a positive duration", f.idle), Fix: "e.g. --idle-timeout 3m"}
	}
	if f.life <= 0 {
		return contract.SessionConfig{}, &config.Error{Flag: "max-lifetime", Problem: fmt.Sprintf("%s is not a positive duration", f.life), Fix: "e.g. --max-lifetime 30m"}
	}
	switch f.policy {
	case contract.PolicyAllow, contract.PolicyAsk, contract.PolicyDeny:
	default:
		return contract.SessionConfig{}, &config.Error{Flag: "policy", Problem: fmt.Sprintf("%q is not a policy", f.policy), Fix: "use allow, ask or deny"}
	}
	opts := contract.SessionOptions{Provider: f.provider, Stealth: f.stealth, Headed: f.headed, ActionPolicy: f.policy, Record: f.record}
	for _, h := range strings.Split(f.allowHosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			opts.AllowHosts = append(opts.AllowHosts, h)
		}
	}
	if err := netguard.ValidateHostList(opts.AllowHosts); err != nil {
		return contract.SessionConfig{}, &config.Error{Flag: "allow-hosts", Problem: err.Error(), Fix: "e.g. shop.example,*.shop.example"}
	}
	if f.viewport != "" {
		v, err := contract.ParseViewport(f.viewport)
		if err != nil {
			return contract.SessionConfig{}, &config.Error{Flag: "viewport", Problem: err.Error(), Fix: "e.g. --viewport 1280x720"}
		}
		opts.Viewport = &v
	}
	if f.profile != "" {
		opts.Profile = &contract.Profile{Name: f.profile, Save: f.saveProfile}
		if err := opts.Profile.Validate(); err != nil {
			return contract.SessionConfig{}, &config.Error{Flag: "profile", Problem: err.Error()}
		}
	}
	if f.state != "" {
		if err := contract.ValidStateName(f.state); err != nil {
			return contract.SessionConfig{}, &config.Error{Flag: "state", Problem: err.Error()}
		}
		opts.State = f.state
	}
	granted, err := config.ParseProfileGrants(f.grants)
	if err != nil {
		return contract.SessionConfig{}, &config.Error{Flag: "grant-profile", Problem: err.Error(), Fix: "e.g. shop,mail:save"}
	}
	opts.ProfileGrants = granted
	return contract.SessionConfig{Session: opts, IdleTimeout: f.idle, MaxLifetime: f.life, SearchAttributes: f.sa}, nil
}
