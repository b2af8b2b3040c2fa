package liveview

import (
	"encoding/json"
	"errors"
	"net/url"
	"testing"

	"github.com/go-rod/rod/lib/proto"
)

// FuzzInput: whatever a viewer sends, the page gets only one of the input
// methods, with coordinates, keys and texts inside their bounds and an
// address that is http or https with a host; anything else is an errInput.
func FuzzInput(f *testing.F) {
	for _, s := range []string{
		`{"t":"mouse","type":"mousePressed","x":10,"y":20,"button":"left","buttons":1,"clickCount":1}`,
		`{"t":"key","type":"keyDown","key":"a","code":"KeyA","text":"a","keyCode":65}`,
		`{"t":"goto","url":"https://example.com/"}`, `{"t":"goto","url":"javascript:alert(1)"}`,
		`{"t":"paste","text":"hello"}`, `{"t":"wheel","dx":1e300}`, `{"t":"back"}`, `{"t":"take"}`, `{"t":"x"}`,
	} {
		f.Add([]byte(s))
	}
	allowed := map[string]bool{"Input.dispatchMouseEvent": true, "Input.dispatchKeyEvent": true, "Input.insertText": true, "Page.navigate": true, "Page.reload": true}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var in input
		if json.Unmarshal(raw, &in) != nil {
			return
		}
		c, err := commandOf(in)
		if err != nil {
			var ei errInput
			if !errors.As(err, &ei) {
				t.Fatalf("error %v is not an errInput", err)
			}
			return
		}
		if c.take || c.give || c.back {
			return
		}
		if !allowed[c.method] {
			t.Fatalf("method %q sent to the page", c.method)
		}
		switch p := c.params.(type) {
		case proto.InputDispatchMouseEvent:
			if !okCoord(p.X) || !okCoord(p.Y) || !okCoord(p.DeltaX) || !okCoord(p.DeltaY) || p.ClickCount > 3 {
				t.Fatalf("mouse event out of bounds: %+v", p)
			}
		case proto.InputDispatchKeyEvent:
			if len(p.Key) > 32 || len(p.Code) > 32 || len(p.Text) > 8 {
				t.Fatalf("key event out of bounds: %+v", p)
			}
		case proto.InputInsertText:
			if len(p.Text) > maxPaste {
				t.Fatalf("paste of %d bytes", len(p.Text))
			}
		case proto.PageNavigate:
			u, err := url.Parse(p.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				t.Fatalf("navigation to %q", p.URL)
			}
		case proto.PageReload:
		default:
			t.Fatalf("params of type %T", c.params)
		}
	})
}
