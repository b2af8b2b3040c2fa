package driver

import (
	"fmt"
	"strings"

	"github.com/durable-browser/durable-browser/contract"
)

// kept is what a snapshot saw, to compare a later one with.
type kept struct {
	tab    *tab
	doc    string // the main frame's document token
	navSeq int
	url    string
	title  string
	lines  []line
}

// keptSnapshots bounds how many earlier snapshots since can name.
const keptSnapshots = 4

// keep files what a walk saw under epoch, forgetting the oldest.
func (b *Browser) keep(epoch int, k *kept) {
	if b.kept == nil {
		b.kept = map[int]*kept{}
	}
	b.kept[epoch] = k
	for e := range b.kept {
		if e <= epoch-keptSnapshots {
			delete(b.kept, e)
		}
	}
}

// lookedAt is what the caller last saw of the page: the latest snapshot or
// observation, when it was kept whole (nil otherwise).
func (b *Browser) lookedAt() *kept {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.snap == nil {
		return nil
	}
	return b.kept[b.snap.epoch]
}

// sameDocument says why now cannot be compared with base line by line, or "".
func sameDocument(base, now *kept) string {
	switch {
	case base.tab != now.tab:
		return "the active tab changed"
	case base.doc != now.doc || base.navSeq != now.navSeq:
		return "the page navigated"
	case noFragment(base.url) != noFragment(now.url): // an anchor is the same page
		return "the page's URL changed"
	}
	return ""
}

// diff lists what changed from old to new, one line each: "- " for a line
// gone, "+ " for a line added, "~ " for an element whose line changed (its
// new line). Elements are matched by id (ids stay with their elements on
// one document); lines without one (text) by their content. In
// interactive mode only interactive elements count.
func diff(old, new []line, interactive bool) (string, contract.Changes) {
	var ch contract.Changes
	render := func(l line) string {
		l.depth = 0
		if interactive {
			l.dup = false
			if !l.interactive {
				l.name = l.live // what the listing says of a live region
			}
		}
		return l.render()
	}
	use := func(l line) bool { return !interactive || l.listed() }
	// side is one document: its elements' lines by id, its text lines counted.
	type side struct {
		byID map[int]string
		text map[string]int
	}
	index := func(ls []line) side {
		sd := side{byID: map[int]string{}, text: map[string]int{}}
		for _, l := range ls {
			if !use(l) {
				continue
			}
			if l.id > 0 {
				sd.byID[l.id] = render(l)
			} else {
				sd.text[render(l)]++
			}
		}
		return sd
	}
	oldSide, newSide := index(old), index(new)
	// missing lists, in order, ls's lines that other lacks, marked and
	// counted in n: an element whose id it lacks, a text line past its
	// count of that line. With changed, an element whose line differs
	// there is listed too ("~ ").
	missing := func(ls []line, other side, mark string, n *int, changed bool) []string {
		var out []string
		seen := map[string]int{}
		for _, l := range ls {
			if !use(l) {
				continue
			}
			s := render(l)
			if l.id > 0 {
				was, ok := other.byID[l.id]
				switch {
				case !ok:
					out = append(out, mark+s)
					*n++
				case changed && was != s:
					out = append(out, "~ "+s)
					ch.Changed++
				}
				continue
			}
			seen[s]++
			if seen[s] > other.text[s] {
				out = append(out, mark+s)
				*n++
			}
		}
		return out
	}
	plus := missing(new, oldSide, "+ ", &ch.Added, true)
	minus := missing(old, newSide, "- ", &ch.Removed, false)
	var sb strings.Builder
	for _, s := range append(minus, plus...) {
		sb.WriteString(s)
		sb.WriteByte('\n')
	}
	return sb.String(), ch
}

// changesPage bounds a diff's text to max characters, as a snapshot is.
func changesPage(text string, max int) page {
	if len(text) <= max {
		return page{text: text}
	}
	lines := strings.SplitAfter(text, "\n")
	var sb strings.Builder
	n := 0
	for _, l := range lines {
		if sb.Len()+len(l) > max && n > 0 {
			break
		}
		sb.WriteString(l)
		n++
	}
	return page{text: sb.String(), truncated: true,
		cut: fmt.Sprintf("showing %d of %d changed lines to stay under %d characters; take a snapshot without since to see the page", n, len(lines)-1, max)}
}
