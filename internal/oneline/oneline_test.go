package oneline

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Safe leaves nothing that acts on a terminal or reorders text: C0 and C1
// controls, DEL, bidi overrides and isolates, zero-width and other format
// characters, line separators; and keeps one line.
func TestSafe(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text, é 日本 <b>&</b>", "plain text, é 日本 <b>&</b>"},
		{"ok\x1b[32m green\x1b[1A\x1b[2K", "ok?[32m green?[1A?[2K"},
		{"a\tb\nc\r\nd", "a b c  d"},
		{"\u202eevil\u202c \u2066x\u2069 \u200bz\u200d \ufeffbom", "?evil? ?x? ?z? ?bom"},
		{"bell\a del\x7f c1\u0085\u009b", "bell? del? c1??"},
		{"line\u2028para\u2029", "line para "},
		{"tag\U000e0041", "tag?"},
		{"bad\xffutf8", "bad\ufffdutf8"},
	} {
		got := Safe(tc.in)
		if got != tc.want {
			t.Errorf("Safe(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if !Printable(got) || !utf8.ValidString(got) {
			t.Errorf("Safe(%q) = %q is not printable", tc.in, got)
		}
		if Printable(tc.in) != (tc.in == tc.want) {
			t.Errorf("Printable(%q) = %v", tc.in, Printable(tc.in))
		}
	}
}

func TestCut(t *testing.T) {
	if got := Cut("a\nb\x1b[2J", 10); got != "a b?[2J" {
		t.Errorf("Cut = %q", got)
	}
	if got := Cut(strings.Repeat("日", 10), 4); got != "日日日…" {
		t.Errorf("Cut = %q", got)
	}
	if got := Cut("abc", 3); got != "abc" {
		t.Errorf("Cut = %q", got)
	}
}

func FuzzSafe(f *testing.F) {
	f.Add("ok\x1b[2J\u202e\n")
	f.Fuzz(func(t *testing.T, s string) {
		got := Safe(s)
		if !Printable(got) || strings.ContainsAny(got, "\n\r\t\x1b") {
			t.Fatalf("Safe(%q) = %q", s, got)
		}
		if Printable(s) && got != s {
			t.Fatalf("Safe changed printable %q to %q", s, got)
		}
		if c := Cut(s, 5); utf8.RuneCountInString(c) > 5 || !Printable(c) {
			t.Fatalf("Cut(%q, 5) = %q", s, c)
		}
	})
}
