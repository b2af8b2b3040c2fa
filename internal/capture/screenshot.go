package capture

import (
	"bytes"
	"context"
	"fmt"
	"image"
	_ "image/jpeg" // DecodeConfig of captured JPEGs
	_ "image/png"  // DecodeConfig of captured PNGs
	"math"
	"strings"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"github.com/durable-browser/durable-browser/contract"
)

// Screenshot defaults.
const (
	// DefaultMaxBytes is the byte budget when ScreenshotOptions.MaxBytes is 0.
	DefaultMaxBytes = 400 << 10
	// DefaultMaxEdge bounds the long edge in pixels when MaxEdge is 0.
	DefaultMaxEdge = 2000
	// DefaultJPEGQuality is used for JPEG when Quality is 0, and as the
	// first step when a PNG over budget is re-encoded as JPEG.
	DefaultJPEGQuality = 80
	// minQuality is the last JPEG quality step before the scale is reduced.
	minQuality = 10
	// MinReadableWidth is the narrowest image a region is shrunk to (or
	// its own width, when narrower): below it text cannot be read. A
	// region that would need more shrinking is cut at the bottom instead.
	MinReadableWidth = 600
	// ReadableSpan is the widest span of a region, in CSS px, that is ever
	// shrunk to MinReadableWidth: a page as wide as the default 1280 px
	// viewport. A wider region is shrunk no more than such a page (the
	// scale that matters for reading is the shrinking, not the image's
	// width): what does not fit the long-edge cap at that scale is cut at
	// the right (and at the bottom), so a very wide page is never a sliver.
	ReadableSpan = 1280
)

// QualityNeedsJPEG is the refusal of a quality given for a PNG, which is
// lossless: the same words as the tool's argument check.
const QualityNeedsJPEG = contract.ScreenshotQualityNeedsJPEG

// Image types.
const (
	TypePNG  = "png"
	TypeJPEG = "jpeg"
)

// Rect is a region in CSS pixels of the page (document coordinates: 0,0 is
// the top left of the document, not of the viewport): the contract's, so a
// shot's regions go into a result as they are.
type Rect = contract.Rect

func empty(r Rect) bool { return !(r.Width > 0 && r.Height > 0) }

func intersect(r, o Rect) Rect {
	x0, y0 := math.Max(r.X, o.X), math.Max(r.Y, o.Y)
	x1, y1 := math.Min(r.X+r.Width, o.X+o.Width), math.Min(r.Y+r.Height, o.Y+o.Height)
	if x1 <= x0 || y1 <= y0 {
		return Rect{X: x0, Y: y0}
	}
	return Rect{X: x0, Y: y0, Width: x1 - x0, Height: y1 - y0}
}

// ScreenshotOptions choose the region and encoding. At most one of FullPage,
// Clip, Element and Selector may be given; none means the viewport. A blank
// Selector and a Clip without area count as not given.
type ScreenshotOptions struct {
	// FullPage captures the whole document.
	FullPage bool
	// Clip is a region in CSS pixels of the document (the space of
	// Shot.Region); it is cut to the document's bounds.
	Clip *Rect
	// Element is captured after being scrolled into view; the caller
	// resolves it (for example from a snapshot id).
	Element *rod.Element
	// Selector is a CSS selector that must match exactly one element.
	Selector string
	// Type is "png" (default) or "jpeg".
	Type string
	// Quality is the JPEG quality, 1-100 (default DefaultJPEGQuality);
	// given for a PNG it is refused (RefusedInvalid), never dropped.
	Quality int
	// MaxBytes is the byte budget (default DefaultMaxBytes). It is met by
	// stepping JPEG quality down (a PNG switches to JPEG), then the scale.
	MaxBytes int
	// MaxEdge bounds the long edge in pixels (default DefaultMaxEdge).
	MaxEdge int
}

// Shot is an encoded image and where it came from. (It is not named
// Screenshot because the function is.)
type Shot struct {
	// Bytes is the encoded image.
	Bytes []byte
	// Type is "png" or "jpeg" (a PNG over budget comes back as JPEG).
	Type string
	// Width and Height are the image's size in pixels.
	Width, Height int
	// Region is what was captured, in CSS pixels of the document.
	Region Rect
	// DPR is the page's device pixel ratio.
	DPR float64
	// Quality is the JPEG quality used (0 for PNG).
	Quality int
	// Scale is the factor applied on top of DPR to cap the long edge and
	// meet the budget (1 when neither applied).
	Scale float64
	// Asked is the region asked for; when showing all of it would have
	// shrunk it past reading (see MinReadableWidth and ReadableSpan),
	// Region is its top-left part only.
	Asked Rect
}

// Cut reports whether the shot shows only part of the region asked: its
// top, its left, or its top left.
func (s *Shot) Cut() bool { return s.cutBottom() || s.cutRight() }

func (s *Shot) cutBottom() bool { return s.Region.Y+s.Region.Height < s.Asked.Y+s.Asked.Height }
func (s *Shot) cutRight() bool  { return s.Region.X+s.Region.Width < s.Asked.X+s.Asked.Width }

// CutReport says what a cut shot left out and the clips that show the rest,
// for a result; nil when the shot shows all of the region asked. The
// screenshot tool and a code cell's page.screenshot both answer it.
func (s *Shot) CutReport() *contract.ScreenshotCut {
	if !s.Cut() {
		return nil
	}
	r, asked := s.Region, s.Asked
	c := &contract.ScreenshotCut{Asked: asked}
	var below, right contract.Rect
	if s.cutBottom() {
		below = contract.Rect{X: r.X, Y: r.Y + r.Height, Width: r.Width, Height: math.Min(r.Height, asked.Y+asked.Height-(r.Y+r.Height))}
	}
	if s.cutRight() {
		right = contract.Rect{X: r.X + r.Width, Y: r.Y, Width: math.Min(r.Width, asked.X+asked.Width-(r.X+r.Width)), Height: r.Height}
		c.RightClip = &right
	}
	const why = "showing the whole region would shrink its text too small to read"
	switch {
	case !s.cutRight():
		c.NextClip = below
		c.Note = fmt.Sprintf("this image shows the top %.0f of %.0f CSS px: %s. To see the rest, call screenshot with clip %s (next_clip), and so on down the page",
			r.Height, asked.Height, why, clipJSON(below))
	case !s.cutBottom():
		c.NextClip = right
		c.Note = fmt.Sprintf("this image shows the left %.0f of %.0f CSS px (x %.0f to %.0f): %s. To see the rest, call screenshot with clip %s (next_clip), and so on across the page; "+
			"or take a screenshot of one element (id, locator or selector)",
			r.Width, asked.Width, r.X, r.X+r.Width, why, clipJSON(right))
	default:
		c.NextClip = below
		c.Note = fmt.Sprintf("this image shows the top-left %.0fx%.0f of %.0fx%.0f CSS px (x %.0f to %.0f, y %.0f to %.0f): %s. To see the rest, call screenshot with clip %s (right_clip) for the part to the right "+
			"and %s (next_clip) for the part below, and so on; or take a screenshot of one element (id, locator or selector)",
			r.Width, r.Height, asked.Width, asked.Height, r.X, r.X+r.Width, r.Y, r.Y+r.Height, why, clipJSON(right), clipJSON(below))
	}
	return c
}

// clipJSON spells r as a screenshot clip argument, whole CSS pixels that
// cover it.
func clipJSON(r contract.Rect) string {
	return fmt.Sprintf(`{"x":%.0f,"y":%.0f,"width":%.0f,"height":%.0f}`, r.X, r.Y, math.Ceil(r.Width), math.Ceil(r.Height))
}

type mode int

const (
	modeViewport mode = iota
	modeFull
	modeClip
	modeElement
	modeSelector
)

// Screenshot captures p as o asks. Refusals are *RefusedError.
func Screenshot(ctx context.Context, p *rod.Page, o ScreenshotOptions) (*Shot, error) {
	m, o, err := normalize(o)
	if err != nil {
		return nil, err
	}
	p = p.Context(ctx)

	var el *rod.Element
	switch m {
	case modeSelector:
		if el, err = selectOne(p, o.Selector); err != nil {
			return nil, err
		}
	case modeElement:
		el = o.Element.Context(ctx)
	}
	doc, view, err := layout(p)
	if err != nil {
		return nil, err
	}

	var region Rect
	switch m {
	case modeViewport:
		region = view
	case modeFull:
		region = doc
	case modeClip:
		region = intersect(*o.Clip, doc)
		if empty(region) {
			return nil, refuse(RefusedOffScreen, fmt.Sprintf(
				"the clip lies outside the page (%.0fx%.0f CSS px); give a clip inside it, in document coordinates", doc.Width, doc.Height))
		}
	case modeElement, modeSelector:
		// Every check runs before the page is touched; only a region that
		// will be captured is scrolled into view, then measured again
		// (a fixed or sticky element moves with the scroll).
		if _, err := elementRegion(el, doc); err != nil {
			return nil, err
		}
		if err := (proto.DOMScrollIntoViewIfNeeded{ObjectID: el.Object.ObjectID}).Call(p); err != nil {
			return nil, fmt.Errorf("capture: scroll into view: %w", err)
		}
		if doc, _, err = layout(p); err != nil {
			return nil, err
		}
		if region, err = elementRegion(el, doc); err != nil {
			return nil, err
		}
	}
	if empty(region) {
		return nil, refuse(RefusedEmpty, "the page has no visible area to capture; load a page first")
	}

	dpr, inner, err := window(p)
	if err != nil {
		return nil, err
	}
	asked := region
	// The image is never shrunk past reading: not below MinReadableWidth
	// (or the region's own width), and a region wider than ReadableSpan no
	// more than a ReadableSpan-wide one. A region that would need more
	// shrinking keeps that scale and is cut to as much of its top left as
	// the long-edge cap allows: a tall page to its top, a wide one to its
	// left, a tall and wide one to its top-left corner.
	minScale := math.Min(1, math.Min(MinReadableWidth, float64(o.MaxEdge))/(math.Min(region.Width, ReadableSpan)*dpr))
	scale := 1.0
	if long := math.Max(region.Width, region.Height) * dpr; long > float64(o.MaxEdge) {
		scale = float64(o.MaxEdge) / long
	}
	if scale < minScale*(1-1e-9) { // not for a region exactly at the bound
		scale = minScale
		// Whole CSS pixels, so the clips the cut names (rounded) show
		// the rest without a sliver left over.
		span := math.Floor(float64(o.MaxEdge) / (dpr * scale))
		region.Width = math.Min(region.Width, span)
		region.Height = math.Min(region.Height, span)
	}

	typ, quality := o.Type, o.Quality
	var data []byte
	for attempt := 0; ; attempt++ {
		// The view as it is shows, unscaled, with no scrollbar taken off:
		// captured without a clip, Chrome copies the frame it has, where a
		// clip would make it lay the page out and paint it again, twice
		// (for the clip, then back).
		asShown := m == modeViewport && scale == 1 && region == view && view.Width == inner.Width && view.Height == inner.Height
		data, err = capture(p, region, asShown, m != modeViewport, typ, quality, scale)
		if err != nil {
			return nil, err
		}
		if len(data) <= o.MaxBytes {
			break
		}
		// Over budget: PNG becomes JPEG, then quality steps down, then
		// the scale shrinks. Each step makes the next image smaller.
		switch {
		case typ == TypePNG:
			typ, quality = TypeJPEG, DefaultJPEGQuality
		case quality > minQuality:
			quality = max(minQuality, quality-15)
		case attempt < 20 && scale > minScale && scale*math.Max(region.Width, region.Height)*dpr > 64:
			scale = math.Max(scale*0.7, minScale)
		case attempt < 20 && region.Width > region.Height && region.Width*dpr*scale > 64:
			// At the readable scale and still over: show less of the
			// region, from its long side (the result's cut says so).
			region.Width *= 0.7
		case attempt < 20 && region.Height*dpr*scale > 64:
			region.Height *= 0.7
		default:
			return nil, refuse(RefusedOverBudget, fmt.Sprintf(
				"no encoding of this region fits %d bytes; capture a smaller clip or element, or raise the byte budget", o.MaxBytes))
		}
	}

	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("capture: decode captured %s: %w", typ, err)
	}
	if format != typ {
		return nil, fmt.Errorf("capture: asked for %s, got %s", typ, format)
	}
	shot := &Shot{Bytes: data, Type: typ, Width: cfg.Width, Height: cfg.Height, Region: region, DPR: dpr, Scale: scale, Asked: asked}
	if typ == TypeJPEG {
		shot.Quality = quality
	}
	return shot, nil
}

// normalize validates o, applies defaults and says which region it names.
func normalize(o ScreenshotOptions) (mode, ScreenshotOptions, error) {
	o.Selector = strings.TrimSpace(o.Selector)
	if o.Clip != nil {
		c := *o.Clip
		if c.Width < 0 || c.Height < 0 || anyNaN(c.X, c.Y, c.Width, c.Height) {
			return 0, o, refuse(RefusedInvalid, "the clip needs a non-negative width and height in CSS pixels")
		}
		if c.Width == 0 || c.Height == 0 {
			o.Clip = nil // a zero-size clip counts as not given
		}
	}
	switch strings.ToLower(strings.TrimSpace(o.Type)) {
	case "", TypePNG:
		o.Type = TypePNG
	case TypeJPEG, "jpg":
		o.Type = TypeJPEG
	default:
		return 0, o, refuse(RefusedInvalid, fmt.Sprintf("type %q is not supported; use \"png\" or \"jpeg\"", o.Type))
	}
	if o.Quality < 0 || o.Quality > 100 {
		return 0, o, refuse(RefusedInvalid, "quality must be 1-100 (JPEG only)")
	}
	if o.Type == TypePNG && o.Quality != 0 {
		// PNG is lossless: a quality would be dropped without a word.
		return 0, o, refuse(RefusedInvalid, QualityNeedsJPEG)
	}
	if o.Type == TypeJPEG && o.Quality == 0 {
		o.Quality = DefaultJPEGQuality
	}
	if o.MaxBytes < 0 || o.MaxEdge < 0 {
		return 0, o, refuse(RefusedInvalid, "max bytes and max edge must not be negative")
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxEdge == 0 {
		o.MaxEdge = DefaultMaxEdge
	}

	m, given := modeViewport, 0
	if o.FullPage {
		m, given = modeFull, given+1
	}
	if o.Clip != nil {
		m, given = modeClip, given+1
	}
	if o.Element != nil {
		m, given = modeElement, given+1
	}
	if o.Selector != "" {
		m, given = modeSelector, given+1
	}
	if given > 1 {
		return 0, o, refuse(RefusedInvalid, "give only one of full page, clip, element or selector")
	}
	return m, o, nil
}

func anyNaN(fs ...float64) bool {
	for _, f := range fs {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return true
		}
	}
	return false
}

// selectOne resolves a selector that must match exactly one element.
func selectOne(p *rod.Page, selector string) (*rod.Element, error) {
	// Count first, in one round trip, so a selector matching thousands of
	// elements does not create thousands of remote objects.
	res, err := p.Eval(`(s) => { try { return document.querySelectorAll(s).length } catch (e) { return -1 } }`, selector)
	if err != nil {
		return nil, fmt.Errorf("capture: query selector: %w", err)
	}
	switch n := res.Value.Int(); {
	case n < 0:
		return nil, refuse(RefusedInvalid, fmt.Sprintf("%q is not a valid CSS selector; fix its syntax", selector))
	case n == 0:
		return nil, refuse(RefusedNoMatch, fmt.Sprintf("no element matches %q; take a snapshot and use an id, or correct the selector", selector))
	case n > 1:
		return nil, refuse(RefusedManyMatches, fmt.Sprintf("%d elements match %q; make the selector match one (add an id, class or :nth-of-type)", n, selector))
	}
	els, err := p.Elements(selector)
	if err != nil {
		return nil, fmt.Errorf("capture: resolve selector: %w", err)
	}
	if len(els) != 1 {
		// The page changed between the count and the lookup.
		return nil, refuse(RefusedNoMatch, fmt.Sprintf("%q no longer matches exactly one element; the page changed, try again", selector))
	}
	return els[0], nil
}

// layout returns the document's and the visual viewport's rectangles in
// document CSS pixels.
func layout(p *rod.Page) (doc, view Rect, err error) {
	m, err := proto.PageGetLayoutMetrics{}.Call(p)
	if err != nil {
		return doc, view, fmt.Errorf("capture: layout metrics: %w", err)
	}
	if m.CSSContentSize == nil || m.CSSVisualViewport == nil {
		return doc, view, fmt.Errorf("capture: layout metrics incomplete")
	}
	vv := m.CSSVisualViewport
	view = Rect{X: vv.PageX, Y: vv.PageY, Width: vv.ClientWidth, Height: vv.ClientHeight}
	// The document is never smaller than the viewport for capture purposes.
	doc = Rect{
		Width:  math.Max(m.CSSContentSize.Width, view.X+view.Width),
		Height: math.Max(m.CSSContentSize.Height, view.Y+view.Height),
	}
	return doc, view, nil
}

// elementRegion is the element's box cut to the document, or a refusal
// when the element is detached, has no size or lies outside the page.
// It avoids rod's ScrollIntoView and visibility waits, which would hang on
// a hidden element instead of letting it be refused.
func elementRegion(el *rod.Element, doc Rect) (Rect, error) {
	box, err := elementBox(el)
	if err != nil {
		return Rect{}, err
	}
	if empty(box) {
		return Rect{}, refuse(RefusedEmpty, "the element has no visible size (hidden, collapsed or empty); pick a visible element or take a viewport or full-page screenshot")
	}
	region := intersect(box, doc)
	if empty(region) {
		return Rect{}, refuse(RefusedOffScreen, "the element lies outside the page's scrollable area; pick an element on the page or take a full-page screenshot")
	}
	return region, nil
}

// elementBox is the element's border box in document CSS pixels.
func elementBox(el *rod.Element) (Rect, error) {
	res, err := el.Eval(`function () {
		if (!this.isConnected) return null;
		const r = this.getBoundingClientRect();
		return {x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width, height: r.height};
	}`)
	if err != nil {
		return Rect{}, fmt.Errorf("capture: element box: %w", err)
	}
	if res.Value.Nil() {
		return Rect{}, refuse(RefusedDetached, "the element is no longer in the page; take a new snapshot")
	}
	r := Rect{
		X: res.Value.Get("x").Num(), Y: res.Value.Get("y").Num(),
		Width: res.Value.Get("width").Num(), Height: res.Value.Get("height").Num(),
	}
	if anyNaN(r.X, r.Y, r.Width, r.Height) {
		return Rect{}, refuse(RefusedEmpty, "the element has no measurable box; pick another element")
	}
	return r, nil
}

// window is the page's device pixel ratio and its window's inner size
// (CSS px, scrollbars included), in one round trip.
func window(p *rod.Page) (dpr float64, inner Rect, err error) {
	res, err := proto.RuntimeEvaluate{Expression: `[window.devicePixelRatio, window.innerWidth, window.innerHeight]`, ReturnByValue: true}.Call(p)
	if err == nil && res.ExceptionDetails != nil {
		err = fmt.Errorf("%s", res.ExceptionDetails.Text)
	}
	if err != nil {
		return 0, inner, fmt.Errorf("capture: device pixel ratio: %w", err)
	}
	v := res.Result.Value.Arr()
	if len(v) != 3 {
		return 0, inner, fmt.Errorf("capture: device pixel ratio: got %s", res.Result.Value.JSON("", ""))
	}
	dpr = v[0].Num()
	if !(dpr > 0) || dpr > 16 {
		dpr = 1
	}
	return dpr, Rect{Width: v[1].Num(), Height: v[2].Num()}, nil
}

// capture encodes region (document CSS px) at scale on top of the DPR;
// asShown, the viewport as it is shown, is captured without a clip. Chrome
// encodes for speed (a PNG some 30% larger, zlib's fast level): the
// encoding is most of a capture's CPU, and a shot over the byte budget
// steps to JPEG anyway.
func capture(p *rod.Page, region Rect, asShown, beyondViewport bool, typ string, quality int, scale float64) ([]byte, error) {
	req := proto.PageCaptureScreenshot{
		Format:                proto.PageCaptureScreenshotFormat(typ),
		FromSurface:           true,
		CaptureBeyondViewport: beyondViewport,
		OptimizeForSpeed:      true,
	}
	if !asShown {
		req.Clip = &proto.PageViewport{X: region.X, Y: region.Y, Width: region.Width, Height: region.Height, Scale: scale}
	}
	if typ == TypeJPEG {
		req.Quality = &quality
	}
	res, err := req.Call(p)
	if err != nil {
		return nil, fmt.Errorf("capture: screenshot: %w", err)
	}
	return res.Data, nil
}
