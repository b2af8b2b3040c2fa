// Package liveview serves the live view: per session, a web page showing
// the session's active page as a CDP screencast and sending a person's
// input to it, and the hands that keep the person and the agent from
// driving at once. Its URL is a full-control credential: the token rides
// in the fragment and is the WebSocket's first message.
package liveview

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/rs/zerolog"

	"github.com/durable-browser/durable-browser/internal/liveview/book"
)

//go:embed static
var static embed.FS

// Options configure a live view server.
type Options struct {
	// Addr is where it listens (host:port; port 0 picks one).
	Addr string
	// BaseURL is the viewer's own origin as people reach it (scheme://host:port,
	// e.g. behind a tunnel or proxy); default http://<the listening address>.
	// A WebSocket upgrade from any other Origin is refused.
	BaseURL string
	// FrameAncestors is the one origin allowed to frame the viewer; empty:
	// none may.
	FrameAncestors string
	// WatchOnly drops every input of every viewer on the server.
	WatchOnly bool
	// Book keeps the addresses handed out for handoffs (Dir "": none kept).
	Book book.Book
	// FrameQuality is the screencast's JPEG quality (default 70).
	FrameQuality int
	Logger       zerolog.Logger
}

// Page is how a session's browser is reached: its DevTools address and
// its active page, which the view follows.
type Page struct {
	CDPURL string
	Active func(ctx context.Context) (targetID string, err error)
}

// Server is a live view server.
type Server struct {
	o    Options
	base *url.URL
	csp  string
	ln   net.Listener
	srv  *http.Server

	mu    sync.Mutex
	byTag map[string]*session
	byID  map[string]*session
}

// session is one browser's view: its token, hands and viewer slot.
type session struct {
	id, tag, token string
	page           Page
	hands          *Hands
	ctx            context.Context
	end            context.CancelFunc

	mu     sync.Mutex
	viewer bool
}

// Listen starts a live view server.
func Listen(o Options) (*Server, error) {
	if o.FrameQuality <= 0 || o.FrameQuality > 100 {
		o.FrameQuality = 70
	}
	if o.FrameAncestors != "" {
		if err := checkAncestor(o.FrameAncestors); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return nil, fmt.Errorf("liveview: listen on %s: %w", o.Addr, err)
	}
	base := o.BaseURL
	if base == "" {
		base = "http://" + ln.Addr().String()
	}
	u, err := url.Parse(strings.TrimSuffix(base, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		_ = ln.Close()
		return nil, fmt.Errorf("liveview: base URL %q: want scheme://host[:port] with no path", base)
	}
	u.Path = ""
	s := &Server{o: o, base: u, ln: ln, byTag: map[string]*session{}, byID: map[string]*session{}}
	ws := "ws://" + u.Host
	if u.Scheme == "https" {
		ws = "wss://" + u.Host
	}
	anc := "'none'"
	if o.FrameAncestors != "" {
		anc = o.FrameAncestors
	}
	s.csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src " + ws +
		"; frame-ancestors " + anc + "; base-uri 'none'; form-action 'none'"
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v/{id}", s.servePage)
	mux.HandleFunc("GET /static/{file}", s.serveStatic)
	mux.HandleFunc("GET /ws/{id}", s.serveSocket)
	s.srv = &http.Server{Handler: s.headers(mux), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// checkAncestor accepts one origin, scheme://host[:port].
func checkAncestor(a string) error {
	u, err := url.Parse(a)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || strings.ContainsAny(a, " ;'") {
		return fmt.Errorf("liveview: frame ancestor %q: want one origin such as https://ops.example.com", a)
	}
	return nil
}

// Addr is the listening address.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the server and ends every view.
func (s *Server) Close() error {
	s.mu.Lock()
	for _, se := range s.byTag {
		se.end()
	}
	s.byTag, s.byID = map[string]*session{}, map[string]*session{}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return s.srv.Shutdown(ctx)
}

// Open starts serving a session's view (a second Open of a tag returns
// the hands it has) and returns its hands.
func (s *Server) Open(tag string, p Page) *Hands {
	s.mu.Lock()
	defer s.mu.Unlock()
	if se, ok := s.byTag[tag]; ok {
		return se.hands
	}
	ctx, end := context.WithCancel(context.Background())
	se := &session{id: newID(), tag: tag, token: newToken(), page: p, hands: NewHands(nil), ctx: ctx, end: end}
	s.byTag[tag], s.byID[se.id] = se, se
	return se.hands
}

// End stops a session's view: its token stops working and its viewer's
// stream and socket close.
func (s *Server) End(tag string) {
	s.mu.Lock()
	se, ok := s.byTag[tag]
	if ok {
		delete(s.byTag, tag)
		delete(s.byID, se.id)
	}
	s.mu.Unlock()
	if ok {
		se.end()
		if s.o.Book.Dir != "" {
			s.o.Book.Drop(tag)
		}
	}
}

// Handoff hands a session's browser to a person: Take over is granted, the
// address is kept in the book for `handoff list --show-url`, and returned
// for the handoff port. ok is false when the session has no view.
func (s *Server) Handoff(tag, workflowID, requestID string) (addr string, ok bool, err error) {
	addr, ok = s.URL(tag)
	if !ok {
		return "", false, nil
	}
	if h := s.Hands(tag); h != nil {
		h.Grant()
	}
	if s.o.Book.Dir != "" {
		err = s.o.Book.Put(book.Entry{WorkflowID: workflowID, RequestID: requestID, SessionTag: tag, URL: addr})
	}
	return addr, true, err
}

// URL is a session's viewer address, with its token in the fragment. It is
// a full-control credential: hand it to the handoff port only.
func (s *Server) URL(tag string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	se, ok := s.byTag[tag]
	if !ok {
		return "", false
	}
	return s.base.String() + "/v/" + se.id + "#t=" + se.token, true
}

// Viewing says whether a viewer is connected to a session's view. It turns
// false only once everything that viewer sent has been handled.
func (s *Server) Viewing(tag string) bool {
	s.mu.Lock()
	se, ok := s.byTag[tag]
	s.mu.Unlock()
	if !ok {
		return false
	}
	se.mu.Lock()
	defer se.mu.Unlock()
	return se.viewer
}

// Hands are a session's hands, nil when it has no view.
func (s *Server) Hands(tag string) *Hands {
	s.mu.Lock()
	defer s.mu.Unlock()
	if se, ok := s.byTag[tag]; ok {
		return se.hands
	}
	return nil
}

// headers sets what every answer carries: no Referer leaves the viewer, it
// runs only its own script, and only the configured origin may frame it.
func (s *Server) headers(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("Content-Security-Policy", s.csp)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Cache-Control", "no-store")
		if s.o.FrameAncestors == "" {
			hd.Set("X-Frame-Options", "DENY")
		}
		h.ServeHTTP(w, r)
	})
}

func (s *Server) lookup(id string) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byID[id]
}

func (s *Server) servePage(w http.ResponseWriter, r *http.Request) {
	if s.lookup(r.PathValue("id")) == nil {
		http.Error(w, "no such live view: the session ended, or the address is wrong", http.StatusNotFound)
		return
	}
	b, _ := static.ReadFile("static/viewer.html")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b)
}

var staticTypes = map[string]string{"viewer.js": "text/javascript; charset=utf-8", "viewer.css": "text/css; charset=utf-8"}

func (s *Server) serveStatic(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	ct, ok := staticTypes[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	b, _ := static.ReadFile("static/" + name)
	w.Header().Set("Content-Type", ct)
	_, _ = w.Write(b)
}

// hello is a viewer's first message.
type hello struct {
	Token string `json:"token"`
	Watch bool   `json:"watch,omitempty"`
}

// Close codes a refused viewer sees.
const (
	closeBadToken = 4001
	closeBusy     = 4009
	closeEnded    = 4010
)

// authTimeout bounds the wait for the token.
const authTimeout = 10 * time.Second

func (s *Server) serveSocket(w http.ResponseWriter, r *http.Request) {
	log := s.o.Logger
	if err := checkOrigin(s.base, r.Header.Get("Origin")); err != nil {
		log.Warn().Msg("live view: refused a connection from another origin")
		http.Error(w, "forbidden origin", http.StatusForbidden)
		return
	}
	se := s.lookup(r.PathValue("id"))
	if se == nil {
		http.Error(w, "no such live view", http.StatusNotFound)
		return
	}
	// The Origin was checked above, against the viewer's own.
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)
	actx, cancel := context.WithTimeout(se.ctx, authTimeout)
	var h hello
	err = readJSON(actx, c, &h)
	cancel()
	if err != nil {
		_ = c.Close(closeBadToken, "send the token first")
		return
	}
	if checkToken(se.token, h.Token) != nil {
		log.Warn().Msg("live view: refused a wrong token")
		_ = c.Close(closeBadToken, "wrong token")
		return
	}
	se.mu.Lock()
	busy := se.viewer
	se.viewer = true
	se.mu.Unlock()
	if busy {
		log.Warn().Str("session_tag", se.tag).Msg("live view: refused a second viewer")
		_ = c.Close(closeBusy, "another viewer is connected to this session")
		return
	}
	defer func() {
		se.mu.Lock()
		se.viewer = false
		se.mu.Unlock()
	}()
	log.Info().Str("session_tag", se.tag).Bool("watch_only", h.Watch || s.o.WatchOnly).Msg("live view: a viewer connected")
	v := &viewer{s: s, se: se, c: c, watch: h.Watch || s.o.WatchOnly, log: log.With().Str("session_tag", se.tag).Logger()}
	err = v.run(se.ctx)
	switch {
	case se.ctx.Err() != nil:
		_ = c.Close(closeEnded, "the session ended")
	case err != nil && websocket.CloseStatus(err) == -1:
		v.log.Debug().Err(err).Msg("live view: viewer ended")
		_ = c.Close(websocket.StatusInternalError, "the view ended")
	}
	log.Info().Str("session_tag", se.tag).Msg("live view: the viewer left")
}

// errEnded ends a viewer whose session ended.
var errEnded = errors.New("liveview: the session ended")
