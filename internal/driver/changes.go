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
	case base.url != now.url:
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
		}
		return l.render()
	}
	use := func(l line) bool { return !interactive || (l.interactive && l.id > 0) }
	oldByID := map[int]string{}
	oldText := map[string]int{}
	for _, l := range old {
		if !use(l) {
			continue
		}
		if l.id > 0 {
			oldByID[l.id] = render(l)
		} else {
			oldText[render(l)]++
		}
	}
	newIDs := map[int]bool{}
	newText := map[string]int{}
	var plus []string
	for _, l := range new {
		if !use(l) {
			continue
		}
		s := render(l)
		if l.id > 0 {
			newIDs[l.id] = true
			was, ok := oldByID[l.id]
			switch {
			case !ok:
				plus = append(plus, "+ "+s)
				ch.Added++
			case was != s:
				plus = append(plus, "~ "+s)
				ch.Changed++
			}
			continue
		}
		newText[s]++
		if newText[s] > oldText[s] {
			plus = append(plus, "+ "+s)
			ch.Added++
		}
	}
	var minus []string
	seen := map[string]int{}
	for _, l := range old {
		if !use(l) {
			continue
		}
		s := render(l)
		if l.id > 0 {
			if !newIDs[l.id] {
				minus = append(minus, "- "+s)
				ch.Removed++
			}
			continue
		}
		seen[s]++
		if seen[s] > newText[s] {
			minus = append(minus, "- "+s)
			ch.Removed++
		}
	}
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
