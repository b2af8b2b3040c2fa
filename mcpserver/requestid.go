package mcpserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK gives a tool handler no JSON-RPC request id, so both transports
// copy it into the call's _meta under this key on the way in (a value the
// client put there is overwritten).
const metaRequestID = "io.github.durable-browser/request-id"

// maxHTTPBody bounds one POSTed JSON-RPC message.
const maxHTTPBody = 4 << 20

// requestID reads the id the transport copied into _meta.
func requestID(meta mcp.Meta) (string, bool) {
	switch v := meta[metaRequestID].(type) {
	case string:
		if v == "" {
			return "", false
		}
		if len(v) > 100 {
			// Update ids stay short; the hash keeps long ones distinct.
			sum := sha256.Sum256([]byte(v))
			return fmt.Sprintf("h%x", sum[:12]), true
		}
		return "s" + v, true
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), true
	case json.Number:
		return v.String(), true
	}
	return "", false
}

// withRequestID returns a tools/call's params with the request id in _meta.
// Params that are not an object are returned as they are (the SDK refuses
// them).
func withRequestID(params, id json.RawMessage) json.RawMessage {
	var p map[string]json.RawMessage
	if len(params) > 0 && string(params) != "null" {
		if json.Unmarshal(params, &p) != nil {
			return params
		}
	}
	if p == nil {
		p = map[string]json.RawMessage{}
	}
	var meta map[string]json.RawMessage
	if m := p["_meta"]; len(m) > 0 && string(m) != "null" {
		if json.Unmarshal(m, &meta) != nil {
			return params
		}
	}
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	meta[metaRequestID] = id
	var err error
	if p["_meta"], err = json.Marshal(meta); err != nil {
		return params
	}
	out, err := json.Marshal(p)
	if err != nil {
		return params
	}
	return out
}

// requestIDs wraps a transport (stdio) so each tools/call carries its id.
type requestIDs struct{ mcp.Transport }

func (t requestIDs) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return idConn{c}, nil
}

type idConn struct{ mcp.Connection }

func (c idConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if r, ok := m.(*jsonrpc.Request); ok && err == nil && r.Method == "tools/call" && r.ID.IsValid() {
		if id, err := json.Marshal(r.ID.Raw()); err == nil {
			r.Params = withRequestID(r.Params, id)
		}
	}
	return m, err
}

// tagHTTP does the same for streamable HTTP: it rewrites a POSTed tools/call
// (or a batch holding some) before the SDK reads it.
func tagHTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxHTTPBody+1))
		_ = r.Body.Close()
		if err != nil {
			http.Error(w, "reading the request body: "+err.Error(), http.StatusBadRequest)
			return
		}
		if len(body) > maxHTTPBody {
			http.Error(w, fmt.Sprintf("a JSON-RPC message is limited to %d bytes", maxHTTPBody), http.StatusRequestEntityTooLarge)
			return
		}
		body = tagBody(body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
}

// tagBody tags one message or each message of a batch.
func tagBody(body []byte) []byte {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(trimmed, &batch) != nil {
			return body
		}
		for i := range batch {
			batch[i] = tagMessage(batch[i])
		}
		out, err := json.Marshal(batch)
		if err != nil {
			return body
		}
		return out
	}
	return tagMessage(body)
}

func tagMessage(raw json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	var method string
	_ = json.Unmarshal(m["method"], &method)
	id, ok := m["id"]
	if method != "tools/call" || !ok || string(id) == "null" {
		return raw
	}
	params := withRequestID(m["params"], id)
	if bytes.Equal(params, m["params"]) {
		return raw
	}
	m["params"] = params
	out, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return out
}
