package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A line that is not JSON is answered with a parse error and the session
// goes on: the next request is served.
func TestStdioSurvivesALineThatIsNotJSON(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, Stdio(inR, outW)) }()
	lines := bufio.NewScanner(outR)
	next := func() map[string]any {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("no answer: %v", lines.Err())
		}
		var m map[string]any
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
			t.Fatalf("an answer that is not JSON: %q", lines.Text())
		}
		return m
	}
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}

	send("this is not json")
	m := next()
	e, _ := m["error"].(map[string]any)
	if e == nil || e["code"] != float64(-32700) || !strings.Contains(e["message"].(string), "parse error") || m["id"] != nil {
		t.Fatalf("a line that is not JSON: %v, want a -32700 parse error with id null", m)
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	if m := next(); m["id"] != float64(1) || m["result"] == nil {
		t.Fatalf("initialize after the bad line: %v", m)
	}
	_ = inW.Close()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("the server did not end at the end of its input")
	}
}
