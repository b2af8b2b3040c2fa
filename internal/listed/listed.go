// Package listed holds the bounded lists a run's answer carries (requests
// sent, held and blocked, dialogs, console errors, downloads): each keeps
// its first Max items and counts the rest, so an answer can say that a
// list is not the whole of it (contract.NotListed) instead of dropping
// what did not fit unsaid.
package listed

import "fmt"

// Max is how many items a list keeps.
const Max = 50

// List keeps the first Max items added and counts the rest. The zero
// value is an empty list.
type List[T any] struct {
	items []T
	more  int
}

// Add adds vs, keeping those that fit.
func (l *List[T]) Add(vs ...T) {
	for _, v := range vs {
		if len(l.items) < Max {
			l.items = append(l.items, v)
			continue
		}
		l.more++
	}
}

// Merge adds another list as an answer carried it: its items, and more,
// the count of those it did not keep.
func (l *List[T]) Merge(items []T, more int) {
	l.Add(items...)
	if more > 0 {
		l.more += more
	}
}

// Items is a copy of the items kept; nil when there are none.
func (l List[T]) Items() []T {
	if len(l.items) == 0 {
		return nil
	}
	return append([]T(nil), l.items...)
}

// More is how many items were added and not kept.
func (l List[T]) More() int { return l.more }

// Count is how many items were added, kept or not.
func (l List[T]) Count() int { return len(l.items) + l.more }

// Lines is a list of lines as a document shows it, at most Max lines:
// when some were not kept, the last is "(N more <what> not listed)" in
// place of the last one kept, so a reader knows it is incomplete, and by
// how much.
func Lines(l List[string], what string) []string {
	if l.more == 0 {
		return l.Items()
	}
	out := append([]string(nil), l.items[:Max-1]...)
	return append(out, fmt.Sprintf("(%d more %s not listed)", l.more+1, what))
}
