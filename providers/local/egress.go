package local

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// egressFlags send every connection of the browser through the worker's
// egress proxy at addr, loopback included ("<-loopback>" removes Chrome's
// implicit bypass of localhost), and make Chrome's own resolver answer
// "not found" for every name, so no name is looked up but by the proxy
// (no DNS prefetch, no lookups around the guard). With spki, the proxy
// decrypts TLS: the browser accepts the certificates of the proxy's CA by
// that pin (Chrome honours the switch only with --user-data-dir, which
// every local browser has). Certificates the pin does not cover are
// judged as ever; the proxy verifies each site's own before the browser
// is shown one of the CA's.
func egressFlags(addr, spki string) []string {
	return append([]string{"--proxy-server=http://" + addr, "--proxy-bypass-list=" + egressBypass}, egressLockFlags(spki)...)
}

// egressBypass removes Chrome's implicit bypass of loopback: loopback
// goes through the proxy too.
const egressBypass = "<-loopback>"

// egressLockFlags are the part of egressFlags that is the browser's, not
// a proxy's: no name lookups of its own, and the pin of the proxies' CA.
// The shared browser of context isolation starts with them alone; each
// of its contexts is given its session's proxy (Target.createBrowserContext
// proxyServer and proxyBypassList).
func egressLockFlags(spki string) []string {
	f := []string{
		"--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
		// No UDP for WebRTC (so no STUN around the proxy). The full browser
		// reads it from the profile's preferences (writeEgressPrefs); the
		// headless shell reads no such preference, only this switch, which
		// the full browser does not know and ignores.
		"--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
	}
	if spki != "" {
		f = append(f, "--ignore-certificate-errors-spki-list="+spki)
	}
	return f
}

// checkEgressFlags refuses extra flags that would route the browser
// around its egress proxy or replace its pin of the proxy's CA (Chrome
// takes the last of a repeated switch).
func checkEgressFlags(extra []string) error {
	for _, f := range extra {
		// Chromium reads a switch after "--" or a single "-" (on every
		// POSIX system), its name up to "=".
		name, ok := strings.CutPrefix(f, "--")
		if !ok {
			if name, ok = strings.CutPrefix(f, "-"); !ok {
				continue
			}
		}
		name, _, _ = strings.Cut(name, "=")
		for _, own := range []string{"proxy-server", "proxy-bypass-list", "proxy-pac-url", "proxy-auto-detect", "no-proxy-server", "host-resolver-rules", "ignore-certificate-errors-spki-list"} {
			if name == own {
				return fmt.Errorf("extra browser flag %s would take the browser around the worker's egress proxy or its certificate pin; remove it", f)
			}
		}
	}
	return nil
}

// egressPrefs are the profile preferences that keep traffic on the proxy:
// WebRTC may use no UDP but through a proxy (and the proxy carries none),
// and network prediction (DNS prefetch, preconnect) is off. Chromium 156
// has no command-line switch for either.
var egressPrefs = map[string]map[string]any{
	"webrtc": {"ip_handling_policy": "disable_non_proxied_udp"},
	"net":    {"network_prediction_options": 2},
}

// writeEgressPrefs merges egressPrefs into the profile's Default/Preferences
// before the browser starts (a saved or copied profile keeps its other
// preferences).
func writeEgressPrefs(profileDir string) error {
	path := filepath.Join(profileDir, "Default", "Preferences")
	var prefs map[string]any
	ok, err := readJSON(path, &prefs)
	if err != nil {
		return fmt.Errorf("reading browser preferences: %w", err)
	}
	if !ok || prefs == nil {
		// None yet, or corrupt: Chrome would replace a corrupt file with
		// defaults; so do we, with the egress preferences in.
		prefs = map[string]any{}
	}
	for section, kv := range egressPrefs {
		m, _ := prefs[section].(map[string]any)
		if m == nil {
			m = map[string]any{}
		}
		for k, v := range kv {
			m[k] = v
		}
		prefs[section] = m
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("writing browser preferences: %w", err)
	}
	if err := writeJSON(path, prefs); err != nil {
		return fmt.Errorf("writing browser preferences: %w", err)
	}
	return nil
}
