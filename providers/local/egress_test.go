//go:build unix

package local

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/durable-browser/durable-browser/providers"
)

// A browser given an egress proxy sends everything through it, loopback
// included, and looks no name up itself; without one its flags are as
// before.
func TestEgressFlags(t *testing.T) {
	p := &Provider{}
	rec := &Record{ProfileDir: "/p", Egress: "127.0.0.1:4567", EgressSPKI: "pin="}
	a := p.args(rec, providers.CreateOptions{})
	for _, want := range []string{
		"--proxy-server=http://127.0.0.1:4567",
		"--proxy-bypass-list=<-loopback>",
		"--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
		"--ignore-certificate-errors-spki-list=pin=",
		"--user-data-dir=/p",
	} {
		if !slices.Contains(a, want) {
			t.Errorf("args lack %s: %v", want, a)
		}
	}
	for _, f := range p.args(&Record{ProfileDir: "/p", Egress: "127.0.0.1:4567"}, providers.CreateOptions{}) {
		if strings.HasPrefix(f, "--ignore-certificate") {
			t.Errorf("a browser whose proxy does not intercept got %s", f)
		}
	}
	for _, f := range p.args(&Record{ProfileDir: "/p"}, providers.CreateOptions{}) {
		if strings.HasPrefix(f, "--proxy") || strings.HasPrefix(f, "--host-resolver") || strings.HasPrefix(f, "--ignore-certificate") {
			t.Errorf("a browser without egress got %s", f)
		}
	}
}

// The egress preferences go into a new profile, and into a saved one
// without losing its other preferences.
func TestWriteEgressPrefs(t *testing.T) {
	for _, existing := range []string{"", `{"profile":{"name":"shop"},"net":{"other":true},"webrtc":{"multiple_routes_enabled":false}}`, "not json"} {
		dir := t.TempDir()
		path := filepath.Join(dir, "Default", "Preferences")
		if existing != "" {
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(existing), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := writeEgressPrefs(dir); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Profile map[string]any `json:"profile"`
			Net     map[string]any `json:"net"`
			WebRTC  map[string]any `json:"webrtc"`
		}
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if got.Net["network_prediction_options"] != float64(2) || got.WebRTC["ip_handling_policy"] != "disable_non_proxied_udp" {
			t.Fatalf("from %q: %s", existing, b)
		}
		if strings.HasPrefix(existing, "{") && (got.Profile["name"] != "shop" || got.Net["other"] != true || got.WebRTC["multiple_routes_enabled"] != false) {
			t.Fatalf("other preferences lost: %s", b)
		}
	}
}

func TestCheckEgressFlags(t *testing.T) {
	for _, f := range []string{"--proxy-server=http://x:1", "--no-proxy-server", "--host-resolver-rules=MAP * 1.2.3.4", "--proxy-pac-url=file:///p", "--ignore-certificate-errors-spki-list=abc=",
		// Chromium takes a single dash too.
		"-proxy-server=http://x:1", "-no-proxy-server", "-proxy-bypass-list=*", "-host-resolver-rules=MAP * 1.2.3.4", "-ignore-certificate-errors-spki-list=abc="} {
		if err := checkEgressFlags([]string{"--mute-audio", f}); err == nil {
			t.Errorf("%s passed", f)
		}
	}
	if err := checkEgressFlags([]string{"--mute-audio", "--proxy-serverless", "-proxy-serverless", "proxy-server=x"}); err != nil {
		t.Errorf("an unrelated flag refused: %v", err)
	}
}

func TestEgressRefusesAnUpstreamProxy(t *testing.T) {
	p := newProvider(t, t.TempDir(), "boot-egress")
	_, err := p.Create(context.Background(), providers.CreateOptions{Tag: "egress-proxy-1", Proxy: "http://127.0.0.1:3128", Egress: "127.0.0.1:4567"})
	if err == nil || !strings.Contains(err.Error(), "egress") {
		t.Fatalf("Create with both an upstream proxy and the egress proxy: %v", err)
	}
}
