package capture

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/durable-browser/durable-browser/internal/redact"
)

const articlePage = `<!doctype html><html><head><title>Article page</title>
<style>.x { content: "STYLETEXT" }</style><script>var s = "SCRIPTTEXT";</script></head>
<body><nav>Navigation</nav>
<main><p>Main text</p><article><h1>Headline</h1><p>Story body with <a href="/next?token=SECRET#frag">a link</a>.</p>
<script>document.write("<p>WRITTEN</p>")</script><svg><text>SVGTEXT</text></svg></article></main>
<footer>Footer</footer></body></html>`

const mainPage = `<!doctype html><title>Main page</title><body><header>Head</header><main><h2>Docs</h2><p>Text</p></main></body>`

const bodyPage = `<!doctype html><title>Body page</title><body><p>Just ` + "b\u00f6dy" + ` text</p><script>1</script></body>`

func TestRead(t *testing.T) {
	long := "<!doctype html><title>Long</title><body><p>" + strings.Repeat("\u00e9t\u00e9 ", 2000) + "</p></body>"
	srv := serve(t, map[string]string{"/article": articlePage, "/main": mainPage, "/body": bodyPage, "/long": long})
	tests := []struct {
		name      string
		path      string
		opts      ReadOptions
		extractor string
		title     string
		want      []string
		wantNot   []string
		rawType   string
	}{
		{
			name: "markdown of the article", path: "/article?token=SECRET&x=1#frag", opts: ReadOptions{},
			extractor: "article", title: "Article page",
			want:    []string{"# Headline", "Story body", "[a link](" + srv.URL + "/next?token=%5Bredacted%5D)", "WRITTEN"},
			wantNot: []string{"Navigation", "Main text", "Footer", "SCRIPTTEXT", "STYLETEXT", "SVGTEXT", "SECRET", "frag", "document.write"},
			rawType: "text/markdown; charset=utf-8",
		},
		{
			name: "markdown of main", path: "/main", opts: ReadOptions{What: "markdown"},
			extractor: "main", title: "Main page",
			want: []string{"## Docs", "Text"}, wantNot: []string{"Head"}, rawType: "text/markdown; charset=utf-8",
		},
		{
			name: "markdown of body", path: "/body", opts: ReadOptions{What: "markdown"},
			extractor: "body", title: "Body page",
			want: []string{"Just b\u00f6dy text"}, wantNot: []string{"1"}, rawType: "text/markdown; charset=utf-8",
		},
		{
			name: "text", path: "/article", opts: ReadOptions{What: "text"},
			extractor: "body", title: "Article page",
			want: []string{"Navigation", "Headline", "Footer"}, wantNot: []string{"SCRIPTTEXT", "STYLETEXT", "<p>"},
			rawType: "text/plain; charset=utf-8",
		},
		{
			name: "html", path: "/main", opts: ReadOptions{What: "html"},
			extractor: "document", title: "Main page",
			want: []string{"<main><h2>Docs</h2>", "<title>Main page</title>"}, rawType: "text/html; charset=utf-8",
		},
		{
			name: "url is scrubbed", path: "/body?session=abc123&q=x#top", opts: ReadOptions{What: "url"},
			title: "Body page", want: []string{srv.URL + "/body?session=[redacted]&q=[redacted]"}, wantNot: []string{"abc123", "top"},
			rawType: "text/plain; charset=utf-8",
		},
		{
			name: "title", path: "/main", opts: ReadOptions{What: "title"},
			title: "Main page", want: []string{"Main page"}, rawType: "text/plain; charset=utf-8",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := openPage(t, srv.URL+tt.path, 1)
			res, err := Read(testCtx(t), p, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Extractor != tt.extractor || res.Title != tt.title || res.RawType != tt.rawType {
				t.Errorf("extractor %q title %q raw type %q; want %q %q %q", res.Extractor, res.Title, res.RawType, tt.extractor, tt.title, tt.rawType)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Content, w) {
					t.Errorf("content lacks %q:\n%s", w, res.Content)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(res.Content, w) {
					t.Errorf("content has %q:\n%s", w, res.Content)
				}
			}
			if strings.Contains(res.URL, "SECRET") || strings.Contains(res.URL, "#") || strings.Contains(res.URL, "abc123") {
				t.Errorf("URL not scrubbed: %s", res.URL)
			}
			if res.Truncated || res.FullLength != utf8.RuneCountInString(res.Content) {
				t.Errorf("truncated %v, full length %d for %d runes", res.Truncated, res.FullLength, utf8.RuneCountInString(res.Content))
			}
			if len(res.Raw) == 0 {
				t.Errorf("no raw bytes for evidence")
			}
			if res.RawCut || res.SourceCut {
				t.Errorf("a small page's raw is cut: raw cut %v, source cut %v", res.RawCut, res.SourceCut)
			}
		})
	}

	t.Run("raw html is the page read", func(t *testing.T) {
		p := openPage(t, srv.URL+"/article", 1)
		res, err := Read(testCtx(t), p, ReadOptions{What: "html"})
		if err != nil {
			t.Fatal(err)
		}
		raw := string(res.Raw)
		if !strings.Contains(raw, "<article>") || !strings.Contains(raw, "SCRIPTTEXT") {
			t.Errorf("raw is not the document's HTML: %.200s", raw)
		}
	})

	// What a markdown read files is the markdown it returned, whole: the
	// content is its first part.
	t.Run("raw markdown is what was returned", func(t *testing.T) {
		p := openPage(t, srv.URL+"/long", 1)
		res, err := Read(testCtx(t), p, ReadOptions{What: "markdown", MaxChars: 50})
		if err != nil {
			t.Fatal(err)
		}
		raw := string(res.Raw)
		if res.RawType != "text/markdown; charset=utf-8" || !strings.HasPrefix(raw, res.Content) || utf8.RuneCountInString(raw) != res.FullLength {
			t.Errorf("raw (%s, %d runes) is not the whole markdown (%d runes) the content %q starts", res.RawType, utf8.RuneCountInString(raw), res.FullLength, res.Content)
		}
	})

	for _, what := range []string{"markdown", "text", "html", "title"} {
		t.Run("truncated "+what, func(t *testing.T) {
			p := openPage(t, srv.URL+"/long", 1)
			full, err := Read(testCtx(t), p, ReadOptions{What: what, MaxChars: 100_000})
			if err != nil {
				t.Fatal(err)
			}
			max := 101
			if what == "title" {
				max = 2
			}
			res, err := Read(testCtx(t), p, ReadOptions{What: what, MaxChars: max})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Truncated || res.FullLength != full.FullLength || utf8.RuneCountInString(res.Content) != max {
				t.Errorf("truncated %v full %d (want %d) runes %d (want %d)", res.Truncated, res.FullLength, full.FullLength, utf8.RuneCountInString(res.Content), max)
			}
			if !utf8.ValidString(res.Content) || !strings.HasPrefix(full.Content, res.Content) {
				t.Errorf("cut content is not a valid prefix: %q", res.Content)
			}
		})
	}

	t.Run("page script cannot change the html read", func(t *testing.T) {
		liar := serve(t, map[string]string{"/": `<!doctype html><title>Liar</title><body><article><p>True text</p></article>
<script>Object.defineProperty(Element.prototype, "outerHTML", {get() { return "<p>LIE</p>" }});
Object.defineProperty(Element.prototype, "innerHTML", {get() { return "<p>LIE</p>" }});</script></body>`})
		p := openPage(t, liar.URL+"/", 1)
		res, err := Read(testCtx(t), p, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Content, "True text") || strings.Contains(res.Content, "LIE") {
			t.Errorf("content %q", res.Content)
		}
	})

	// A page that splits a secret across inline elements has it joined by
	// the markdown converter: the markdown is redacted too, and its full
	// length is the redacted markdown's.
	t.Run("a secret split across elements", func(t *testing.T) {
		const secret = "split9secret4value"
		split := serve(t, map[string]string{"/": `<!doctype html><title>Split</title><body><main><p>Your code: <span>split9</span><span>secret</span>4value, keep it.</p></main></body>`})
		p := openPage(t, split.URL+"/", 1)
		r := redact.New()
		r.Register(secret)
		res, err := Read(testCtx(t), p, ReadOptions{Redact: r.String})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(res.Content, secret) || strings.Contains(string(res.Raw), secret) {
			t.Fatalf("the joined secret is in the markdown:\n%s", res.Content)
		}
		if !strings.Contains(res.Content, "Your code: "+redact.Placeholder+", keep it.") {
			t.Fatalf("markdown %q", res.Content)
		}
		if res.FullLength != utf8.RuneCountInString(res.Content) || res.Truncated || res.RawCut {
			t.Fatalf("full length %d for %d runes, truncated %v, raw cut %v", res.FullLength, utf8.RuneCountInString(res.Content), res.Truncated, res.RawCut)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		p := openPage(t, srv.URL+"/body", 1)
		_, err := Read(testCtx(t), p, ReadOptions{What: "pdf"})
		assertRefused(t, err, RefusedInvalid)
		_, err = Read(testCtx(t), p, ReadOptions{MaxChars: -1})
		assertRefused(t, err, RefusedInvalid)
	})
}

// A page over the read cap (MaxRawBytes, 8 MiB) is filed from its first
// part, and says so (RawCut); its full length is the whole's, not the
// cap's: a "word " x 1,700,000 page's text is 8,499,999 characters.
func TestReadOverTheCap(t *testing.T) {
	const words = 1_700_000
	// Each emoji is two UTF-16 units (one character): the text is cut in
	// the page at a character's boundary and counted in characters. The
	// body is not rendered (its innerText is its text as written), so
	// Chrome lays out no 2.9 million glyphs.
	const emoji = 2_900_000
	srv := serve(t, map[string]string{
		"/words": "<!doctype html><title>Big</title><body><p>" + strings.Repeat("word ", words) + "</p></body>",
		"/emoji": "<!doctype html><title>Emoji</title><body style=\"display:none\">" + strings.Repeat("\U0001F600 ", emoji) + "</body>",
	})
	p := openPage(t, srv.URL+"/words", 1)
	for _, c := range []struct {
		what      string
		full      int // 0: more than MaxRawBytes
		sourceCut bool
	}{
		{"text", words*5 - 1, false},
		{"html", 0, false},
		{"markdown", 0, true},
	} {
		t.Run(c.what, func(t *testing.T) {
			res, err := Read(testCtx(t), p, ReadOptions{What: c.what})
			if err != nil {
				t.Fatal(err)
			}
			if !res.RawCut || res.SourceCut != c.sourceCut || !res.Truncated || len(res.Raw) > MaxRawBytes || !c.sourceCut && len(res.Raw) < MaxRawBytes-4 {
				t.Fatalf("raw cut %v, source cut %v, truncated %v, raw %d bytes; want cut at %d", res.RawCut, res.SourceCut, res.Truncated, len(res.Raw), MaxRawBytes)
			}
			if c.full != 0 && res.FullLength != c.full || c.full == 0 && res.FullLength <= MaxRawBytes && !c.sourceCut {
				t.Fatalf("full length %d, want %d (the whole, not the cap)", res.FullLength, c.full)
			}
			if !utf8.Valid(res.Raw) || !strings.HasPrefix(string(res.Raw), res.Content) {
				t.Fatalf("raw is not valid UTF-8 that the content starts")
			}
		})
	}
	// A secret the cap falls inside is redacted whole, not filed in part:
	// the text is read past the cap, redacted, then cut.
	t.Run("a secret across the cap", func(t *testing.T) {
		const secret = "HunterSecret2468Zz"
		at := MaxRawBytes - 9 // the cap falls in the secret's middle
		sp := openPage(t, serve(t, map[string]string{"/": "<!doctype html><title>S</title><body><p>" + strings.Repeat("x", at) + secret + " tail</p></body>"}).URL+"/", 1)
		r := redact.New()
		r.Register(secret)
		res, err := Read(testCtx(t), sp, ReadOptions{What: "text", Redact: r.String})
		if err != nil {
			t.Fatal(err)
		}
		if !res.RawCut || len(res.Raw) > MaxRawBytes {
			t.Fatalf("raw cut %v, %d bytes", res.RawCut, len(res.Raw))
		}
		if tail := string(res.Raw[len(res.Raw)-20:]); strings.Contains(tail, secret[:9]) || !strings.Contains(tail, "[redact") {
			t.Fatalf("the filed text ends %q: a part of the secret, not its redaction", tail)
		}
	})
	t.Run("html full length", func(t *testing.T) {
		res, err := Read(testCtx(t), p, ReadOptions{What: "html"})
		if err != nil {
			t.Fatal(err)
		}
		if want := len("<!DOCTYPE html><html><head><title>Big</title></head><body><p>" + strings.Repeat("word ", words) + "</p></body></html>"); res.FullLength != want {
			t.Fatalf("html full length %d, want %d", res.FullLength, want)
		}
	})
	t.Run("text in characters", func(t *testing.T) {
		res, err := Read(testCtx(t), openPage(t, srv.URL+"/emoji", 1), ReadOptions{What: "text"})
		if err != nil {
			t.Fatal(err)
		}
		if want := emoji * 2; res.FullLength != want || !res.RawCut || !utf8.Valid(res.Raw) || strings.ContainsRune(string(res.Raw), utf8.RuneError) {
			t.Fatalf("full length %d (want %d), raw cut %v, raw %d bytes valid %v", res.FullLength, want, res.RawCut, len(res.Raw), utf8.Valid(res.Raw))
		}
	})
}
