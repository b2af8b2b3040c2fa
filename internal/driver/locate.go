package driver

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/durable-browser/durable-browser/contract"
)

// locatorText writes the locator as the model gave it, bounded.
func locatorText(l contract.Locator) string {
	var parts []string
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, k+"="+strconv.Quote(truncate(v, 60)))
		}
	}
	add("role", l.Role)
	add("name", l.Name)
	add("label", l.Label)
	add("text", l.Text)
	add("placeholder", l.Placeholder)
	add("testid", l.TestID)
	return "{" + strings.Join(parts, " ") + "}"
}

// maxCandidates bounds the candidates a refused locator lists.
const maxCandidates = 8

// fieldRoles are the roles a label names.
var fieldRoles = map[string]bool{
	"textbox": true, "searchbox": true, "combobox": true, "listbox": true, "checkbox": true, "radio": true,
	"switch": true, "slider": true, "spinbutton": true, "Date": true, "DateTime": true, "InputTime": true,
	"ColorWell": true, "button": true, // a file input is a button
}

// norm folds case and spacing for matching names.
func norm(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// locate walks tab t afresh and finds the one visible element l matches.
// The walk's ids join the latest snapshot's (they are the same ids for the
// same elements), so the ids a refusal lists can be used next.
func (b *Browser) locate(ctx context.Context, t *tab, l contract.Locator) (ref, int, error) {
	r, docs, err := b.walkPage(ctx, t, nil, "", maxSearchNodes, fromTop)
	if err != nil {
		return ref{}, 0, err
	}
	return b.locateIn(t, r, docs, l)
}

// locateIn finds the one visible element l matches in a walk of tab t
// (r and docs, from walkPage).
func (b *Browser) locateIn(t *tab, r *renderer, docs []*frameDoc, l contract.Locator) (ref, int, error) {
	b.mu.Lock()
	if s := b.snap; s != nil && s.tab == t && s.navSeq == t.navSeq && noFragment(s.url) == noFragment(docs[0].res.U) {
		for id, rf := range r.refs {
			s.refs[id] = rf
		}
	} else {
		b.snap = &snapState{epoch: b.epoch, tab: t, navSeq: t.navSeq, url: docs[0].res.U, refs: r.refs}
	}
	b.mu.Unlock()

	var want string
	var pick func(rf ref) (string, bool) // the text to match, and whether rf can match at all
	switch {
	case l.Role != "":
		want = l.Name
		pick = func(rf ref) (string, bool) { return rf.name, strings.EqualFold(rf.role, l.Role) }
	case l.Label != "":
		want = l.Label
		pick = func(rf ref) (string, bool) { return rf.name, fieldRoles[rf.role] }
	case l.Placeholder != "":
		want = l.Placeholder
		pick = func(rf ref) (string, bool) { return rf.ph, rf.ph != "" }
	case l.TestID != "":
		pick = func(rf ref) (string, bool) { return "", rf.tid == l.TestID }
	case l.Text != "":
		want = l.Text
		pick = func(rf ref) (string, bool) { return rf.name, true }
	default:
		return ref{}, 0, &LocatorError{Locator: l, Reason: "names nothing to look for"}
	}
	// Page order, so candidates read as the snapshot does.
	var exact, part []int
	w := norm(want)
	for _, ln := range r.lines {
		if ln.id == 0 {
			continue
		}
		rf := r.refs[ln.id]
		got, ok := pick(rf)
		if !ok {
			continue
		}
		switch g := norm(got); {
		case w == "" || g == w:
			exact = append(exact, ln.id)
		case strings.Contains(g, w):
			part = append(part, ln.id)
		}
	}
	// Text matches prefer what can be acted on.
	if l.Text != "" {
		exact, part = r.preferInteractive(exact), r.preferInteractive(part)
	}
	found := exact
	if len(found) == 0 {
		found = part
	}
	if len(found) != 1 {
		e := &LocatorError{Locator: l, Found: len(found), Partial: partNote(docs, maxSearchNodes)}
		for _, id := range found {
			if len(e.Candidates) == maxCandidates {
				break
			}
			rf := r.refs[id]
			c := fmt.Sprintf("[%d] %s", id, rf.role)
			if rf.name != "" {
				c += " " + strconv.Quote(rf.name)
			}
			e.Candidates = append(e.Candidates, c)
		}
		return ref{}, 0, e
	}
	return r.refs[found[0]], found[0], nil
}

// preferInteractive keeps the interactive ids among ids, when there are any.
func (r *renderer) preferInteractive(ids []int) []int {
	var out []int
	for _, id := range ids {
		if interactiveRoles[r.refs[id].role] {
			out = append(out, id)
		}
	}
	if len(out) == 0 {
		return ids
	}
	return out
}

// LocatorError is a locator that matched no visible element or several.
type LocatorError struct {
	Locator    contract.Locator
	Found      int
	Candidates []string // "[id] role \"name\"", at most maxCandidates
	Reason     string
	// Partial, when set, says the page was read only in part and how to
	// read the rest (partNote): what matched none may be there.
	Partial string
}

func (e *LocatorError) Error() string {
	switch {
	case e.Reason != "":
		return fmt.Sprintf("locator %s %s", locatorText(e.Locator), e.Reason)
	case e.Found == 0 && e.Partial != "":
		return fmt.Sprintf("locator %s matches no visible element in the part of the page that was read: %s", locatorText(e.Locator), e.Partial)
	case e.Found == 0:
		return fmt.Sprintf("locator %s matches no visible element; take a snapshot to see the page, or wait for it first", locatorText(e.Locator))
	}
	more := ""
	if e.Found > len(e.Candidates) {
		more = fmt.Sprintf(" and %d more", e.Found-len(e.Candidates))
	}
	return fmt.Sprintf("locator %s matches %d visible elements: %s%s; act on one by its id, or give a more exact locator",
		locatorText(e.Locator), e.Found, strings.Join(e.Candidates, ", "), more)
}
