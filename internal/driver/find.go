package driver

import (
	"fmt"
	"regexp"
	"strings"
)

// Find answers a snapshot that asks for elements by role, name or text
// instead of the whole page (issue 30): the matching lines only, each with
// its id and under the heading or landmark it sits in, paged like any
// snapshot. The ids are the page's, so a match is acted on directly.

// FindError is a find that cannot be run as written.
type FindError struct{ Reason string }

func (e *FindError) Error() string { return "driver: find: " + e.Reason }

// matcher is a compiled find: a role (exact, any case) and a pattern, a
// case-insensitive substring or a /regex/.
type matcher struct {
	role string
	sub  string
	re   *regexp.Regexp
	desc string
}

func newMatcher(role, find string) (*matcher, error) {
	m := &matcher{role: strings.ToLower(strings.TrimSpace(role))}
	var desc []string
	if m.role != "" {
		desc = append(desc, "role "+m.role)
	}
	f := strings.TrimSpace(find)
	if len(f) > 2 && strings.HasPrefix(f, "/") && strings.HasSuffix(f, "/") {
		re, err := regexp.Compile(f[1 : len(f)-1])
		if err != nil {
			return nil, &FindError{Reason: fmt.Sprintf("%q is not a regular expression (%v); write a plain substring, or a Go regexp between slashes such as /^Save( all)?$/", truncate(f, 60), err)}
		}
		m.re = re
	} else {
		m.sub = strings.ToLower(f)
	}
	if f != "" {
		desc = append(desc, "find "+truncate(f, 60))
	}
	m.desc = strings.Join(desc, ", ")
	return m, nil
}

func (m *matcher) text(s string) bool {
	if m.re != nil {
		return m.re.MatchString(s)
	}
	return strings.Contains(strings.ToLower(s), m.sub)
}

// match says whether line l matches: an element by its role and its name
// (a link also by its target, a field by its value); text by its words,
// when no role is asked for.
func (m *matcher) match(l line) bool {
	if !l.elem || l.id == 0 {
		// Text, or a paragraph or cell holding it.
		return m.role == "" && (m.sub != "" || m.re != nil) && m.text(l.name)
	}
	if m.role != "" && strings.ToLower(l.role) != m.role {
		return false
	}
	if m.sub == "" && m.re == nil {
		return true
	}
	return m.text(l.name) || (l.href != "" && m.text(l.href)) || (l.tail != "" && m.text(l.tail))
}

// find renders the lines matching m, each after the region it sits in,
// at most max characters a page from offset (1 is the first match).
func (r *renderer) find(m *matcher, max, offset int) page {
	regs, in := r.regions()
	var rendered []string
	var heads []int
	lastReg, lastHead, n := -2, -1, 0
	for i, l := range r.lines {
		if !m.match(l) {
			continue
		}
		n++
		k := in[i]
		if k != lastReg {
			lastReg, lastHead = k, -1
			if k >= 0 {
				lastHead = len(rendered)
				rendered = append(rendered, r.where(regs, k))
				heads = append(heads, -1)
			}
		}
		s := l.format(false)
		if !l.elem || l.id == 0 {
			if a := r.owner(i); a >= 0 {
				s += " in " + r.lines[a].format(false)
			}
		}
		rendered = append(rendered, s)
		heads = append(heads, lastHead)
	}
	if n == 0 {
		if r.partial {
			// Not "nothing on the page": the rest may hold it (the cut
			// goes on to say what was not read, and how to read it).
			return page{cut: fmt.Sprintf("nothing in the part of the page that was read matches %s (%d lines, %d actionable elements), but the page was not read whole, and the rest may hold it", m.desc, len(r.lines), r.actionable())}
		}
		return page{cut: fmt.Sprintf("nothing on the page matches %s (%d lines, %d actionable elements); try a shorter name, another role, or no role", m.desc, len(r.lines), r.actionable())}
	}
	pg := sequence(rendered, max, offset, "lines", func(i int) string {
		if h := heads[i]; h >= 0 {
			return rendered[h]
		}
		return ""
	})
	what := fmt.Sprintf("%d matches for %s, each under the heading or landmark it is in (scope on that id reads the region)", n, m.desc)
	if pg.cut != "" {
		what += "; " + pg.cut
	}
	pg.cut = what
	return pg
}

// where names region k as a find shows it: the region, and the one it is in.
func (r *renderer) where(regs []region, k int) string {
	l := r.lines[regs[k].line]
	l.name = clipRunes(l.name, 80)
	s := l.format(false)
	if p := regs[k].parent; p >= 0 {
		pl := r.lines[regs[p].line]
		pl.name = clipRunes(pl.name, 60)
		s += " (in " + pl.format(false) + ")"
	}
	return s
}

// owner is the nearest element with an id that holds line i, or -1.
func (r *renderer) owner(i int) int {
	for j := i - 1; j >= 0; j-- {
		if r.lines[j].end >= i && r.lines[j].id > 0 {
			return j
		}
	}
	return -1
}

func (r *renderer) actionable() int {
	n := 0
	for _, l := range r.lines {
		if l.interactive && l.id > 0 {
			n++
		}
	}
	return n
}
