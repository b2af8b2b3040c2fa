// Package oneline flattens text for a one-line display (a table cell, a
// notice): the CLI's handoff list and the MCP server's handoff messages.
package oneline

// Cut turns newlines and tabs in s into spaces and keeps at most n runes,
// ending with "…" when it cut.
func Cut(s string, n int) string {
	r := []rune(s)
	for i, c := range r {
		if c == '\n' || c == '\r' || c == '\t' {
			r[i] = ' '
		}
	}
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return string(r)
}
