package chrome

import (
	"errors"
	"testing"
)

func TestParseDevToolsActivePort(t *testing.T) {
	tests := []struct {
		in   string
		port int
		path string
		ok   bool
	}{
		{"41234\n/devtools/browser/abc-def\n", 41234, "/devtools/browser/abc-def", true},
		{"41234\r\n/devtools/browser/x", 41234, "/devtools/browser/x", true},
		{"41234\n", 0, "", false},
		{"0\n/devtools/browser/x\n", 0, "", false},
		{"70000\n/devtools/browser/x\n", 0, "", false},
		{"abc\n/devtools/browser/x\n", 0, "", false},
		{"1\n/json\n", 0, "", false},
		{"", 0, "", false},
	}
	for _, tt := range tests {
		port, path, err := ParseDevToolsActivePort([]byte(tt.in))
		if (err == nil) != tt.ok || port != tt.port || path != tt.path {
			t.Errorf("ParseDevToolsActivePort(%q) = %d, %q, %v", tt.in, port, path, err)
		}
	}
}

func FuzzParseDevToolsActivePort(f *testing.F) {
	f.Add([]byte("41234\n/devtools/browser/abc\n"))
	f.Add([]byte("\n\n"))
	f.Add([]byte("65535\n/devtools/browser/ x"))
	f.Fuzz(func(t *testing.T, b []byte) {
		port, path, err := ParseDevToolsActivePort(b)
		if err == nil && (port < 1 || port > 65535 || len(path) < len("/devtools/browser/")) {
			t.Fatalf("accepted port %d path %q", port, path)
		}
	})
}

func TestParseEndpoint(t *testing.T) {
	tests := []struct {
		in string
		ok bool
	}{
		{"http://127.0.0.1:9333", true},
		{"ws://127.0.0.1:9333/devtools/browser/x", true},
		{"wss://example.test/x", true},
		{"ftp://127.0.0.1", false},
		{"127.0.0.1:9333", false},
		{"http://", false},
		{"", false},
	}
	for _, tt := range tests {
		_, err := ParseEndpoint(tt.in)
		if (err == nil) != tt.ok {
			t.Errorf("ParseEndpoint(%q) err = %v", tt.in, err)
		}
		if err != nil && !errors.Is(err, ErrBadEndpoint) {
			t.Errorf("ParseEndpoint(%q) err not ErrBadEndpoint: %v", tt.in, err)
		}
	}
}

func FuzzParseEndpoint(f *testing.F) {
	f.Add("http://127.0.0.1:9333")
	f.Add("ws://[::1]:1/devtools/browser/x")
	f.Add("http://:80")
	f.Fuzz(func(t *testing.T, s string) {
		u, err := ParseEndpoint(s)
		if err == nil && u.Hostname() == "" {
			t.Fatalf("accepted %q without host", s)
		}
	})
}
