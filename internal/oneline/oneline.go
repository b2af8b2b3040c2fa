// Package oneline makes text that a model, a page or a signal wrote safe to
// show a person: a table cell or a line of the CLI, dev's terminal, the MCP
// server's handoff messages, and what a session keeps of a person's
// decision. Safe is the one rule of what may not reach a terminal as it
// came; Cut applies it and bounds the length.
package oneline

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Unsafe reports whether r acts on a terminal or reorders what it shows
// instead of showing as itself: a control character (C0, DEL, C1; ESC
// starts the sequences that move the cursor, colour or rewrite lines), a
// Unicode format character (Cf: the bidi overrides, embeddings and
// isolates such as U+202E, zero-width joiners, the byte order mark), or a
// line or paragraph separator (U+2028, U+2029).
func Unsafe(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
}

// Safe returns s with every Unsafe character replaced: tab, newline,
// carriage return and the line and paragraph separators by a space (the
// text stays one line, one table cell), every other one by '?'. Bytes
// that are not UTF-8 become U+FFFD.
func Safe(s string) string {
	if clean(s) {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r' || r == '\u2028' || r == '\u2029':
			return ' '
		case Unsafe(r):
			return '?'
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

// clean reports whether Safe leaves s as it is.
func clean(s string) bool {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return false
			}
		}
		if Unsafe(r) {
			return false
		}
	}
	return true
}

// Printable reports whether s holds no Unsafe character and is UTF-8:
// what a person may type where the text is repeated to others (who
// decided, their note).
func Printable(s string) bool { return clean(s) }

// Cut makes s Safe and keeps at most n runes, ending with "…" when it cut.
func Cut(s string, n int) string {
	r := []rune(Safe(s))
	if len(r) > n {
		return string(r[:max(n-1, 0)]) + "…"
	}
	return string(r)
}
