package main

import (
	"strings"
	"testing"
)

// recording get refuses what it cannot do before any request, naming the fix.
func TestRecordingGetRefusals(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no verb", []string{"recording"}, 2, "recording get"},
		{"unknown verb", []string{"recording", "put"}, 2, "recording get"},
		{"no workflow", []string{"recording", "get", "-o", "x.webm"}, 1, "want exactly one"},
		{"no output", []string{"recording", "get", "wf"}, 1, "-o"},
		{"bad timeout", []string{"recording", "get", "wf", "-o", "x.webm", "--timeout", "0s"}, 1, "timeout"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, map[string]string{}, c.args...)
			if code != c.code || !strings.Contains(stderr, c.want) {
				t.Fatalf("exit %d, stderr %q; want exit %d mentioning %q", code, stderr, c.code, c.want)
			}
		})
	}
}
