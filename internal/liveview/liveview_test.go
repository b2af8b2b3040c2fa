package liveview

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

func TestCheckToken(t *testing.T) {
	tok := newToken()
	if len(tok) != 43 {
		t.Fatalf("token %q: want 43 base64url characters (256 bits)", tok)
	}
	if newToken() == tok {
		t.Fatal("two tokens are equal")
	}
	for _, c := range []struct {
		name, want, got string
		ok              bool
	}{
		{"same", tok, tok, true},
		{"empty presented", tok, "", false},
		{"empty wanted", "", "", false},
		{"prefix", tok, tok[:42], false},
		{"longer", tok, tok + "A", false},
		{"one character off", tok, tok[:42] + string(tok[42]^1), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := checkToken(c.want, c.got)
			if (err == nil) != c.ok {
				t.Fatalf("checkToken = %v, want ok %v", err, c.ok)
			}
		})
	}
}

func TestCheckOrigin(t *testing.T) {
	own, _ := url.Parse("http://127.0.0.1:7801")
	for _, c := range []struct {
		origin string
		ok     bool
	}{
		{"http://127.0.0.1:7801", true},
		{"HTTP://127.0.0.1:7801", true},
		{"http://127.0.0.1:7801/", true},
		{"", false},
		{"null", false},
		{"http://127.0.0.1:7802", false},
		{"https://127.0.0.1:7801", false},
		{"http://localhost:7801", false},
		{"http://evil.example", false},
		{"http://127.0.0.1:7801.evil.example", false},
		{"http://user@127.0.0.1:7801", false},
	} {
		if err := checkOrigin(own, c.origin); (err == nil) != c.ok {
			t.Errorf("checkOrigin(%q) = %v, want ok %v", c.origin, err, c.ok)
		}
	}
}

// clock is a settable time for the hands.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestHands(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	h := NewHands(c.now)
	send := func() error { return nil }

	e0, drove, err := h.Agent()
	if err != nil || drove {
		t.Fatalf("fresh hands: Agent = %v, %v", drove, err)
	}
	ctx := WithEpoch(context.Background(), e0)
	if err := h.Dispatch(ctx, send); err != nil {
		t.Fatalf("agent action in its own epoch refused: %v", err)
	}

	// The person clicks: an action prepared before never reaches the page.
	if err := h.Person(send); err != nil {
		t.Fatal(err)
	}
	sent := false
	err = h.Dispatch(ctx, func() error { sent = true; return nil })
	var de *DrivingError
	if !errors.As(err, &de) || !de.Stale || !errors.Is(err, ErrPersonDriving) || sent {
		t.Fatalf("stale action: err %v, sent %v", err, sent)
	}
	// Within the window the next call is refused, and after it is let in
	// and told once.
	c.t = c.t.Add(DriveWindow - time.Millisecond)
	if _, _, err := h.Agent(); !errors.Is(err, ErrPersonDriving) {
		t.Fatalf("call within the drive window: %v", err)
	}
	c.t = c.t.Add(2 * time.Millisecond)
	e1, drove, err := h.Agent()
	if err != nil || !drove || e1 == e0 {
		t.Fatalf("call after the window: epoch %d (was %d), drove %v, err %v", e1, e0, drove, err)
	}
	if _, drove, _ := h.Agent(); drove {
		t.Fatal("told twice that a person drove")
	}

	// Take over holds past the window, until given back.
	h.TakeOver()
	c.t = c.t.Add(time.Hour)
	if _, _, err := h.Agent(); !errors.As(err, &de) || !de.TakenOver {
		t.Fatalf("call while taken over: %v", err)
	}
	if err := h.Dispatch(context.Background(), send); err == nil {
		t.Fatal("an action outside a call went through while taken over")
	}
	h.GiveBack()
	// Held, and given back without any input: nobody drove.
	e2, drove, err := h.Agent()
	if err != nil || drove || e2 == e1 {
		t.Fatalf("after a take over without input: epoch %d (was %d), drove %v, err %v", e2, e1, drove, err)
	}
	// Held with input: drove.
	h.TakeOver()
	_ = h.Person(send)
	h.GiveBack()
	c.t = c.t.Add(DriveWindow)
	if _, drove, err := h.Agent(); err != nil || !drove {
		t.Fatalf("after a take over with a click: drove %v, err %v", drove, err)
	}

	// A handoff's grant ends at the agent's next call (after the handoff).
	// No one opened the viewer: the agent is not told a person drove.
	h.Grant()
	if st := h.State(); !st.Person || !st.TakenOver {
		t.Fatalf("granted: state %+v", st)
	}
	e3, drove, err := h.Agent()
	if err != nil || drove {
		t.Fatalf("call after a handoff no one took: drove %v, err %v", drove, err)
	}
	// An action prepared before the grant is still never sent.
	h.Grant()
	if err := h.Dispatch(WithEpoch(context.Background(), e3), send); !errors.As(err, &de) || !de.Stale {
		t.Fatalf("an action prepared before a grant: %v", err)
	}
	// The person moved the pointer over the page under the grant (a
	// hover may open a menu): drove.
	if sent, _ := h.Move(send); !sent {
		t.Fatal("a move while granted was dropped")
	}
	c.t = c.t.Add(DriveWindow)
	if _, drove, err := h.Agent(); err != nil || !drove {
		t.Fatalf("call after a handoff whose person moved the pointer: drove %v, err %v", drove, err)
	}

	// A plain pointer move is dropped unless the person has the browser.
	if sent, _ := h.Move(send); sent {
		t.Fatal("a resting cursor drove the page")
	}
	_ = h.Person(send)
	if sent, _ := h.Move(send); !sent {
		t.Fatal("a move while driving was dropped")
	}
}

func listen(t *testing.T, o Options) *Server {
	t.Helper()
	o.Addr = "127.0.0.1:0"
	s, err := Listen(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestViewerPageHeaders(t *testing.T) {
	s := listen(t, Options{FrameAncestors: "https://ops.example.com"})
	s.Open("tag-1", Page{CDPURL: "ws://127.0.0.1:1/none", Active: func(context.Context) (string, error) { return "", errors.New("none") }})
	addr, ok := s.URL("tag-1")
	if !ok {
		t.Fatal("no URL for an open session")
	}
	u, _ := url.Parse(addr)
	tok := strings.TrimPrefix(u.Fragment, "t=")
	if len(tok) != 43 || u.Path == "" || strings.Contains(u.Path, "tag-1") {
		t.Fatalf("address %q: want /v/<random id>#t=<43 characters>", addr)
	}
	resp, err := http.Get(s.base.String() + u.Path)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	h := resp.Header
	csp := h.Get("Content-Security-Policy")
	if resp.StatusCode != 200 || h.Get("Referrer-Policy") != "no-referrer" ||
		!strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") ||
		!strings.Contains(csp, "frame-ancestors https://ops.example.com") {
		t.Fatalf("status %d, headers %v", resp.StatusCode, h)
	}
	// No page for an unknown id; none once the session ended.
	s.End("tag-1")
	resp, err = http.Get(s.base.String() + u.Path)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("page of an ended session: status %d", resp.StatusCode)
	}
	if _, err := Listen(Options{Addr: "127.0.0.1:0", FrameAncestors: "* 'unsafe-inline'"}); err == nil {
		t.Fatal("a frame ancestor that is not one origin was taken")
	}
}

func TestSocketRefusals(t *testing.T) {
	s := listen(t, Options{})
	s.Open("tag-1", Page{CDPURL: "ws://127.0.0.1:1/none", Active: func(context.Context) (string, error) { return "", errors.New("none") }})
	addr, _ := s.URL("tag-1")
	u, _ := url.Parse(addr)
	id := strings.TrimPrefix(u.Path, "/v/")
	wsURL := "ws://" + s.Addr() + "/ws/" + id
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// Another origin is refused at the upgrade.
	_, resp, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"http://evil.example"}}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign origin: err %v, resp %v", err, resp)
	}
	// The right origin with a wrong token is closed before anything is sent.
	c, _, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {s.base.String()}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"token":"`+strings.Repeat("A", 43)+`"}`)); err != nil {
		t.Fatal(err)
	}
	_, _, err = c.Read(ctx)
	if websocket.CloseStatus(err) != closeBadToken {
		t.Fatalf("wrong token: %v", err)
	}
	// Input before the token is taken as a wrong token.
	c, _, err = websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {s.base.String()}}})
	if err != nil {
		t.Fatal(err)
	}
	_ = c.Write(ctx, websocket.MessageText, []byte(`{"t":"goto","url":"http://127.0.0.1:1/"}`))
	if _, _, err = c.Read(ctx); websocket.CloseStatus(err) != closeBadToken {
		t.Fatalf("input before the token: %v", err)
	}
}
