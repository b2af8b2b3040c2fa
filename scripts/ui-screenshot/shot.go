package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/durable-browser/durable-browser/internal/chrome"
	"github.com/durable-browser/durable-browser/internal/devstack"
)

// camera is a headless Chromium with one page, driven over DevTools. The UI
// is a JavaScript app that keeps requests open, so Chromium's own
// --screenshot with a virtual time budget never finishes: the camera loads
// the page, waits until the page's text shows what the picture must show,
// and only then takes it.
type camera struct {
	conn    *chrome.Conn
	session string
}

// openCamera starts Chromium (its profile under work) at w×h CSS pixels.
func openCamera(ctx context.Context, ps *procs, chromePath, work string, w, h int) (*camera, error) {
	profile := filepath.Join(work, "camera-profile")
	if err := os.MkdirAll(profile, 0o700); err != nil {
		return nil, err
	}
	cmd := exec.Command(chromePath, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--no-first-run", "--no-default-browser-check", "--disable-extensions", "--mute-audio",
		"--user-data-dir="+profile, "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
		fmt.Sprintf("--window-size=%d,%d", w, h), "about:blank")
	stderr := &devstack.SyncBuffer{}
	cmd.Stderr = stderr
	if err := ps.start("chromium (camera)", cmd, 0, 0); err != nil {
		return nil, err
	}
	var port int
	err := waitUntil(ctx, "Chromium to open its DevTools port (DevToolsActivePort in its profile)", func() (string, bool, error) {
		b, err := os.ReadFile(filepath.Join(profile, "DevToolsActivePort"))
		if err != nil {
			if !stillRunning(cmd.Process.Pid) {
				return "", false, fmt.Errorf("chromium exited: %s", tail(stderr.String()))
			}
			return "no DevToolsActivePort yet", false, nil
		}
		p, _, err := chrome.ParseDevToolsActivePort(b)
		port = p
		return "", err == nil, nil
	})
	if err != nil {
		return nil, err
	}
	ws, err := chrome.VersionWS(ctx, port)
	if err != nil {
		return nil, err
	}
	conn, err := chrome.Dial(ctx, ws)
	if err != nil {
		return nil, err
	}
	c := &camera{conn: conn}
	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := conn.Call(ctx, "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		conn.Close()
		return nil, err
	}
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	if err := conn.Call(ctx, "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached); err != nil {
		conn.Close()
		return nil, err
	}
	c.session = attached.SessionID
	if err := c.call(ctx, "Emulation.setDeviceMetricsOverride", map[string]any{"width": w, "height": h, "deviceScaleFactor": 1, "mobile": false}, nil); err != nil {
		conn.Close()
		return nil, err
	}
	return c, nil
}

func (c *camera) call(ctx context.Context, method string, params, out any) error {
	return c.conn.CallSession(ctx, c.session, method, params, out)
}

// close closes the DevTools connection; procs.stop ends the browser.
func (c *camera) close() { _ = c.conn.Close() }

func (c *camera) navigate(ctx context.Context, url string) error {
	var res struct {
		ErrorText string `json:"errorText"`
	}
	if err := c.call(ctx, "Page.navigate", map[string]any{"url": url}, &res); err != nil {
		return err
	}
	if res.ErrorText != "" {
		return fmt.Errorf("loading %s: %s", url, res.ErrorText)
	}
	return nil
}

// eval runs expr in the page and decodes its value into out.
func (c *camera) eval(ctx context.Context, expr string, out any) error {
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := c.call(ctx, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &res); err != nil {
		return err
	}
	if res.Exception != nil {
		return fmt.Errorf("script failed in the page: %s %s", res.Exception.Text, res.Exception.Exception.Description)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(res.Result.Value, out)
}

// waitPage runs expr (which returns a string: empty when the page is ready,
// else what it still lacks) until it returns empty.
func (c *camera) waitPage(ctx context.Context, what, expr string) error {
	return waitUntil(ctx, what, func() (string, bool, error) {
		var missing string
		// No shorter timeout of its own: a call cut short closes the
		// connection.
		if err := c.eval(ctx, expr, &missing); err != nil {
			return err.Error(), false, nil
		}
		return missing, missing == "", nil
	})
}

// shoot writes the page's viewport as a PNG.
func (c *camera) shoot(ctx context.Context, file string) error {
	var res struct {
		Data string `json:"data"`
	}
	if err := c.call(ctx, "Page.captureScreenshot", map[string]any{"format": "png"}, &res); err != nil {
		return err
	}
	png, err := base64.StdEncoding.DecodeString(res.Data)
	if err != nil {
		return fmt.Errorf("Page.captureScreenshot: %w", err)
	}
	return os.WriteFile(file, png, 0o644)
}

// tail is the end of Chromium's stderr for an error message, without the
// line that prints its DevTools address.
func tail(s string) string {
	var keep []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if !strings.Contains(l, "DevTools listening") && !strings.Contains(l, "dbus") {
			keep = append(keep, l)
		}
	}
	if len(keep) > 5 {
		keep = keep[len(keep)-5:]
	}
	return strings.Join(keep, "\n")
}
