package main

import (
	"bytes"
	"context"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type authRT struct{ value string }

func (a authRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if a.value != "" {
		r.Header.Set("Authorization", a.value)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// serveHTTP runs `mcp --http` in this process (no Temporal is reached until
// a tool is called) and returns its endpoint and stderr.
func serveHTTP(t *testing.T, environ map[string]string) (string, *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &syncBuffer{}
	env := &cliEnv{Stdout: &syncBuffer{}, Stderr: stderr, Getenv: func(k string) string { return environ[k] }}
	done := make(chan error, 1)
	go func() { done <- runMCP(ctx, env, []string{"--address", "127.0.0.1:1", "--http", "127.0.0.1:0"}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("mcp: %v", err)
		}
	})
	at := regexp.MustCompile(`serving MCP at (http://\S+/mcp)`)
	deadline := time.Now().Add(10 * time.Second)
	for !at.MatchString(stderr.String()) {
		select {
		case err := <-done:
			t.Fatalf("mcp ended: %v\n%s", err, stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("mcp --http did not start:\n%s", stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return at.FindStringSubmatch(stderr.String())[1], stderr
}

// connect initializes an MCP session (which needs no Temporal) with the
// given Authorization header.
func connect(endpoint, auth string) (*mcp.ClientSession, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return mcp.NewClient(&mcp.Implementation{Name: "auth-test", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: authRT{auth}}}, nil)
}

// Over HTTP every request needs the bearer token: the one in the
// environment, else the one printed at start. Missing or wrong, the server
// answers 401 and no MCP session opens.
func TestMCPHTTPToken(t *testing.T) {
	const given = "given-token-0123456789abcdef"
	for _, tc := range []struct {
		name    string
		environ map[string]string
	}{
		{"from the environment", map[string]string{"DURABLE_BROWSER_HTTP_TOKEN": given}},
		{"printed at start", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			endpoint, stderr := serveHTTP(t, tc.environ)
			token := given
			printed := regexp.MustCompile(`bearer token (\S+) `).FindStringSubmatch(stderr.String())
			if tc.environ != nil {
				if printed != nil || strings.Contains(stderr.String(), given) {
					t.Fatalf("a given token was printed:\n%s", stderr)
				}
			} else {
				if printed == nil {
					t.Fatalf("no token printed:\n%s", stderr)
				}
				token = printed[1]
			}
			for _, bad := range []string{"", "Bearer wrong-token-0123456789abcdef", "Bearer " + token[:len(token)-1], "Basic " + token} {
				req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				if bad != "" {
					req.Header.Set("Authorization", bad)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusUnauthorized {
					t.Fatalf("Authorization %q: status %d, want 401", bad, resp.StatusCode)
				}
				if cs, err := connect(endpoint, bad); err == nil {
					_ = cs.Close()
					t.Fatalf("Authorization %q: an MCP client connected", bad)
				}
			}
			cs, err := connect(endpoint, "Bearer "+token)
			if err != nil {
				t.Fatalf("with the right token: %v", err)
			}
			defer func() { _ = cs.Close() }()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			tools, err := cs.ListTools(ctx, nil)
			if err != nil || len(tools.Tools) == 0 {
				t.Fatalf("tools/list with the right token: %v", err)
			}
		})
	}
}

// A token that is too short is refused at start, naming the flag.
func TestMCPHTTPTokenTooShort(t *testing.T) {
	stderr := &syncBuffer{}
	env := &cliEnv{Stdout: &syncBuffer{}, Stderr: stderr, Getenv: func(k string) string {
		if k == "DURABLE_BROWSER_HTTP_TOKEN" {
			return "short"
		}
		return ""
	}}
	err := runMCP(context.Background(), env, []string{"--address", "127.0.0.1:1", "--http", "127.0.0.1:0"})
	if err == nil || !strings.Contains(err.Error(), "http-token") || !strings.Contains(err.Error(), "at least 16") {
		t.Fatalf("got %v, want a refusal naming --http-token and its length", err)
	}
}
