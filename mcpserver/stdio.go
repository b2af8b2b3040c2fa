package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxStdioLine bounds one JSON-RPC message on stdin, as the SDK's own
// stdio transport does.
const maxStdioLine = mcp.DefaultMaxLineLength

// Stdio serves one client over in and out, one JSON-RPC message per line,
// as the SDK's stdio transport does, except that a line that is not JSON
// is answered with a parse error (-32700) and skipped: with the SDK's, one
// bad line ended the server. out is not closed.
func Stdio(in io.Reader, out io.Writer) mcp.Transport {
	w := &lockedWriter{w: out}
	return &mcp.IOTransport{Reader: io.NopCloser(&jsonLines{r: bufio.NewReaderSize(in, 64<<10), errs: w}), Writer: w}
}

// lockedWriter serialises writes, so a parse error never lands inside a
// message the server is writing (the SDK writes each in one call).
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil }

// jsonLines passes on the lines of r that hold JSON and answers every
// other one on errs.
type jsonLines struct {
	r    *bufio.Reader
	errs io.Writer
	buf  []byte // what is left of the line being passed on
}

func (j *jsonLines) Read(p []byte) (int, error) {
	for len(j.buf) == 0 {
		line, err := j.line()
		if t := bytes.TrimSpace(line); len(t) > 0 {
			if problem := checkLine(t); problem != "" {
				j.parseError(problem)
			} else {
				j.buf = append(t, '\n')
			}
		}
		if err != nil && len(j.buf) == 0 {
			return 0, err
		}
		if err != nil {
			break
		}
	}
	n := copy(p, j.buf)
	j.buf = j.buf[n:]
	return n, nil
}

// line reads one line, at most maxStdioLine bytes of it (a longer one is
// read to its end and returned as nil with an error line of its own).
func (j *jsonLines) line() ([]byte, error) {
	var out []byte
	long := false
	for {
		chunk, err := j.r.ReadSlice('\n')
		if !long {
			out = append(out, chunk...)
			if len(out) > maxStdioLine {
				out, long = nil, true
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if long {
			j.parseError(fmt.Sprintf("a message is limited to %d bytes", maxStdioLine))
		}
		return out, err
	}
}

// checkLine says what is wrong with a line that is not one JSON value.
func checkLine(line []byte) string {
	if json.Valid(line) {
		return ""
	}
	var v any
	if err := json.Unmarshal(line, &v); err != nil {
		return err.Error()
	}
	return "not one JSON value"
}

// parseError answers a line that could not be read, as JSON-RPC says: id
// null, code -32700.
func (j *jsonLines) parseError(problem string) {
	msg, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": nil,
		"error": map[string]any{"code": -32700, "message": "parse error: " + problem + "; send one JSON-RPC message per line"},
	})
	_, _ = j.errs.Write(append(msg, '\n'))
}
