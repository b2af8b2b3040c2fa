// Package demosite is a small website embedded in the binary. `dev` serves it
// on loopback for the smoke workflow and people trying the tools; tests serve
// it to exercise the browser against known pages.
package demosite

import (
	"embed"
	"fmt"
	"html"
	"io/fs"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

//go:embed site
var siteFS embed.FS

// Submission is one form post the site received.
type Submission struct {
	Path   string
	Fields map[string]string
}

// Site serves the embedded pages and counts what is posted to it.
type Site struct {
	mu          sync.Mutex
	submissions []Submission
	mux         *http.ServeMux
	shop        *shop
}

// New returns a site ready to serve.
func New() *Site {
	s := &Site{mux: http.NewServeMux()}
	sub, _ := fs.Sub(siteFS, "site") // cannot fail: "site" is embedded above
	s.mux.HandleFunc("POST /submit", s.handleSubmit)
	s.mux.HandleFunc("POST /slow-submit", s.handleSlowSubmit)
	s.mux.HandleFunc("GET /submissions", s.handleCount)
	s.mux.HandleFunc("GET /table", handleTable)
	s.registerShop()
	s.mux.Handle("/", http.FileServer(http.FS(sub)))
	return s
}

// Handle adds a handler, for pages that need server behaviour.
func (s *Site) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Submissions returns a copy of every submission so far.
func (s *Site) Submissions() []Submission {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Submission(nil), s.submissions...)
}

// Record counts a submission; handlers added by later pages use it too.
func (s *Site) Record(r *http.Request) Submission {
	_ = r.ParseForm()
	fields := map[string]string{}
	for k, v := range r.PostForm {
		fields[k] = strings.Join(v, ",")
	}
	sub := Submission{Path: r.URL.Path, Fields: fields}
	s.mu.Lock()
	s.submissions = append(s.submissions, sub)
	s.mu.Unlock()
	return sub
}

func (s *Site) handleSubmit(w http.ResponseWriter, r *http.Request) {
	sub := s.Record(r)
	keys := make([]string, 0, len(sub.Fields))
	for k := range sub.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprint(w, `<!doctype html><html><head><title>Thanks</title></head><body><main><h1>Thanks</h1><p>Submission received.</p><ul>`)
	for _, k := range keys {
		if k == "password" {
			continue
		}
		fmt.Fprintf(w, "<li>%s: %s</li>", html.EscapeString(k), html.EscapeString(sub.Fields[k]))
	}
	fmt.Fprint(w, `</ul><p><a href="/">Back home</a></p></main></body></html>`)
}

// handleSlowSubmit counts the submission on arrival, then answers only when
// the client gives up: a form whose effect happens before any reply, used to
// crash a worker mid-run.
func (s *Site) handleSlowSubmit(w http.ResponseWriter, r *http.Request) {
	s.Record(r)
	select {
	case <-r.Context().Done():
	case <-time.After(2 * time.Minute):
	}
}

// The paginated table: TablePages pages of TableRowsPerPage orders each,
// with a "Next" link on every page but the last, for code cells that page
// through it.
const (
	TablePages       = 4
	TableRowsPerPage = 5
)

// TableRow is one order of the table, as the page shows it.
type TableRow struct {
	Order, Customer, City string
	Total                 int
}

// TableRows returns every row of the table, in page order.
func TableRows() []TableRow {
	names := []string{"Ada", "Brook", "Chen", "Dara", "Eli", "Femi", "Gus", "Hana", "Ivo", "Jun"}
	cities := []string{"Oslo", "Lima", "Pune", "Kyiv", "Doha", "Bern", "Cork"}
	out := make([]TableRow, 0, TablePages*TableRowsPerPage)
	for i := 0; i < TablePages*TableRowsPerPage; i++ {
		out = append(out, TableRow{Order: fmt.Sprintf("A-%03d", 101+i), Customer: names[i%len(names)] + " " + string(rune('K'+i%13)) + ".",
			City: cities[(i*3)%len(cities)], Total: 10 + (i*37)%90})
	}
	return out
}

func handleTable(w http.ResponseWriter, r *http.Request) {
	page := 1
	if p, err := strconv.Atoi(r.URL.Query().Get("page")); err == nil && p >= 1 && p <= TablePages {
		page = p
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Orders · page %d of %d</title></head><body><main><h1>Orders</h1>`, page, TablePages)
	fmt.Fprint(w, `<table><thead><tr><th>Order</th><th>Customer</th><th>City</th><th>Total</th></tr></thead><tbody>`)
	rows := TableRows()[(page-1)*TableRowsPerPage : page*TableRowsPerPage]
	for _, row := range rows {
		fmt.Fprintf(w, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%d</td></tr>", html.EscapeString(row.Order), html.EscapeString(row.Customer), html.EscapeString(row.City), row.Total)
	}
	fmt.Fprintf(w, `</tbody></table><p>Page %d of %d</p><nav>`, page, TablePages)
	if page > 1 {
		fmt.Fprintf(w, `<a href="/table?page=%d">Previous</a> `, page-1)
	}
	if page < TablePages {
		fmt.Fprintf(w, `<a href="/table?page=%d">Next</a>`, page+1)
	}
	fmt.Fprint(w, `</nav><p><a href="/">Back home</a></p></main></body></html>`)
}

func (s *Site) handleCount(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	n := len(s.submissions)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"count":%d}`, n)
}

// Server is the site listening on an address.
type Server struct {
	*Site
	srv *http.Server
	ln  net.Listener
}

// Listen serves a new site on addr ("127.0.0.1:0" for any free port).
func Listen(addr string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("demo site on %s: %w", addr, err)
	}
	site := New()
	srv := &http.Server{Handler: site}
	go func() { _ = srv.Serve(ln) }()
	return &Server{Site: site, srv: srv, ln: ln}, nil
}

// URL is the site's base URL, without a trailing slash.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Close stops serving.
func (s *Server) Close() error { return s.srv.Close() }
