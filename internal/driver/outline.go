package driver

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// A page whose snapshot would not fit its budget is first answered with an
// outline (issue 30): its headings and landmarks, each with how many
// actionable elements of which roles it holds and the first few, so a model
// reads the region it needs (scope) or finds an element (find) instead of
// paging through thousands of lines. Every region is listed or counted, and
// the ids are the ones the full page, a region read and later snapshots use.

// region is a heading or landmark of a rendering and the section it heads:
// a landmark's subtree, or a heading's lines up to the next heading of the
// same or a higher level (or the end of the landmark it is in).
type region struct {
	line   int            // its line in r.lines
	parent int            // index of the region it is in, -1 at the top
	depth  int            // regions above it, not counting one that holds only it
	last   int            // the last line of its section
	roles  map[string]int // actionable elements in its section, subregions included, by role
	own    int            // actionable elements directly in it (not in a subregion)
	total  int            // actionable elements in its section, subregions included
	first  []int          // the first few actionable lines of its section
	subs   int            // regions in its section, at any depth
	kids   int            // regions directly in it
}

// outlineSamples is how many actionable elements the outline shows of a region at most.
const outlineSamples = 3

// regions finds the outline of r's lines: every heading and landmark with an
// id, and for each line the region it sits in (an index into regs, or -1).
func (r *renderer) regions() (regs []region, in []int) {
	type open struct {
		reg, limit, level int
		heading           bool
	}
	var stack []open
	in = make([]int, len(r.lines))
	for i, l := range r.lines {
		for len(stack) > 0 && stack[len(stack)-1].limit < i {
			stack = stack[:len(stack)-1]
		}
		in[i] = -1
		if len(stack) > 0 {
			in[i] = stack[len(stack)-1].reg
		}
		if !l.outline || l.id == 0 {
			continue
		}
		if k := in[i]; l.role == "heading" && k >= 0 && len(stack) > 0 && !stack[len(stack)-1].heading &&
			regs[k].line == i-1 && strings.EqualFold(r.lines[k0(regs, k)].name, l.name) {
			// A landmark's first line is a heading of its name (a
			// section labelled by its heading): one region, not two.
			continue
		}
		level := 0
		if l.role == "heading" {
			level = l.level
			if level == 0 {
				level = 2
			}
			for len(stack) > 0 && stack[len(stack)-1].heading && stack[len(stack)-1].level >= level {
				stack = stack[:len(stack)-1]
			}
		}
		parent, limit, depth := -1, math.MaxInt, 0
		if len(stack) > 0 {
			top := stack[len(stack)-1]
			parent, limit, depth = top.reg, top.limit, regs[top.reg].depth+1
		}
		in[i] = parent
		if l.role != "heading" && l.end < limit {
			limit = l.end
		}
		regs = append(regs, region{line: i, parent: parent, depth: depth, last: i, roles: map[string]int{}})
		stack = append(stack, open{reg: len(regs) - 1, limit: limit, level: level, heading: l.role == "heading"})
	}
	// A region that is the only one in its parent (the h1 of a main) sits
	// at its parent's depth: a level of one says nothing.
	for k := range regs {
		if p := regs[k].parent; p >= 0 {
			regs[p].kids++
		}
	}
	for k := range regs {
		if p := regs[k].parent; p >= 0 {
			regs[k].depth = regs[p].depth
			if regs[p].kids > 1 {
				regs[k].depth++
			}
		}
	}
	// Sections, counts and samples, up the chain of regions each line is in.
	starts := map[int]bool{}
	for _, g := range regs {
		starts[g.line] = true
	}
	for i, l := range r.lines {
		k := in[i]
		if starts[i] {
			for p := k; p >= 0; p = regs[p].parent {
				regs[p].subs++
			}
		}
		act := l.interactive && l.id > 0
		if act && k >= 0 {
			regs[k].own++
		}
		for p := k; p >= 0; p = regs[p].parent {
			regs[p].last = i
			if act {
				regs[p].roles[l.role]++
				regs[p].total++
				if len(regs[p].first) < outlineSamples {
					regs[p].first = append(regs[p].first, i)
				}
			}
		}
	}
	return regs, in
}

// first is the first answer for a page: its rendering (only the actionable
// elements when interactive) when that fits max characters, else its outline.
func (r *renderer) first(interactive bool, max int) page {
	if interactive {
		if pg := r.interactive(max, 0); !pg.truncated {
			return pg
		}
		return r.outline(max)
	}
	if pg := r.full(max, 0); !pg.truncated {
		return pg
	}
	return r.outline(max)
}

// outline renders r's regions in at most max characters: as deep as fits,
// with as many samples as fit; regions too deep to show are counted in the
// one above them, and regions that do not fit at all are counted last.
func (r *renderer) outline(budget int) page {
	// The cut that goes with it says how to go on, in about 400 characters.
	max := budget - 400
	regs, in := r.regions()
	actions, lonely := 0, map[string]int{}
	var lonelyFirst []int
	for i, l := range r.lines {
		if l.interactive && l.id > 0 {
			actions++
			if in[i] < 0 && !l.outline {
				lonely[l.role]++
				if len(lonelyFirst) < outlineSamples {
					lonelyFirst = append(lonelyFirst, i)
				}
			}
		}
	}
	maxDepth := 0
	for _, g := range regs {
		if g.depth > maxDepth {
			maxDepth = g.depth
		}
	}
	// samples < 0 is the tersest form: each region's id, name and how many
	// actionable elements it holds. Each line comes with its region (-1 for
	// the line of elements outside any).
	type oline struct {
		text string
		reg  int
	}
	render := func(depth, samples int) []oline {
		var out []oline
		if n := sumCounts(lonely); n > 0 {
			out = append(out, oline{"(outside any heading or landmark)" + r.counts(lonely, n, lonelyFirst, samples), -1})
		}
		for k, g := range regs {
			if g.depth > depth {
				continue
			}
			var sb strings.Builder
			for i := 0; i < g.depth; i++ {
				sb.WriteString("  ")
			}
			l := r.lines[g.line]
			l.name = clipRunes(l.name, 80)
			sb.WriteString(l.format(false))
			hidden := g.depth == depth && g.kids > 1
			if samples < 0 {
				n := g.own
				if hidden {
					n = g.total
				}
				if n > 0 || hidden {
					sb.WriteString(" (" + strconv.Itoa(n) + " actionable")
					if hidden {
						sb.WriteString(", " + strconv.Itoa(g.subs) + " subsections")
					}
					sb.WriteString(")")
				}
				out = append(out, oline{sb.String(), k})
				continue
			}
			sb.WriteString(" (" + strconv.Itoa(g.last-g.line+1) + " lines")
			if hidden {
				sb.WriteString(", " + strconv.Itoa(g.subs) + " subsections")
			}
			sb.WriteString(")")
			switch {
			case hidden:
				sb.WriteString(r.counts(g.roles, g.total, g.first, samples))
			case g.own > 0:
				// Its subregions, listed below, say the rest.
				own, first := r.ownCounts(regs, in, g)
				sb.WriteString(r.counts(own, g.own, first, samples))
			}
			out = append(out, oline{sb.String(), k})
		}
		return out
	}
	size := func(lines []oline) int {
		n := 0
		for _, l := range lines {
			n += len(l.text) + 1
		}
		return n
	}
	// partial lists the regions of depth at most d, tersely, as many as fit,
	// and counts the rest: where they start, to read on with offset.
	partial := func(d int) []oline {
		var out []oline
		used := 0
		all := render(d, -1)
		for _, l := range all {
			if used+len(l.text)+1 > max-300 && len(out) > 0 && l.reg >= 0 {
				cut := l.reg
				more, acts := 0, 0
				for k := cut; k < len(regs); k++ {
					more++
					if p := regs[k].parent; p < cut {
						acts += regs[k].total
					}
				}
				out = append(out, oline{fmt.Sprintf("... %d more regions holding %d actionable elements, from line %d: offset=%d reads on from there, find lists elements by role or name",
					more, acts, regs[cut].line+1, regs[cut].line+1), -1})
				return out
			}
			out = append(out, l)
			used += len(l.text) + 1
		}
		return out
	}
	var lines []oline
	best := -1
	for d := maxDepth; d >= 0 && best < 0; d-- {
		for _, s := range []int{outlineSamples, 1, 0, -1} {
			if l := render(d, s); size(l) <= max {
				lines, best = l, d
				break
			}
		}
	}
	switch {
	case best < 0:
		// Even the top regions are too many.
		lines = partial(0)
	case best < maxDepth && len(lines) < 8:
		// A coarse outline, of a level of few regions above one of
		// many: better as many of the many as fit.
		if p := partial(best + 1); len(p) > len(lines) {
			lines = p
		}
	}
	var sb strings.Builder
	for _, l := range lines {
		sb.WriteString(l.text)
		sb.WriteByte('\n')
	}
	return page{text: sb.String(), truncated: true, next: 1, cut: fmt.Sprintf(
		"an outline: the page's %d lines (%d actionable elements) are over the budget of %d characters; "+
			"read a region with scope \"[id]\" (a heading's id reads its section), find elements with find (a name or text, /regex/) "+
			"and role, or page through every line in order with offset=1", len(r.lines), actions, budget)}
}

// ownCounts counts the actionable elements directly in region g, not in a
// subregion, with the first few.
func (r *renderer) ownCounts(regs []region, in []int, g region) (map[string]int, []int) {
	k := -1
	for i := range regs {
		if regs[i].line == g.line {
			k = i
		}
	}
	own := map[string]int{}
	var first []int
	for i := g.line + 1; i <= g.last; i++ {
		if l := r.lines[i]; in[i] == k && l.interactive && l.id > 0 {
			own[l.role]++
			if len(first) < outlineSamples {
				first = append(first, i)
			}
		}
	}
	return own, first
}

// counts says how many actionable elements of which roles, most first, and
// the first few of them.
func (r *renderer) counts(roles map[string]int, total int, first []int, samples int) string {
	if total == 0 {
		return ""
	}
	type rc struct {
		role string
		n    int
	}
	var rs []rc
	for k, v := range roles {
		rs = append(rs, rc{k, v})
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].n > rs[j].n || (rs[i].n == rs[j].n && rs[i].role < rs[j].role) })
	parts := make([]string, len(rs))
	for i, x := range rs {
		parts[i] = strconv.Itoa(x.n) + " " + x.role
	}
	out := ": " + strings.Join(parts, ", ")
	if samples > len(first) {
		samples = len(first)
	}
	if samples > 0 {
		ss := make([]string, samples)
		for i := range ss {
			l := r.lines[first[i]]
			l.name = clipRunes(l.name, 40)
			ss[i] = l.format(false)
		}
		out += " - " + strings.Join(ss, ", ")
		if total > samples {
			out += ", ..."
		}
	}
	return out
}

// k0 is region k's line.
func k0(regs []region, k int) int { return regs[k].line }

func sumCounts(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// clipRunes cuts s to n runes, marking the cut.
func clipRunes(s string, n int) string {
	rs := []rune(s)
	if len(rs) <= n {
		return s
	}
	return string(rs[:n-1]) + "…"
}

// section is the renderer for one region's lines: a heading's section
// (see region) or a landmark's subtree, as a scope on it shows them.
func (r *renderer) section(id int) *renderer {
	regs, in := r.regions()
	for i, l := range r.lines {
		if l.id != id {
			continue
		}
		for _, g := range regs {
			if g.line == i {
				return r.slice(g.line, g.last)
			}
		}
		if k := in[i]; k >= 0 && regs[k].line == i-1 {
			// The heading that names its landmark reads the landmark.
			return r.slice(regs[k].line, regs[k].last)
		}
		return r.slice(i, l.end)
	}
	return nil
}

// slice is a renderer over lines a..b, indented from the least deep of them.
func (r *renderer) slice(a, b int) *renderer {
	out := *r
	out.lines = make([]line, 0, b-a+1)
	min := math.MaxInt
	for _, l := range r.lines[a : b+1] {
		if l.depth < min {
			min = l.depth
		}
	}
	for _, l := range r.lines[a : b+1] {
		l.depth -= min
		l.end -= a
		if l.end > b-a {
			l.end = b - a
		}
		if l.ctx < a {
			l.ctx = -1
		} else {
			l.ctx -= a
		}
		out.lines = append(out.lines, l)
	}
	return &out
}
