package markdown

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestConvert(t *testing.T) {
	tests := []struct {
		name      string
		html      string
		opts      Options
		extractor string
		want      []string // substrings that must appear
		wantNot   []string // substrings that must not appear
	}{
		{
			name:      "article wins over main and body",
			html:      `<body><nav>Menu</nav><main><p>Main text</p><article><h1>Title</h1><p>Story</p></article></main></body>`,
			extractor: ExtractorArticle,
			want:      []string{"# Title", "Story"},
			wantNot:   []string{"Menu", "Main text"},
		},
		{
			name:      "first article only",
			html:      `<article><p>First</p></article><article><p>Second</p></article>`,
			extractor: ExtractorArticle,
			want:      []string{"First"},
			wantNot:   []string{"Second"},
		},
		{
			name:      "main without article",
			html:      `<header>Site header</header><main><h2>Docs</h2><p>Body text</p></main><footer>Foot</footer>`,
			extractor: ExtractorMain,
			want:      []string{"## Docs", "Body text"},
			wantNot:   []string{"Site header", "Foot"},
		},
		{
			name:      "body fallback",
			html:      `<html><head><title>T</title></head><body><p>Only body</p></body></html>`,
			extractor: ExtractorBody,
			want:      []string{"Only body"},
			wantNot:   []string{"T\n"},
		},
		{
			name:      "whole document",
			html:      `<nav>Menu</nav><article>Story</article>`,
			opts:      Options{Whole: true},
			extractor: ExtractorDocument,
			want:      []string{"Menu", "Story"},
		},
		{
			name: "non-content dropped",
			html: `<body><p>Keep</p><script>var leak="SCRIPT"</script><style>.x{content:"STYLE"}</style>` +
				`<svg><text>SVGTEXT</text></svg><template><p>TEMPLATE</p></template><noscript>NOSCRIPT</noscript>` +
				`<iframe srcdoc="IFRAME">IFRAME</iframe><object>OBJECT</object><p hidden>HIDDEN</p>` +
				`<span aria-hidden="true">ARIAHIDDEN</span><!-- COMMENT --><select><option>OPTION</option></select></body>`,
			extractor: ExtractorBody,
			want:      []string{"Keep"},
			wantNot:   []string{"SCRIPT", "STYLE", "SVGTEXT", "TEMPLATE", "NOSCRIPT", "IFRAME", "OBJECT", "HIDDEN", "COMMENT", "OPTION"},
		},
		// Links are scrubbed to name=[redacted]; the converter then
		// percent-encodes "[" and "]" in every link destination.
		{
			name:      "links resolved and scrubbed",
			html:      `<p><a href="/docs?token=abc123&page=2#sec">Docs</a> <a href="https://user:pw@example.org/x">X</a></p>`,
			opts:      Options{BaseURL: "https://example.com/base/?session=zzz#f"},
			extractor: ExtractorBody,
			want:      []string{"[Docs](https://example.com/docs?token=%5Bredacted%5D&page=%5Bredacted%5D)", "[X](https://example.org/x)"},
			wantNot:   []string{"abc123", "pw@", "sec", "zzz"},
		},
		{
			name:      "script and data links keep only their text",
			html:      `<p><a href="javascript:steal()">Click</a> <img src="data:image/png;base64,AAAA" alt="pic"> <a href="#top">Top</a></p>`,
			extractor: ExtractorBody,
			want:      []string{"Click", "Top"},
			wantNot:   []string{"javascript", "steal", "base64", "](#top)"},
		},
		{
			name:      "images scrubbed",
			html:      `<img src="https://cdn.example.com/a.png?sig=SECRETSIG" alt="A">`,
			extractor: ExtractorBody,
			want:      []string{"![A](https://cdn.example.com/a.png?sig=%5Bredacted%5D)"},
			wantNot:   []string{"SECRETSIG"},
		},
		{
			name:      "table with hostile spans",
			html:      `<table><tr><th>H</th></tr><tr><td colspan="999999" rowspan="999999">cell</td></tr></table>`,
			extractor: ExtractorBody,
			want:      []string{"cell", "| H"},
		},
		{
			name:      "too deep for a tree falls back to text",
			html:      strings.Repeat("<div>", 600) + "deep <script>NO</script>text",
			extractor: ExtractorText,
			want:      []string{"deep text"},
			wantNot:   []string{"NO"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Convert(tt.html, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Extractor != tt.extractor {
				t.Errorf("extractor = %q, want %q", res.Extractor, tt.extractor)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Markdown, w) {
					t.Errorf("markdown lacks %q:\n%s", w, res.Markdown)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(res.Markdown, w) {
					t.Errorf("markdown has %q:\n%s", w, res.Markdown)
				}
			}
			if res.Truncated {
				t.Errorf("unexpectedly truncated")
			}
		})
	}
}

func TestConvertTruncation(t *testing.T) {
	text := strings.Repeat("héllo wörld ✓ ", 100) // multi-byte runes throughout
	full, err := Convert("<p>"+text+"</p>", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, max := range []int{1, 7, 13, 100, full.FullLength - 1} {
		res, err := Convert("<p>"+text+"</p>", Options{MaxChars: max})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Truncated || res.FullLength != full.FullLength {
			t.Errorf("max %d: truncated=%v full=%d, want true and %d", max, res.Truncated, res.FullLength, full.FullLength)
		}
		if n := utf8.RuneCountInString(res.Markdown); n != max || !utf8.ValidString(res.Markdown) {
			t.Errorf("max %d: got %d runes, valid=%v", max, n, utf8.ValidString(res.Markdown))
		}
		if !strings.HasPrefix(full.Markdown, res.Markdown) {
			t.Errorf("max %d: not a prefix of the full markdown", max)
		}
	}
	res, _ := Convert("<p>"+text+"</p>", Options{MaxChars: full.FullLength})
	if res.Truncated || res.Markdown != full.Markdown {
		t.Errorf("exact fit was truncated")
	}
}

func TestConvertInputBound(t *testing.T) {
	in := "<p>" + strings.Repeat("ü", 1000) + "</p><p>TAIL</p>"
	res, err := Convert(in, Options{MaxInputBytes: 501}) // cuts inside a 2-byte rune
	if err != nil {
		t.Fatal(err)
	}
	if !res.InputTruncated || !res.Truncated {
		t.Errorf("input bound not reported: %+v", res)
	}
	if strings.Contains(res.Markdown, "TAIL") || !utf8.ValidString(res.Markdown) {
		t.Errorf("bad markdown after input cut: %q", res.Markdown)
	}
}

func TestConvertInvalidOptions(t *testing.T) {
	for _, o := range []Options{{MaxChars: -1}, {MaxInputBytes: -1}} {
		if _, err := Convert("<p>x</p>", o); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%+v: err = %v, want ErrInvalidOptions", o, err)
		}
	}
}

func TestConvertHostileLinks(t *testing.T) {
	tests := []struct{ html, want, not string }{
		{`<a href="java&#x09;script:alert(1)">a</a>`, "a", "alert"},
		{`<a href="  JAVASCRIPT:alert(1)">b</a>`, "b", "alert"},
		{`<a href="vbscript:msgbox">c</a>`, "c", "msgbox"},
		{`<a href="/p?k=v" onclick="steal()">d</a>`, "[d](/p?k=%5Bredacted%5D)", "steal"},
		{`<a href="https://a.example/x">[e](https://evil.example/?q=SECRET)</a>`, `\[e\](https://evil`, "[[e]("}, // text cannot forge a link
	}
	for _, tt := range tests {
		res, err := Convert(tt.html, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Markdown, tt.want) || strings.Contains(res.Markdown, tt.not) {
			t.Errorf("Convert(%q) = %q; want %q and not %q", tt.html, res.Markdown, tt.want, tt.not)
		}
	}
}

func FuzzConvert(f *testing.F) {
	for _, s := range []string{
		"", "<p>x</p>", "<article><a href='?a=b#c'>l</a></article>", "<table><td colspan=3>x",
		"<svg><script>x</script></svg>", "<main><template><p>t</template></main>", "<a href=javascript:x>j</a>",
		strings.Repeat("<div>", 520), "<b><i><a href=//u:p@h/>x</b></i>", "\xff\xfe<p>\x00</p>",
		"<pre><code>```\ncode</code></pre>", "<ul><li><ol><li>n</ol></ul>", "<img src=x alt=']]'>",
	} {
		f.Add(s, 50)
	}
	f.Fuzz(func(t *testing.T, in string, max int) {
		if max < 1 || max > 10_000 {
			max = 100
		}
		res, err := Convert(in, Options{MaxChars: max, BaseURL: "https://example.com/"})
		if err != nil {
			t.Fatalf("Convert(%q): %v", in, err)
		}
		n := utf8.RuneCountInString(res.Markdown)
		if !utf8.ValidString(res.Markdown) || n > max {
			t.Fatalf("bad bound: %d runes, max %d, valid %v", n, max, utf8.ValidString(res.Markdown))
		}
		if res.FullLength < n || (!res.Truncated && res.FullLength != n) {
			t.Fatalf("inconsistent lengths: %d runes, %+v", n, res)
		}
		if res.FullLength > max && !res.Truncated {
			t.Fatalf("over the bound but not truncated: %+v", res)
		}
	})
}

// BenchmarkConvert converts a documentation-sized page (about 1 MB).
func BenchmarkConvert(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("<html><head><script>x()</script></head><body><main>")
	for i := range 2000 {
		fmt.Fprintf(&sb, `<h2>Section %d</h2><p>Some <b>text</b> with <a href="/s/%d?token=t">a link</a> and <code>code</code>.</p><ul><li>one</li><li>two</li></ul>`, i, i)
		fmt.Fprintf(&sb, `<table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>%d</td></tr></table>`, i)
	}
	sb.WriteString("</main></body></html>")
	page := sb.String()
	b.SetBytes(int64(len(page)))
	for b.Loop() {
		if _, err := Convert(page, Options{BaseURL: "https://example.com/"}); err != nil {
			b.Fatal(err)
		}
	}
}

// Redact runs over the markdown before it is counted and cut: text the
// converter joined is redacted whole, and the cut never leaves a part of
// it.
func TestRedactBeforeTheCut(t *testing.T) {
	redact := func(s string) string { return strings.ReplaceAll(s, "split9secret4value", "[redacted]") }
	page := `<p>code: <span>split9</span><span>secret</span>4value</p>`
	whole, err := Convert(page, Options{Redact: redact})
	if err != nil {
		t.Fatal(err)
	}
	if whole.Markdown != "code: [redacted]" || whole.FullLength != len("code: [redacted]") {
		t.Fatalf("markdown %q, full length %d", whole.Markdown, whole.FullLength)
	}
	cut, err := Convert(page, Options{Redact: redact, MaxChars: len("code: split9")})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(cut.Markdown, "split9") || !cut.Truncated {
		t.Fatalf("the cut markdown %q holds a part of the secret", cut.Markdown)
	}
}
