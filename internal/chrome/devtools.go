package chrome

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-rod/rod/lib/cdp"
)

// ErrBadEndpoint is wrapped by errors about a DevTools endpoint that cannot be
// used (wrong scheme, no host, no websocket URL behind it).
var ErrBadEndpoint = errors.New("bad DevTools endpoint")

// EndpointError explains why an endpoint is unusable.
type EndpointError struct {
	Reason string
}

func (e *EndpointError) Error() string {
	return "DevTools endpoint " + e.Reason + ": give http://host:port or ws://host:port/devtools/browser/<id>"
}

// Unwrap lets errors.Is(err, ErrBadEndpoint) match.
func (e *EndpointError) Unwrap() error { return ErrBadEndpoint }

// ParseEndpoint checks a DevTools endpoint (http, https, ws or wss with a
// host) and returns it parsed. An endpoint is a full-control credential:
// callers must keep it out of logs and results.
func ParseEndpoint(endpoint string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(endpoint))
	if err != nil {
		return nil, &EndpointError{Reason: "is not a URL"}
	}
	switch u.Scheme {
	case "http", "https", "ws", "wss":
	default:
		return nil, &EndpointError{Reason: fmt.Sprintf("has scheme %q", u.Scheme)}
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, &EndpointError{Reason: "has no host"}
	}
	return u, nil
}

// ResolveWS turns an endpoint into the browser's websocket URL: ws(s) URLs
// are returned as they are; http(s) ones are asked /json/version, and the
// answer's host is replaced by the endpoint's (so a forwarded port works).
func ResolveWS(ctx context.Context, endpoint string) (string, error) {
	u, err := ParseEndpoint(endpoint)
	if err != nil {
		return "", err
	}
	if u.Scheme == "ws" || u.Scheme == "wss" {
		return u.String(), nil
	}
	ver := *u
	ver.Path = strings.TrimSuffix(ver.Path, "/") + "/json/version"
	ver.RawQuery, ver.Fragment = "", ""
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ver.String(), nil)
	if err != nil {
		return "", &EndpointError{Reason: "is not a URL"}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("DevTools endpoint %s does not answer (is the browser running with --remote-debugging-port?): %w", u.Host, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	if res.StatusCode != http.StatusOK {
		return "", &EndpointError{Reason: fmt.Sprintf("answered /json/version with HTTP %d", res.StatusCode)}
	}
	var v struct {
		WS string `json:"webSocketDebuggerUrl"`
	}
	if err := json.Unmarshal(body, &v); err != nil || v.WS == "" {
		return "", &EndpointError{Reason: "answered /json/version without a webSocketDebuggerUrl"}
	}
	ws, err := url.Parse(v.WS)
	if err != nil || (ws.Scheme != "ws" && ws.Scheme != "wss") {
		return "", &EndpointError{Reason: "answered /json/version with an unusable webSocketDebuggerUrl"}
	}
	ws.Host = u.Host
	if u.Scheme == "https" {
		ws.Scheme = "wss"
	}
	return ws.String(), nil
}

// VersionWS asks a local DevTools port for its browser websocket URL.
func VersionWS(ctx context.Context, port int) (string, error) {
	return ResolveWS(ctx, "http://127.0.0.1:"+strconv.Itoa(port))
}

// ParseDevToolsActivePort reads the DevToolsActivePort file Chrome writes in
// its user data directory: the port on line one, the browser path on line two.
func ParseDevToolsActivePort(b []byte) (port int, path string, err error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	var lines []string
	for sc.Scan() && len(lines) < 2 {
		lines = append(lines, strings.TrimSpace(sc.Text()))
	}
	if len(lines) < 2 {
		return 0, "", errors.New("DevToolsActivePort: incomplete")
	}
	port, err = strconv.Atoi(lines[0])
	if err != nil || port <= 0 || port > 65535 {
		return 0, "", errors.New("DevToolsActivePort: bad port")
	}
	if !strings.HasPrefix(lines[1], "/devtools/browser/") || strings.ContainsAny(lines[1], " \t?#") {
		return 0, "", errors.New("DevToolsActivePort: bad path")
	}
	return port, lines[1], nil
}

// Conn is one DevTools websocket connection. Calls are sequential; events are
// read and dropped. Unlike rod's client it never panics on a malformed
// message from the browser: it returns an error instead.
type Conn struct {
	mu   sync.Mutex
	ws   *cdp.WebSocket
	conn net.Conn
	next int
}

// keepConn keeps the dialled connection so deadlines can bound every read.
type keepConn struct {
	d    net.Dialer
	conn net.Conn
}

func (k *keepConn) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := k.d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	dl, ok := ctx.Deadline()
	if !ok {
		dl = time.Now().Add(30 * time.Second)
	}
	_ = c.SetDeadline(dl) // bounds the handshake
	k.conn = c
	return c, nil
}

// Dial opens a DevTools websocket (ws:// only; wss is not needed on loopback
// and remote providers have their own clients).
func Dial(ctx context.Context, wsURL string) (*Conn, error) {
	u, err := ParseEndpoint(wsURL)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "ws" {
		return nil, &EndpointError{Reason: "is not a ws:// URL"}
	}
	if u.Port() == "" {
		u.Host += ":80"
		wsURL = u.String()
	}
	k := &keepConn{}
	ws := &cdp.WebSocket{Dialer: k}
	if err := ws.Connect(ctx, wsURL, nil); err != nil {
		if k.conn != nil {
			_ = k.conn.Close()
		}
		return nil, fmt.Errorf("connecting to DevTools at %s: %w", u.Host, err)
	}
	_ = k.conn.SetDeadline(time.Time{})
	return &Conn{ws: ws, conn: k.conn}, nil
}

// Close ends the connection.
func (c *Conn) Close() error { return c.conn.Close() }

// CallError is an error the browser answered a call with.
type CallError struct {
	Method  string
	Code    int
	Message string
}

func (e *CallError) Error() string {
	return fmt.Sprintf("%s: %s (%d)", e.Method, e.Message, e.Code)
}

// Call sends method with params and decodes the result into out (which may
// be nil). The context bounds the whole exchange.
func (c *Conn) Call(ctx context.Context, method string, params, out any) error {
	return c.CallSession(ctx, "", method, params, out)
}

// CallSession is Call on an attached target's session (flat protocol).
func (c *Conn) CallSession(ctx context.Context, sessionID, method string, params, out any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	id := c.next
	if params == nil {
		params = struct{}{}
	}
	req := map[string]any{"id": id, "method": method, "params": params}
	if sessionID != "" {
		req["sessionId"] = sessionID
	}
	msg, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	dl, ok := ctx.Deadline()
	if !ok {
		dl = time.Now().Add(30 * time.Second)
	}
	_ = c.conn.SetDeadline(dl)
	defer func() { _ = c.conn.SetDeadline(time.Time{}) }()
	stop := context.AfterFunc(ctx, func() { _ = c.conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if err := c.ws.Send(msg); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	for {
		data, err := c.ws.Read()
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("%s: %w", method, ctx.Err())
			}
			return fmt.Errorf("%s: %w", method, err)
		}
		var res struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(data, &res); err != nil {
			return fmt.Errorf("%s: malformed DevTools message: %w", method, err)
		}
		if res.ID != id {
			continue // an event or a late answer
		}
		if res.Error != nil {
			return &CallError{Method: method, Code: res.Error.Code, Message: res.Error.Message}
		}
		if out != nil && len(res.Result) > 0 {
			if err := json.Unmarshal(res.Result, out); err != nil {
				return fmt.Errorf("%s: malformed result: %w", method, err)
			}
		}
		return nil
	}
}
