package webfetch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/durable-browser/durable-browser/internal/redact"
)

const page = `<!doctype html><html><head><title> Hello &amp; welcome </title></head>
<body><main><h1>Docs</h1><p>See <a href="/next?token=abc">next</a>.</p></main></body></html>`

// site is a loopback server exercising every response shape the fetch path
// handles.
func site(t *testing.T) (*httptest.Server, *atomic.Int64, *atomic.Int64) {
	t.Helper()
	var hits, cookies atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	})
	mux.HandleFunc("/r1", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/r2", http.StatusFound) })
	mux.HandleFunc("/r2", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/page?session=s3cr3t#frag", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/to", func(w http.ResponseWriter, r *http.Request) {
		// Location is taken verbatim: http.Redirect would clean it.
		w.Header().Set("Location", r.URL.Query().Get("u"))
		w.WriteHeader(http.StatusFound)
	})
	mux.HandleFunc("/nolocation", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusFound) })
	mux.HandleFunc("/setcookie", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: "cookie-value", Path: "/"})
		http.Redirect(w, r, "/checkcookie", http.StatusFound)
	})
	mux.HandleFunc("/checkcookie", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Cookie") != "" {
			cookies.Add(1)
		}
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "checked")
	})
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"a":1}`)
	})
	mux.HandleFunc("/untyped", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil // suppress sniffing by net/http
		fmt.Fprint(w, "plain words")
	})
	mux.HandleFunc("/png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		fmt.Fprint(w, "\x89PNG\r\n\x1a\n")
	})
	mux.HandleFunc("/octet", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		fmt.Fprint(w, "\x89PNG\r\n\x1a\n\x00\x00")
	})
	mux.HandleFunc("/pdf", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write([]byte("%PDF-1.4\n%fake\n"))
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, strings.Repeat("x", 4096))
	})
	mux.HandleFunc("/bigchunked", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		for range 8 {
			fmt.Fprint(w, strings.Repeat("y", 512))
			w.(http.Flusher).Flush() // no Content-Length: the cap must hold while reading
		}
	})
	mux.HandleFunc("/status", func(w http.ResponseWriter, r *http.Request) {
		var code int
		fmt.Sscan(r.URL.Query().Get("c"), &code)
		w.WriteHeader(code)
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	mux.HandleFunc("/host", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, r.Host)
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits, &cookies
}

func TestDefaultRefusesLoopback(t *testing.T) {
	srv, hits, _ := site(t)
	f := New(Options{})
	u, _ := url.Parse(srv.URL)
	for _, raw := range []string{
		srv.URL + "/page",
		"http://localhost:" + u.Port() + "/page",
		"http://127.0.0.1/page",
		"http://2130706433/page",
	} {
		_, err := f.Fetch(context.Background(), Request{URL: raw})
		if !isRefused(err) {
			t.Errorf("%s: err = %v, want refused", raw, err)
		}
	}
	if hits.Load() != 0 {
		t.Fatalf("the default reached the loopback server %d times", hits.Load())
	}
}

func TestFetchMarkdownAndRedirects(t *testing.T) {
	srv, _, _ := site(t)
	r := redact.New()
	f := New(Options{AllowLoopback: true, Redactor: r})
	res, err := f.Fetch(context.Background(), Request{URL: srv.URL + "/r1?api_key=k"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 200 || res.Redirects != 2 || res.ContentType != "text/html" {
		t.Fatalf("status %d redirects %d type %q", res.Status, res.Redirects, res.ContentType)
	}
	if res.RequestedURL != srv.URL+"/r1?api_key=[redacted]" {
		t.Fatalf("RequestedURL %q", res.RequestedURL)
	}
	if res.FinalURL != srv.URL+"/page?session=[redacted]" {
		t.Fatalf("FinalURL %q", res.FinalURL)
	}
	if res.Title != "Hello & welcome" {
		t.Fatalf("Title %q", res.Title)
	}
	if !strings.Contains(res.Markdown, "# Docs") || !strings.Contains(res.Markdown, "next") {
		t.Fatalf("Markdown %q", res.Markdown)
	}
	if strings.Contains(res.Markdown, "s3cr3t") || strings.Contains(res.Markdown, "abc") {
		t.Fatalf("credential in markdown: %q", res.Markdown)
	}
	if string(res.Body) != page {
		t.Fatal("body not returned as received")
	}

	raw, err := f.Fetch(context.Background(), Request{URL: srv.URL + "/page", Format: FormatRaw})
	if err != nil || raw.Markdown != "" || string(raw.Body) != page {
		t.Fatalf("raw: %v %q", err, raw.Markdown)
	}
}

func TestFetchPinsResolvedAddress(t *testing.T) {
	srv, _, _ := site(t)
	u, _ := url.Parse(srv.URL)
	res := newFakeResolver(map[string][]string{"app.test": {"127.0.0.1"}})
	f := New(Options{AllowLoopback: true, Resolver: res})
	// app.test exists only in the fake resolver: the dial must use the
	// vetted address, never a second lookup.
	got, err := f.Fetch(context.Background(), Request{URL: "http://app.test:" + u.Port() + "/host"})
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Body) != "app.test:"+u.Port() {
		t.Fatalf("Host header %q", got.Body)
	}
	if n := res.count("app.test"); n != 1 {
		t.Fatalf("resolved %d times, want once", n)
	}
}

func TestFetchGuardedRedirects(t *testing.T) {
	srv, _, _ := site(t)
	res := newFakeResolver(guardHosts)
	f := New(Options{AllowLoopback: true, Resolver: res})
	tests := []struct {
		name, location string
		kind           RefusalKind
	}{
		{"private", "http://10.1.2.3/", RefusedAddress},
		{"metadata", "http://169.254.169.254/latest/meta-data/", RefusedAddress},
		{"v4-mapped", "http://[::ffff:10.0.0.1]/", RefusedAddress},
		{"ipv6 ula", "http://[fd00::1]:8080/", RefusedAddress},
		{"decimal", "http://167772161/", RefusedAddress},
		{"hex", "http://0xa9fea9fe/", RefusedAddress},
		{"mixed name", "http://mixed.test/", RefusedAddress},
		{"scheme", "file:///etc/passwd", RefusedURL},
		{"credentials", "http://u:p@public.test/", RefusedURL},
		{"no location", "", RefusedRedirects},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			target := srv.URL + "/to?u=" + url.QueryEscape(tc.location)
			if tc.location == "" {
				target = srv.URL + "/nolocation"
			}
			_, err := f.Fetch(context.Background(), Request{URL: target})
			var re *RefusedError
			if !errors.As(err, &re) || re.Kind != tc.kind {
				t.Fatalf("err = %v, want refusal of kind %s", err, tc.kind)
			}
		})
	}
	_, err := f.Fetch(context.Background(), Request{URL: srv.URL + "/loop"})
	var re *RefusedError
	if !errors.As(err, &re) || re.Kind != RefusedRedirects {
		t.Fatalf("loop: err = %v", err)
	}
	few := New(Options{AllowLoopback: true, MaxRedirects: 1})
	if _, err := few.Fetch(context.Background(), Request{URL: srv.URL + "/r1"}); !errors.As(err, &re) || re.Kind != RefusedRedirects {
		t.Fatalf("MaxRedirects 1: err = %v", err)
	}
}

func TestFetchNoCookies(t *testing.T) {
	srv, _, cookies := site(t)
	f := New(Options{AllowLoopback: true})
	if _, err := f.Fetch(context.Background(), Request{URL: srv.URL + "/setcookie"}); err != nil {
		t.Fatal(err)
	}
	if cookies.Load() != 0 {
		t.Fatal("a cookie was sent back")
	}
}

func TestFetchTypesAndSizes(t *testing.T) {
	srv, _, _ := site(t)
	f := New(Options{AllowLoopback: true, MaxBytes: 2048})
	tests := []struct {
		path, format string
		kind         RefusalKind
		check        func(*Result) string
	}{
		{"/json", "", "", func(r *Result) string {
			if r.Markdown != `{"a":1}` || r.ContentType != "application/json" {
				return fmt.Sprintf("json: %q %q", r.Markdown, r.ContentType)
			}
			return ""
		}},
		{"/untyped", "", "", func(r *Result) string {
			if r.ContentType != "text/plain" || r.Markdown != "plain words" {
				return fmt.Sprintf("untyped: %q %q", r.ContentType, r.Markdown)
			}
			return ""
		}},
		{"/pdf", "raw", "", func(r *Result) string {
			if !r.IsPDF || !strings.HasPrefix(string(r.Body), "%PDF-") {
				return "pdf raw not returned"
			}
			return ""
		}},
		{"/pdf", "markdown", "", func(r *Result) string {
			if !r.IsPDF || r.Body != nil || r.Markdown != "" {
				return "pdf markdown should report a PDF without a body"
			}
			return ""
		}},
		{"/png", "", RefusedType, nil},
		{"/octet", "raw", RefusedType, nil},
		{"/big", "", RefusedSize, nil},
		{"/bigchunked", "raw", RefusedSize, nil},
		{"/page", "html", RefusedURL, nil},
	}
	for _, tc := range tests {
		t.Run(tc.path+"-"+tc.format, func(t *testing.T) {
			res, err := f.Fetch(context.Background(), Request{URL: srv.URL + tc.path, Format: tc.format})
			if tc.kind != "" {
				var re *RefusedError
				if !errors.As(err, &re) || re.Kind != tc.kind {
					t.Fatalf("err = %v, want refusal of kind %s", err, tc.kind)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if msg := tc.check(res); msg != "" {
				t.Fatal(msg)
			}
		})
	}
}

func TestFetchMarkdownBound(t *testing.T) {
	srv, _, _ := site(t)
	f := New(Options{AllowLoopback: true, MaxMarkdownChars: 100})
	res, err := f.Fetch(context.Background(), Request{URL: srv.URL + "/big"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || len(res.Markdown) != 100 {
		t.Fatalf("truncated %v len %d", res.Truncated, len(res.Markdown))
	}
	// What is filed is the whole page as read, of which Markdown is the
	// start.
	if len(res.Whole) <= 100 || !strings.HasPrefix(res.Whole, res.Markdown) {
		t.Fatalf("whole markdown: %d characters, want more than the 100 shown, starting with them", len(res.Whole))
	}
}

// A page is read in the charset it declares (its Content-Type, a <meta>,
// a byte-order mark), and one that declares none as UTF-8 when it is.
func TestFetchDecodesCharsets(t *testing.T) {
	page := func(title, body string) string {
		return "<html><head><title>" + title + "</title></head><body><main><p>" + body + "</p></main></body></html>"
	}
	utf16 := []byte{0xff, 0xfe} // little-endian mark, then each ASCII byte and a zero
	for _, c := range page("Hallo", "Grüße aus Köln, sagt der Text hier") {
		utf16 = append(utf16, byte(c), 0)
	}
	for _, c := range []struct {
		name, ct string
		body     []byte
		title    string
		content  string
	}{
		{"latin-1 by header", "text/html; charset=iso-8859-1", []byte(page("Caf\xe9 na\xefve", "R\xe9sum\xe9 \xfcber Stra\xdfe, and more words")), "Café naïve", "Résumé über Straße"},
		{"windows-1251 by meta", "text/html", []byte(`<meta charset="windows-1251">` + page("\xcf\xf0\xe8\xe2\xe5\xf2", "\xcf\xf0\xe8\xe2\xe5\xf2 \xec\xe8\xf0, \xfd\xf2\xee \xf2\xe5\xea\xf1\xf2")), "Привет", "Привет мир, это текст"},
		{"utf-16 by its mark", "text/html", utf16, "Hallo", "Grüße aus Köln"},
		{"utf-8 undeclared", "text/html", []byte(page("Café", "Straße und so weiter im Text")), "Café", "Straße und so weiter"},
		{"plain text, latin-1 by header", "text/plain; charset=latin1", []byte("na\xefve caf\xe9"), "", "naïve café"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", c.ct)
				_, _ = w.Write(c.body)
			}))
			defer srv.Close()
			res, err := New(Options{AllowLoopback: true}).Fetch(context.Background(), Request{URL: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			if res.Title != c.title || !strings.Contains(res.Markdown, c.content) || strings.ContainsRune(res.Markdown, '\uFFFD') {
				t.Fatalf("title %q, markdown %q; want title %q and %q", res.Title, res.Markdown, c.title, c.content)
			}
		})
	}
}

func TestFetchStatus(t *testing.T) {
	srv, _, _ := site(t)
	f := New(Options{AllowLoopback: true})
	tests := []struct {
		code                        int
		blocked, limited, retryable bool
	}{
		{401, true, false, false},
		{403, true, false, false},
		{451, true, false, false},
		{999, true, false, false},
		{429, false, true, true},
		{404, false, false, false},
		{503, false, false, true},
	}
	for _, tc := range tests {
		_, err := f.Fetch(context.Background(), Request{URL: fmt.Sprintf("%s/status?c=%d&token=zzz", srv.URL, tc.code)})
		var se *StatusError
		if !errors.As(err, &se) || se.Code != tc.code {
			t.Fatalf("%d: err = %v", tc.code, err)
		}
		if se.Blocked() != tc.blocked || se.RateLimited() != tc.limited || se.Retryable() != tc.retryable {
			t.Errorf("%d: blocked %v limited %v retryable %v", tc.code, se.Blocked(), se.RateLimited(), se.Retryable())
		}
		if strings.Contains(err.Error(), "zzz") {
			t.Errorf("%d: query value in error: %v", tc.code, err)
		}
	}
}

func TestFetchDeadline(t *testing.T) {
	srv, _, _ := site(t)
	res := newFakeResolver(map[string][]string{"slow.test": nil})
	f := New(Options{AllowLoopback: true, Resolver: res})

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := f.Fetch(ctx, Request{URL: srv.URL + "/hang"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("hanging server: err = %v", err)
	}

	ctx2, cancel2 := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel2()
	if _, err := f.Fetch(ctx2, Request{URL: "http://slow.test/"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("hanging lookup: err = %v", err)
	}
}

// A registered secret is redacted before markdown conversion: the converter
// escapes '_' and '*', which would leave a spelling the redactor misses, and
// before the title is cut.
func TestFetchRedactsBeforeConverting(t *testing.T) {
	const secret = "tok_live*4f9e_Q2x*8Hd_k7Pp*Zr"
	long := strings.Repeat("t", 290)
	page := "<html><head><title>" + long + " " + secret + "</title></head><body><p>your key: " + secret + "</p><p>_" + secret + "_</p></body></html>"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(page))
	}))
	defer srv.Close()
	r := redact.New()
	r.Register(secret)
	res, err := New(Options{AllowLoopback: true, Redactor: r}).Fetch(context.Background(), Request{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	out := res.Markdown + "\n" + res.Title
	for _, piece := range []string{secret[:8], secret[len(secret)-8:], "4f9e", "Q2x", "8Hd", "k7Pp"} {
		if strings.Contains(out, piece) {
			t.Fatalf("%q of the secret survived:\n%s", piece, out)
		}
	}
	if !strings.Contains(res.Markdown, "your key:") {
		t.Fatalf("markdown lost the page: %q", res.Markdown)
	}
}

// A secret a page splits across inline elements is joined by the
// converter: the markdown is redacted again.
func TestFetchRedactsWhatTheConverterJoins(t *testing.T) {
	const secret = "split9secret4value"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<html><body><p>Your code: <span>split9</span><span>secret</span>4value, keep it.</p></body></html>`))
	}))
	defer srv.Close()
	r := redact.New()
	r.Register(secret)
	res, err := New(Options{AllowLoopback: true, Redactor: r}).Fetch(context.Background(), Request{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Markdown, secret) || strings.Contains(res.Whole, secret) {
		t.Fatalf("the joined secret is in the markdown:\n%s", res.Whole)
	}
	if !strings.Contains(res.Markdown, "Your code: "+redact.Placeholder+", keep it.") {
		t.Fatalf("markdown %q", res.Markdown)
	}
}

// isRefused reports whether err is a guard refusal.
func isRefused(err error) bool {
	var r *RefusedError
	return errors.As(err, &r)
}

// slowSite answers /body with headers and then a byte every 20 ms, and
// /headers with nothing, each for up to 3 s: sites too slow to read.
func slowSite(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for range 150 {
			if r.URL.Path == "/body" {
				_, _ = w.Write([]byte("x"))
				w.(http.Flusher).Flush()
			}
			select {
			case <-r.Context().Done():
				return
			case <-tick.C:
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// One bound covers the whole fetch, headers and body, even when the caller
// has a later deadline of its own (an activity always has), and its
// failure says what was slow.
func TestFetchSlowSiteTimesOut(t *testing.T) {
	srv, hits := slowSite(t)
	f := New(Options{AllowLoopback: true, Timeout: 300 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, tc := range []struct {
		path string
		body bool
		want string
	}{
		{"/body?token=zzz", true, "sent its headers, then its body too slowly"},
		{"/headers?token=zzz", false, "did not answer within 300ms"},
	} {
		start := time.Now()
		_, err := f.Fetch(ctx, Request{URL: srv.URL + tc.path})
		var te *TimeoutError
		if !errors.As(err, &te) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s: err = %v, want a *TimeoutError", tc.path, err)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Fatalf("%s: took %s; the bound is 300ms", tc.path, took)
		}
		if te.Body != tc.body || te.After != 300*time.Millisecond || tc.body && te.Read == 0 {
			t.Errorf("%s: %+v", tc.path, te)
		}
		if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "zzz") {
			t.Errorf("%s: %v", tc.path, err)
		}
	}
	if hits.Load() != 2 {
		t.Fatalf("%d requests, want one each", hits.Load())
	}
}

// A caller's deadline sooner than the bound shortens it, leaving the caller
// time to answer; a caller's cancel stays a cancel.
func TestFetchCallerDeadline(t *testing.T) {
	srv, _ := slowSite(t)
	f := New(Options{AllowLoopback: true})
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	_, err := f.Fetch(ctx, Request{URL: srv.URL + "/body"})
	var te *TimeoutError
	if !errors.As(err, &te) || te.After > 360*time.Millisecond || ctx.Err() != nil {
		t.Fatalf("err = %v, caller's context %v; want a *TimeoutError before the caller's deadline", err, ctx.Err())
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if _, err := f.Fetch(ctx2, Request{URL: srv.URL + "/body"}); !errors.Is(err, context.Canceled) || errors.As(err, &te) {
		t.Fatalf("cancelled: err = %v", err)
	}
}

// A 429 or 503 whose Retry-After is short and fits the bound is waited once;
// a long one, or one past half the time left, is answered at once.
func TestFetchRetryAfter(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 || r.URL.Query().Get("always") != "" {
			w.Header().Set("Retry-After", r.URL.Query().Get("ra"))
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name    string
		o       Options
		query   string
		hits    int64
		wait    time.Duration // the StatusError's RetryAfter; -1: success
		retried bool
	}{
		{"zero is waited", Options{}, "ra=0", 2, -1, false},
		{"one second is waited", Options{}, "ra=1", 2, -1, false},
		{"over MaxRetryWait", Options{MaxRetryWait: 500 * time.Millisecond}, "ra=1", 1, time.Second, false},
		{"over half the bound", Options{Timeout: time.Second}, "ra=1", 1, time.Second, false},
		{"never waits", Options{MaxRetryWait: -1}, "ra=0", 1, 0, false},
		{"no Retry-After", Options{}, "ra=", 1, 0, false},
		{"unparsable", Options{}, "ra=soon", 1, 0, false},
		{"waited once only", Options{}, "ra=0&always=1", 2, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hits.Store(0)
			tc.o.AllowLoopback = true
			start := time.Now()
			res, err := New(tc.o).Fetch(context.Background(), Request{URL: srv.URL + "/?" + tc.query})
			if tc.query == "ra=1" && tc.wait < 0 && time.Since(start) < time.Second {
				t.Errorf("asked again after %s; the site asked for 1 s", time.Since(start))
			}
			if hits.Load() != tc.hits {
				t.Errorf("%d requests, want %d", hits.Load(), tc.hits)
			}
			if tc.wait < 0 {
				if err != nil || res.Markdown != "ok" {
					t.Fatalf("want the page after one wait: %+v, %v", res, err)
				}
				return
			}
			var se *StatusError
			if !errors.As(err, &se) || se.Code != 429 || se.RetryAfter != tc.wait || se.Retried != tc.retried || !se.BackOff() {
				t.Fatalf("err = %v (%+v)", err, se)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"0", 0, true},
		{" 120 ", 120 * time.Second, true},
		{"007", 7 * time.Second, true},
		{"86400", MaxRetryAfter, true},
		{"86401", MaxRetryAfter, true},
		{"99999999999999999999999999", MaxRetryAfter, true},
		{"-5", 0, false},
		{"+5", 0, false},
		{"1.5", 0, false},
		{"5s", 0, false},
		{"soon", 0, false},
		{"Sat, 01 Mar 2025 12:01:30 GMT", 90 * time.Second, true},    // IMF-fixdate
		{"Saturday, 01-Mar-25 12:00:10 GMT", 10 * time.Second, true}, // RFC 850
		{"Sat Mar  1 12:00:05 2025", 5 * time.Second, true},          // asctime
		{"Sat, 01 Mar 2025 11:00:00 GMT", 0, true},                   // past: now
		{"Fri, 31 Dec 9999 23:59:59 GMT", MaxRetryAfter, true},
		{"Sat, 01 Mar 2025 12:01:30 PST", 0, false},
	} {
		got, ok := parseRetryAfter(tc.in, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseRetryAfter(%q) = %s, %v; want %s, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"0", "120", "99999999999999999999", "Sat, 01 Mar 2025 12:01:30 GMT", "Sat Mar  1 12:00:05 2025", "-1", ""} {
		f.Add(s)
	}
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := parseRetryAfter(s, now)
		if d < 0 || d > MaxRetryAfter || !ok && d != 0 {
			t.Fatalf("parseRetryAfter(%q) = %s, %v", s, d, ok)
		}
		if ts := strings.TrimSpace(s); ts != "" && strings.Trim(ts, "0123456789") == "" && !ok {
			t.Fatalf("parseRetryAfter(%q): delta-seconds not read", s)
		}
	})
}
