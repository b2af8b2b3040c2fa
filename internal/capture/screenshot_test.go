package capture

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"math"
	"strings"
	"testing"

	"github.com/go-rod/rod/lib/proto"

	"github.com/durable-browser/durable-browser/contract"
)

// shotPage is a tall page with known boxes at known document positions.
const shotPage = `<!doctype html><html><head><style>
html, body { margin: 0; padding: 0; }
body { width: 800px; height: 3000px; position: relative; background: #fff; }
div { position: absolute; }
#blue { left: 10px; top: 10px; width: 50px; height: 50px; background: #00f; }
#red { left: 100px; top: 1000px; width: 200px; height: 100px; background: #f00; }
.item { left: 0; top: 200px; width: 10px; height: 10px; }
#hidden { display: none; }
#zero { left: 0; top: 300px; width: 100px; height: 0; }
#offscreen { left: -5000px; top: 100px; width: 100px; height: 100px; background: #0f0; }
</style></head><body>
<div id="blue"></div><div id="red"></div>
<div class="item"></div><div class="item"></div><div class="item"></div>
<div id="hidden">hidden</div><div id="zero"></div><div id="offscreen"></div>
</body></html>`

// noisePage fills the viewport with random pixels, which PNG cannot compress.
const noisePage = `<!doctype html><html><body style="margin:0">
<canvas id="c" width="800" height="600"></canvas>
<script>
const c = document.getElementById('c').getContext('2d');
const img = c.createImageData(800, 600);
for (let i = 0; i < img.data.length; i++) { img.data[i] = (i % 4 === 3) ? 255 : Math.floor(Math.random() * 256); }
c.putImageData(img, 0, 0);
document.title = 'noise';
</script></body></html>`

func decode(t *testing.T, s *Shot) image.Image {
	t.Helper()
	img, format, err := image.Decode(bytes.NewReader(s.Bytes))
	if err != nil {
		t.Fatal(err)
	}
	if format != s.Type {
		t.Fatalf("format %s, type %s", format, s.Type)
	}
	if b := img.Bounds(); b.Dx() != s.Width || b.Dy() != s.Height {
		t.Fatalf("image %dx%d, reported %dx%d", b.Dx(), b.Dy(), s.Width, s.Height)
	}
	return img
}

func near(c color.Color, r, g, b uint8) bool {
	cr, cg, cb, _ := c.RGBA()
	d := func(a uint32, b uint8) bool { return math.Abs(float64(a>>8)-float64(b)) < 40 }
	return d(cr, r) && d(cg, g) && d(cb, b)
}

func TestScreenshotModes(t *testing.T) {
	srv := serve(t, map[string]string{"/": shotPage})
	p := openPage(t, srv.URL+"/", 1)
	el, err := p.Element("#blue")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		opts    ScreenshotOptions
		region  Rect
		w, h    int
		rgb     [3]uint8 // colour at the image's centre
		checkRG bool
	}{
		{name: "viewport by default", opts: ScreenshotOptions{}, region: rect(0, 0, 800, 600), w: 800, h: 600, rgb: [3]uint8{255, 255, 255}, checkRG: true},
		{name: "blank selector is not given", opts: ScreenshotOptions{Selector: "   "}, region: rect(0, 0, 800, 600), w: 800, h: 600},
		{name: "zero clip is not given", opts: ScreenshotOptions{Clip: clipRect(10, 10, 0, 0)}, region: rect(0, 0, 800, 600), w: 800, h: 600},
		{name: "full page: readable width, top cut to the long edge", opts: ScreenshotOptions{FullPage: true}, region: rect(0, 0, 800, 2666), w: 600, h: 2000}, // whole CSS px: floor(2000/0.75),
		{name: "clip below the fold", opts: ScreenshotOptions{Clip: clipRect(100, 1000, 200, 100)}, region: rect(100, 1000, 200, 100), w: 200, h: 100, rgb: [3]uint8{255, 0, 0}, checkRG: true},
		{name: "clip cut to the page", opts: ScreenshotOptions{Clip: clipRect(700, 2950, 500, 500)}, region: rect(700, 2950, 100, 50), w: 100, h: 50},
		{name: "selector scrolled into view", opts: ScreenshotOptions{Selector: "#red"}, region: rect(100, 1000, 200, 100), w: 200, h: 100, rgb: [3]uint8{255, 0, 0}, checkRG: true},
		{name: "element", opts: ScreenshotOptions{Element: el}, region: rect(10, 10, 50, 50), w: 50, h: 50, rgb: [3]uint8{0, 0, 255}, checkRG: true},
		{name: "max edge", opts: ScreenshotOptions{MaxEdge: 400}, w: 400, h: 300},
		{name: "jpeg", opts: ScreenshotOptions{Selector: "#red", Type: "jpeg", Quality: 90}, region: rect(100, 1000, 200, 100), w: 200, h: 100, rgb: [3]uint8{255, 0, 0}, checkRG: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Screenshot(testCtx(t), p, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			img := decode(t, s)
			if s.Width != tt.w || s.Height != tt.h {
				t.Errorf("size %dx%d, want %dx%d", s.Width, s.Height, tt.w, tt.h)
			}
			if tt.region != (Rect{}) && tt.name != "viewport by default" && s.Region != tt.region {
				t.Errorf("region %+v, want %+v", s.Region, tt.region)
			}
			if tt.name == "viewport by default" && (s.Region.Width != 800 || s.Region.Height != 600) {
				t.Errorf("viewport region %+v", s.Region)
			}
			if s.DPR != 1 {
				t.Errorf("dpr %v, want 1", s.DPR)
			}
			wantType := "png"
			if tt.opts.Type == "jpeg" {
				wantType = "jpeg"
			}
			if s.Type != wantType {
				t.Errorf("type %s, want %s", s.Type, wantType)
			}
			if tt.checkRG {
				c := img.At(s.Width/2, s.Height/2)
				if !near(c, tt.rgb[0], tt.rgb[1], tt.rgb[2]) {
					t.Errorf("centre colour %v, want %v", c, tt.rgb)
				}
			}
		})
	}
}

func TestScreenshotDPR(t *testing.T) {
	srv := serve(t, map[string]string{"/": shotPage})
	p := openPage(t, srv.URL+"/", 2)
	tests := []struct {
		name string
		opts ScreenshotOptions
		w, h int
	}{
		{"viewport at dpr 2", ScreenshotOptions{}, 1600, 1200},
		{"element at dpr 2", ScreenshotOptions{Selector: "#red"}, 400, 200},
		{"long edge capped at dpr 2", ScreenshotOptions{MaxEdge: 1000}, 1000, 750},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Screenshot(testCtx(t), p, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			decode(t, s)
			if s.DPR != 2 || s.Width != tt.w || s.Height != tt.h {
				t.Errorf("dpr %v size %dx%d, want 2 and %dx%d", s.DPR, s.Width, s.Height, tt.w, tt.h)
			}
		})
	}
}

func TestScreenshotBudget(t *testing.T) {
	srv := serve(t, map[string]string{"/": noisePage})
	p := openPage(t, srv.URL+"/", 1)
	if _, err := p.Eval(`() => document.title`); err != nil {
		t.Fatal(err)
	}

	png, err := Screenshot(testCtx(t), p, ScreenshotOptions{MaxBytes: 10 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if png.Type != TypePNG || len(png.Bytes) < 500<<10 {
		t.Fatalf("noise PNG is %s of %d bytes; the page should defeat compression", png.Type, len(png.Bytes))
	}

	const budget = 150 << 10
	s, err := Screenshot(testCtx(t), p, ScreenshotOptions{MaxBytes: budget})
	if err != nil {
		t.Fatal(err)
	}
	decode(t, s)
	if s.Type != TypeJPEG || len(s.Bytes) > budget {
		t.Errorf("got %s of %d bytes, want jpeg within %d", s.Type, len(s.Bytes), budget)
	}
	if s.Quality >= DefaultJPEGQuality || s.Quality < minQuality {
		t.Errorf("quality %d: want a step below %d", s.Quality, DefaultJPEGQuality)
	}

	// A budget that only a smaller image can meet steps the scale down.
	const tiny = 20 << 10
	s, err = Screenshot(testCtx(t), p, ScreenshotOptions{MaxBytes: tiny, Type: "jpeg"})
	if err != nil {
		t.Fatal(err)
	}
	decode(t, s)
	if len(s.Bytes) > tiny || s.Scale >= 1 || s.Width >= 800 {
		t.Errorf("got %d bytes at scale %v (%dx%d), want within %d at a smaller scale", len(s.Bytes), s.Scale, s.Width, s.Height, tiny)
	}

	_, err = Screenshot(testCtx(t), p, ScreenshotOptions{MaxBytes: 100})
	assertRefused(t, err, RefusedOverBudget)
}

func assertRefused(t *testing.T, err error, kind RefusalKind) {
	t.Helper()
	var re *RefusedError
	if !errors.As(err, &re) || !errors.Is(err, ErrRefused) {
		t.Fatalf("err = %v, want a refusal (%s)", err, kind)
	}
	if re.Kind != kind || re.Reason == "" {
		t.Fatalf("refusal %s (%q), want %s", re.Kind, re.Reason, kind)
	}
}

func TestScreenshotRefusals(t *testing.T) {
	srv := serve(t, map[string]string{"/": shotPage})
	p := openPage(t, srv.URL+"/", 1)
	hidden, err := p.Element("#offscreen")
	if err != nil {
		t.Fatal(err)
	}
	detached, err := p.Element("#zero")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := detached.Eval(`function () { this.remove() }`); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts ScreenshotOptions
		kind RefusalKind
	}{
		{"no match", ScreenshotOptions{Selector: "#nope"}, RefusedNoMatch},
		{"several matches", ScreenshotOptions{Selector: ".item"}, RefusedManyMatches},
		{"invalid selector", ScreenshotOptions{Selector: "div[[["}, RefusedInvalid},
		{"display none", ScreenshotOptions{Selector: "#hidden"}, RefusedEmpty},
		{"off-screen selector", ScreenshotOptions{Selector: "#offscreen"}, RefusedOffScreen},
		{"off-screen element", ScreenshotOptions{Element: hidden}, RefusedOffScreen},
		{"detached element", ScreenshotOptions{Element: detached}, RefusedDetached},
		{"clip outside the page", ScreenshotOptions{Clip: clipRect(5000, 5000, 10, 10)}, RefusedOffScreen},
		{"negative clip", ScreenshotOptions{Clip: clipRect(0, 0, -1, 10)}, RefusedInvalid},
		{"two regions", ScreenshotOptions{FullPage: true, Selector: "#red"}, RefusedInvalid},
		{"bad type", ScreenshotOptions{Type: "gif"}, RefusedInvalid},
		{"bad quality", ScreenshotOptions{Type: "jpeg", Quality: 101}, RefusedInvalid},
		{"quality for a png", ScreenshotOptions{Type: "png", Quality: 50}, RefusedInvalid},
		{"quality for the default png", ScreenshotOptions{Quality: 50}, RefusedInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Screenshot(testCtx(t), p, tt.opts)
			if s != nil {
				t.Fatalf("got an image for a refused call")
			}
			assertRefused(t, err, tt.kind)
		})
	}
}

// TestScreenshotZeroHeightElement covers an element with width but no height.
func TestScreenshotZeroHeightElement(t *testing.T) {
	srv := serve(t, map[string]string{"/": shotPage})
	p := openPage(t, srv.URL+"/", 1)
	_, err := Screenshot(testCtx(t), p, ScreenshotOptions{Selector: "#zero"})
	assertRefused(t, err, RefusedEmpty)
	// The page was not left scrolled somewhere surprising by a refusal.
	m, err := proto.PageGetLayoutMetrics{}.Call(p)
	if err != nil {
		t.Fatal(err)
	}
	if m.CSSVisualViewport.PageY != 0 {
		t.Errorf("refusal scrolled the page to %v", m.CSSVisualViewport.PageY)
	}
}

// TestScreenshotScrolledViewport checks that the default shot is what the
// user sees after scrolling, and that its region is in document space.
func TestScreenshotScrolledViewport(t *testing.T) {
	srv := serve(t, map[string]string{"/": shotPage})
	p := openPage(t, srv.URL+"/", 1)
	if _, err := p.Eval(`() => window.scrollTo(0, 950)`); err != nil {
		t.Fatal(err)
	}
	s, err := Screenshot(testCtx(t), p, ScreenshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	img := decode(t, s)
	if s.Region != (rect(0, 950, 800, 600)) {
		t.Errorf("region %+v, want {0 950 800 600}", s.Region)
	}
	// #red spans document y 1000-1100, so viewport y 50-150.
	if c := img.At(200, 100); !near(c, 255, 0, 0) {
		t.Errorf("colour at the red box %v", c)
	}
	if c := img.At(200, 300); !near(c, 255, 255, 255) {
		t.Errorf("colour below the red box %v", c)
	}
}

// TestScreenshotFixedElement checks that an element that moves with the
// scroll (position: fixed) is measured after scrolling.
func TestScreenshotFixedElement(t *testing.T) {
	page := `<!doctype html><style>html,body{margin:0} body{height:3000px}
#bar{position:fixed;top:0;left:0;width:800px;height:40px;background:#0f0}
#low{position:absolute;top:2000px;left:0;width:10px;height:10px}</style>
<div id="bar"></div><div id="low"></div>`
	srv := serve(t, map[string]string{"/": page})
	p := openPage(t, srv.URL+"/", 1)
	if _, err := p.Eval(`() => window.scrollTo(0, 1200)`); err != nil {
		t.Fatal(err)
	}
	s, err := Screenshot(testCtx(t), p, ScreenshotOptions{Selector: "#bar"})
	if err != nil {
		t.Fatal(err)
	}
	img := decode(t, s)
	if s.Region != (rect(0, 1200, 800, 40)) {
		t.Errorf("region %+v, want {0 1200 800 40}", s.Region)
	}
	if c := img.At(s.Width/2, s.Height/2); !near(c, 0, 255, 0) {
		t.Errorf("centre colour %v, want green", c)
	}
}

// A full page far taller than wide keeps a readable width: the image is the
// top of the page, as tall as the long-edge cap allows, and says so.
func TestScreenshotTallPageKeepsReadableWidth(t *testing.T) {
	tall := `<!doctype html><html><body style="margin:0"><div style="width:1200px;height:29000px;background:#fff"></div></body></html>`
	srv := serve(t, map[string]string{"/": tall})
	p := openPage(t, srv.URL+"/", 1)
	s, err := Screenshot(testCtx(t), p, ScreenshotOptions{FullPage: true})
	if err != nil {
		t.Fatal(err)
	}
	decode(t, s)
	if s.Width < MinReadableWidth || s.Height > DefaultMaxEdge {
		t.Fatalf("a 1200x29000 page came back %dx%d; want at least %d px wide and at most %d tall", s.Width, s.Height, MinReadableWidth, DefaultMaxEdge)
	}
	if !s.Cut() || s.Region.Y != 0 || s.Region.Height >= s.Asked.Height || s.Asked.Height < 29000 {
		t.Fatalf("region %+v of %+v: want the top of the page, cut", s.Region, s.Asked)
	}
	// A page that fits is not cut.
	s, err = Screenshot(testCtx(t), p, ScreenshotOptions{Clip: &Rect{Width: 1200, Height: 1500}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Cut() || s.Width < MinReadableWidth {
		t.Fatalf("a 1200x1500 clip: %dx%d, cut %v", s.Width, s.Height, s.Cut())
	}
}

// A quality given for a PNG is refused, naming the fix, not dropped
// without a word; with jpeg it is used.
func TestScreenshotQualityNeedsJPEG(t *testing.T) {
	srv := serve(t, map[string]string{"/": shotPage})
	p := openPage(t, srv.URL+"/", 1)
	for _, typ := range []string{"", "png", "PNG"} {
		s, err := Screenshot(testCtx(t), p, ScreenshotOptions{Type: typ, Quality: 40})
		var r *RefusedError
		if s != nil || !errors.As(err, &r) || r.Kind != RefusedInvalid || !strings.Contains(r.Reason, `quality applies to jpeg only; drop quality or set type "jpeg"`) {
			t.Fatalf("type %q with quality 40: shot %v, err %v; want refused naming the fix", typ, s != nil, err)
		}
	}
	s, err := Screenshot(testCtx(t), p, ScreenshotOptions{Type: "jpeg", Quality: 40})
	if err != nil {
		t.Fatal(err)
	}
	if decode(t, s); s.Type != TypeJPEG || s.Quality != 40 {
		t.Fatalf("jpeg at quality 40 came back %s at %d", s.Type, s.Quality)
	}
}

// A full page far wider than the viewport is not shrunk to a sliver: it
// keeps a readable scale, shows its left part as wide as the long-edge cap
// allows, fits the byte budget, and its cut names the clip to the right.
// Tall and wide, it shows its top-left corner and names both ways on.
func TestScreenshotWidePageKeepsReadableScale(t *testing.T) {
	wide := `<!doctype html><html><body style="margin:0">
<div style="width:20000px;height:500px;background:repeating-linear-gradient(90deg,#fff 0 40px,#00f 40px 44px)">` +
		strings.Repeat("wide page text ", 400) + `</div></body></html>`
	both := `<!doctype html><html><body style="margin:0"><div style="width:20000px;height:20000px;background:#fff">` +
		strings.Repeat("tall and wide page text ", 400) + `</div></body></html>`
	srv := serve(t, map[string]string{"/wide": wide, "/both": both})
	readable := float64(MinReadableWidth) / ReadableSpan

	check := func(t *testing.T, s *Shot, askedW, askedH float64) *contractCut {
		t.Helper()
		decode(t, s)
		t.Logf("region %+v of %+v: %dx%d %s, %d bytes", s.Region, s.Asked, s.Width, s.Height, s.Type, len(s.Bytes))
		if s.Width > DefaultMaxEdge || s.Height > DefaultMaxEdge || len(s.Bytes) > DefaultMaxBytes {
			t.Fatalf("image %dx%d, %d bytes: over the %d px edge or the %d-byte budget", s.Width, s.Height, len(s.Bytes), DefaultMaxEdge, DefaultMaxBytes)
		}
		if shrink := float64(s.Width) / s.Region.Width; shrink < readable*0.99 {
			t.Fatalf("region %+v came back %d px wide: shrunk %.3fx, past the readable %.3fx", s.Region, s.Width, shrink, readable)
		}
		if s.Asked.Width < askedW || s.Asked.Height < askedH {
			t.Fatalf("asked %+v, want the whole %vx%v page", s.Asked, askedW, askedH)
		}
		if !s.Cut() || s.Region.X != 0 || s.Region.Y != 0 || s.Region.Width >= s.Asked.Width {
			t.Fatalf("region %+v of %+v: want the left of the page, cut", s.Region, s.Asked)
		}
		c := s.CutReport()
		if c == nil || c.Asked != s.Asked || c.RightClip == nil ||
			*c.RightClip != rect(s.Region.Width, 0, s.Region.Width, s.Region.Height) {
			t.Fatalf("cut %+v of region %+v: want right_clip, the part right of it", c, s.Region)
		}
		return c
	}

	t.Run("wide", func(t *testing.T) {
		p := openPage(t, srv.URL+"/wide", 1)
		s, err := Screenshot(testCtx(t), p, ScreenshotOptions{FullPage: true})
		if err != nil {
			t.Fatal(err)
		}
		c := check(t, s, 20000, 500)
		if s.Region.Height != s.Asked.Height || c.NextClip != *c.RightClip || !strings.Contains(c.Note, "shows the left") ||
			!strings.Contains(c.Note, clipJSON(*c.RightClip)) {
			t.Fatalf("cut %+v of region %+v: want the whole height, next_clip to the right, a note naming it", c, s.Region)
		}
		// The clip it names shows the next part at the same scale.
		next, err := Screenshot(testCtx(t), p, ScreenshotOptions{Clip: c.RightClip})
		if err != nil {
			t.Fatal(err)
		}
		if next.Region != *c.RightClip || next.Cut() || next.Width < s.Width-1 {
			t.Fatalf("right_clip %+v showed %+v at %dx%d (cut %v)", *c.RightClip, next.Region, next.Width, next.Height, next.Cut())
		}
	})
	t.Run("tall and wide", func(t *testing.T) {
		p := openPage(t, srv.URL+"/both", 1)
		s, err := Screenshot(testCtx(t), p, ScreenshotOptions{FullPage: true})
		if err != nil {
			t.Fatal(err)
		}
		c := check(t, s, 20000, 20000)
		if s.Region.Height >= s.Asked.Height || c.NextClip != rect(0, s.Region.Height, s.Region.Width, s.Region.Height) ||
			!strings.Contains(c.Note, "top-left") || !strings.Contains(c.Note, clipJSON(c.NextClip)) || !strings.Contains(c.Note, clipJSON(*c.RightClip)) {
			t.Fatalf("cut %+v of region %+v: want the top-left corner, next_clip below, a note naming both clips", c, s.Region)
		}
	})
	t.Run("dpr 2", func(t *testing.T) {
		p := openPage(t, srv.URL+"/wide", 2)
		s, err := Screenshot(testCtx(t), p, ScreenshotOptions{FullPage: true})
		if err != nil {
			t.Fatal(err)
		}
		check(t, s, 20000, 500)
	})
}

type contractCut = contract.ScreenshotCut

// rect is a Rect from its four numbers.
func rect(x, y, w, h float64) Rect { return Rect{X: x, Y: y, Width: w, Height: h} }

// clipRect is a Rect to clip to.
func clipRect(x, y, w, h float64) *Rect { r := rect(x, y, w, h); return &r }
