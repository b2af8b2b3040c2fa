package listed

import (
	"fmt"
	"testing"
)

func TestList(t *testing.T) {
	for _, tc := range []struct {
		add, more, wantKept, wantMore int
	}{
		{0, 0, 0, 0},
		{1, 0, 1, 0},
		{Max, 0, Max, 0},
		{Max + 1, 0, Max, 1},
		{70, 0, Max, 20},
		{10, 5, 10, 5},
		{60, -3, Max, 10}, // a negative count is no count
	} {
		var l List[int]
		items := make([]int, tc.add)
		for i := range items {
			items[i] = i
		}
		l.Merge(items, tc.more)
		if got := len(l.Items()); got != tc.wantKept || l.More() != tc.wantMore || l.Count() != tc.wantKept+tc.wantMore {
			t.Errorf("add %d, more %d: kept %d more %d count %d; want %d %d", tc.add, tc.more, got, l.More(), l.Count(), tc.wantKept, tc.wantMore)
		}
		if items := l.Items(); len(items) > 0 && items[0] != 0 {
			t.Errorf("the first items are kept: starts with %d", items[0])
		}
	}
	var l List[int]
	if l.Items() != nil {
		t.Error("an empty list's items are nil, so an answer omits them")
	}
	l.Add(1)
	l.Items()[0] = 9
	if l.Items()[0] != 1 {
		t.Error("Items is a copy")
	}
}

func TestLines(t *testing.T) {
	var l List[string]
	for i := range 70 {
		l.Add(fmt.Sprint("err ", i))
	}
	got := Lines(l, "console errors")
	if len(got) != Max || got[Max-2] != "err 48" || got[Max-1] != "(21 more console errors not listed)" {
		t.Fatalf("%d lines, last two %q", len(got), got[len(got)-2:])
	}
	var short List[string]
	short.Add("a", "b")
	if got := Lines(short, "x"); len(got) != 2 || got[1] != "b" {
		t.Fatalf("a whole list is shown whole: %q", got)
	}
}
